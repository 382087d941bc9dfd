"""Command line: `python -m offline_web build|serve|demo --sites FILE`, and `python -m offline_web run`.

    build   download the packages of a sites file and index them (cached; prints the time taken)
    serve   serve the offline web, and with --searx a real searx in front of it
    demo    the offline web, searx, semantic-svc, a small LLM and agent-svc on loopback, with how to query them
    run     Wisp on the real web (`make run`): searx with its internet engines (unless --searxng-url names a
            SearXNG you run), semantic-svc and agent-svc on loopback, with how to query them

Ctrl-C, SIGTERM and SIGHUP stop everything that was started.
"""

from __future__ import annotations

import argparse
import contextlib
import logging
import signal
import socket
import sys
import tempfile
import time
from pathlib import Path
from types import FrameType

from offline_web.processes import free_port
from offline_web.server import OfflineWeb
from offline_web.stack import local_stack, offline_search_stack, prepare_index, wisp_stack

FIRECRAWL_PORT = 3002
STOP_SIGNALS = (signal.SIGINT, signal.SIGTERM, signal.SIGHUP)


def main() -> None:
    args = _parser().parse_args()
    logging.basicConfig(level=logging.INFO, format="%(message)s")
    _stop_on_signals()
    with contextlib.suppress(KeyboardInterrupt):  # stopped as asked, and what it started stopped with it
        _command(args)


def _stop_on_signals() -> None:
    """SIGTERM and SIGHUP end the launcher as Ctrl-C does, by KeyboardInterrupt, so every `with` that started a
    service stops it (by default they would end the launcher at once and leave the services running). The
    first signal starts the stop; later ones are ignored, so that a second Ctrl-C cannot cut the cleanup short."""
    def stop(signum: int, _: FrameType | None) -> None:
        for each in STOP_SIGNALS:
            signal.signal(each, signal.SIG_IGN)
        print(f"\n{signal.Signals(signum).name}: stopping", file=sys.stderr, flush=True)
        raise KeyboardInterrupt

    for each in STOP_SIGNALS:
        signal.signal(each, stop)


def _command(args: argparse.Namespace) -> None:
    if args.command == "build":
        started = time.monotonic()
        _, _, db = prepare_index(args.sites)
        print(f"index: {db} ({time.monotonic() - started:.1f} s)")
    elif args.command == "demo":
        _demo(args.sites)
    elif args.command == "run":
        _run(args)
    elif args.searx:
        with offline_search_stack(args.sites, args.workdir.resolve(), args.port, args.searx_port,
                                  scripted_hosts=tuple(args.scripted_host)) as stack:
            print(f"offline web: {stack.web.url}\nsearx: {stack.searx.url}", flush=True)
            _wait_forever()
    else:
        sites, cache, db = prepare_index(args.sites)
        web = OfflineWeb(sites, cache, db, port=args.port, scripted_hosts=tuple(args.scripted_host))
        print(f"offline web: {web.url}", flush=True)
        web.serve_forever()


def _demo(sites: Path) -> None:
    port = FIRECRAWL_PORT if _port_is_free(FIRECRAWL_PORT) else free_port()
    with tempfile.TemporaryDirectory() as tmp, wisp_stack(sites, Path(tmp), with_semantic=True, with_llm=True,
                                                          agent_port=port) as stack:
        agent = stack.agent.url
        print(f"""
Wisp is running on loopback, offline:
  agent-svc      {agent}   (Firecrawl's /v2/search and /v1/search)
  semantic-svc   {stack.semantic.url if stack.semantic else "-"}
  LLM            {stack.llm.url if stack.llm else "-"}/v1   (SmolLM2-135M-Instruct: rich answers, weak prose)
  searx          {stack.offline.searx.url}
  offline web    {stack.offline.web.url}   (pages under /<host>/<path>, e.g. /www.sqlite.org/wal.html)
{_usage(agent, rich=True)}""", flush=True)
        _wait_forever()


def _run(args: argparse.Namespace) -> None:
    args.workdir.mkdir(parents=True, exist_ok=True)
    with local_stack(args.workdir.resolve(), args.searxng_url, args.agent_port, args.semantic_port,
                     args.searx_port) as stack:
        searx = "searx (Debian, its internet engines)" if stack.searx else "SearXNG (yours)"
        print(f"""
Wisp is running on loopback:
  agent-svc      {stack.agent.url}   (Firecrawl's API: /v2/search, /v1/search, /v2/crawl, ...)
  semantic-svc   {stack.semantic.url}
  {searx:<38} {stack.searxng_url}
  logs           {args.workdir}/
{_usage(stack.agent.url)}""", flush=True)
        _wait_forever()


def _usage(agent: str, rich: bool = False) -> str:
    """How to query `agent`; `rich`: a rich answer too (where an LLM runs)."""
    tries = [
        f"""curl -s {agent}/v2/search -H 'content-type: application/json' \\
       -d '{{"query": "sqlite wal checkpoint", "limit": 3}}'""",
        f".venv/bin/python -c \"from firecrawl import Firecrawl; "
        f"print(Firecrawl(api_url='{agent}').search('git rebase'))\"",
    ]
    if rich:
        tries.append(f"""curl -s {agent}/v2/search -H 'content-type: application/json' \\
       -d '{{"query": "how do I squash my last commits in git", "search_type": "rich", "limit": 3}}'""")
    return "\nTry:\n" + "\n".join(f"  {each}" for each in tries) + "\n\nCtrl-C (or SIGTERM) stops everything."


def _port_is_free(port: int) -> bool:
    with socket.socket() as s:
        return s.connect_ex(("127.0.0.1", port)) != 0


def _wait_forever() -> None:
    while True:
        time.sleep(3600)


def _parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="python -m offline_web", description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    sub = parser.add_subparsers(dest="command", required=True)
    sub.add_parser("build").add_argument("--sites", type=Path, required=True)
    serve = sub.add_parser("serve")
    serve.add_argument("--sites", type=Path, required=True)
    serve.add_argument("--port", type=int, default=0)
    serve.add_argument("--searx", action="store_true", help="also run Debian searx against the offline web")
    serve.add_argument("--searx-port", type=int, default=None)
    serve.add_argument("--workdir", type=Path, default=Path(".offline-web"))
    serve.add_argument("--scripted-host", action="append", default=[], metavar="HOST",
                       help="serve this host's HTML pages as shells a script fills in (repeatable)")
    sub.add_parser("demo").add_argument("--sites", type=Path, required=True)
    run = sub.add_parser("run")
    run.add_argument("--searxng-url", default="", help="a SearXNG you run (JSON on, limiter off); none: start searx")
    run.add_argument("--agent-port", type=int, default=FIRECRAWL_PORT)
    run.add_argument("--semantic-port", type=int, default=8081)
    run.add_argument("--searx-port", type=int, default=8888)
    run.add_argument("--workdir", type=Path, default=Path(".wisp-run"), help="logs and searx's settings")
    return parser


if __name__ == "__main__":
    main()
