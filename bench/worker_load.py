"""Does agent-svc's extraction pool stay at its size under load, and give its memory back after?

Brings up the offline web, Debian searx, semantic-svc and agent-svc on loopback, runs `--clients` clients
mixing hybrid, semantic and keyword-with-markdown searches for `--seconds`, and counts agent-svc's
`agent.pages.worker` processes every second during the load and for `--after` seconds after it, with the resident
memory of agent-svc's session. Prints the peak, the count when the load ended, and how long it took to come
back to EXTRACT_WORKERS; writes JSON.

    .venv/bin/python bench/worker_load.py [--clients 10] [--seconds 120] [--deadline 8]
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import tempfile
import time
from pathlib import Path

from offline_web.load import extraction_workers, mixed_load
from offline_web.memory import session_rss_mib
from offline_web.stack import wisp_stack

ROOT = Path(__file__).parent.parent


async def measure(pid: int, agent_url: str, clients: int, seconds: float, after_s: float, workers: int) -> dict:
    samples: list[dict] = []
    began = time.monotonic()

    def sample() -> dict:
        samples.append({"t_s": round(time.monotonic() - began, 1), "workers": extraction_workers(pid),
                        "agent_mib": round(session_rss_mib(pid))})
        return samples[-1]

    async def sampler() -> None:
        while True:
            sample()
            await asyncio.sleep(1)

    sample()
    load = asyncio.create_task(mixed_load(agent_url, clients, seconds))
    sampling = asyncio.create_task(sampler())
    answers = await load
    sampling.cancel()
    ended = sample()
    settled_s = None
    while time.monotonic() - began - ended["t_s"] < after_s:
        now = sample()
        if settled_s is None and now["workers"] <= workers:
            settled_s = round(now["t_s"] - ended["t_s"], 1)
        await asyncio.sleep(1)
    return {"answers": dict(answers), "peak_workers": max(s["workers"] for s in samples),
            "workers_at_end_of_load": ended["workers"], "settled_after_s": settled_s,
            "workers_after": sample()["workers"], "peak_agent_mib": max(s["agent_mib"] for s in samples),
            "agent_mib_after": samples[-1]["agent_mib"], "samples": samples}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--clients", type=int, default=10)
    parser.add_argument("--seconds", type=float, default=120.0)
    parser.add_argument("--after", type=float, default=30.0, help="seconds counted after the load")
    parser.add_argument("--deadline", type=float, default=8.0, help="PIPELINE_DEADLINE_S")
    parser.add_argument("--workers", type=int, default=2, help="EXTRACT_WORKERS")
    parser.add_argument("--sites", type=Path, default=ROOT / "tests" / "fixtures" / "sites-mini.tsv")
    parser.add_argument("--out", type=Path, default=ROOT / "bench" / "results" / "worker_load.json")
    args = parser.parse_args()
    os.environ.setdefault("EMBED_CACHE_SIZE", "0")
    env = {"PIPELINE_DEADLINE_S": str(args.deadline), "EXTRACT_WORKERS": str(args.workers)}
    with tempfile.TemporaryDirectory() as tmp, \
            wisp_stack(args.sites, Path(tmp), with_semantic=True, agent_env=env) as stack:
        assert stack.agent.process is not None
        result = asyncio.run(measure(stack.agent.process.pid, stack.agent.url, args.clients, args.seconds,
                                     args.after, args.workers))
    print(f"\n{args.clients} clients, {args.seconds:g} s of mixed load, deadline {args.deadline:g} s, "
          f"EXTRACT_WORKERS={args.workers}")
    print(f"answers: {result['answers']}")
    print(f"agent.pages.worker processes: peak {result['peak_workers']}, at the end of the load "
          f"{result['workers_at_end_of_load']}, {args.after:g} s later {result['workers_after']} "
          f"(at most {args.workers} after {result['settled_after_s']} s)")
    print(f"agent-svc session MiB: peak {result['peak_agent_mib']}, {args.after:g} s after {result['agent_mib_after']}")
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_text(json.dumps({"args": vars(args) | {"sites": str(args.sites), "out": str(args.out)},
                                    **result}, indent=2))
    print(f"results: {args.out}")


if __name__ == "__main__":
    main()
