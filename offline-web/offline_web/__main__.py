"""Command line: `python -m offline_web build|serve|demo --sites FILE`.

    build   download the packages of a sites file and index them (cached; prints the time taken)
    serve   serve the offline web, and with --searx a real searx in front of it
    demo    the offline web, searx, semantic-svc and agent-svc on loopback, with how to query them
"""

from __future__ import annotations

import argparse
import logging
import socket
import tempfile
import time
from pathlib import Path

from offline_web.processes import free_port
from offline_web.server import OfflineWeb
from offline_web.stack import offline_search_stack, prepare_index, wisp_stack

FIRECRAWL_PORT = 3002


def main() -> None:
    args = _parser().parse_args()
    logging.basicConfig(level=logging.INFO, format="%(message)s")
    if args.command == "build":
        started = time.monotonic()
        _, _, db = prepare_index(args.sites)
        print(f"index: {db} ({time.monotonic() - started:.1f} s)")
    elif args.command == "demo":
        _demo(args.sites)
    elif args.searx:
        with offline_search_stack(args.sites, args.workdir.resolve(), args.port, args.searx_port) as stack:
            print(f"offline web: {stack.web.url}\nsearx: {stack.searx.url}", flush=True)
            _wait_forever()
    else:
        sites, cache, db = prepare_index(args.sites)
        web = OfflineWeb(sites, cache, db, port=args.port)
        print(f"offline web: {web.url}", flush=True)
        web.serve_forever()


def _demo(sites: Path) -> None:
    port = FIRECRAWL_PORT if _port_is_free(FIRECRAWL_PORT) else free_port()
    with tempfile.TemporaryDirectory() as tmp, wisp_stack(sites, Path(tmp), with_semantic=True,
                                                          agent_port=port) as stack:
        agent = stack.agent.url
        print(f"""
Wisp is running on loopback, offline:
  agent-svc      {agent}   (Firecrawl's /v2/search and /v1/search)
  semantic-svc   {stack.semantic.url if stack.semantic else "-"}
  searx          {stack.offline.searx.url}
  offline web    {stack.offline.web.url}   (pages under /<host>/<path>, e.g. /www.sqlite.org/wal.html)

Try:
  curl -s {agent}/v2/search -H 'content-type: application/json' \\
       -d '{{"query": "sqlite wal checkpoint", "limit": 3}}'
  .venv/bin/python -c "from firecrawl import Firecrawl; print(Firecrawl(api_url='{agent}').search('git rebase'))"

Ctrl-C stops everything.""", flush=True)
        _wait_forever()


def _port_is_free(port: int) -> bool:
    with socket.socket() as s:
        return s.connect_ex(("127.0.0.1", port)) != 0


def _wait_forever() -> None:
    try:
        while True:
            time.sleep(3600)
    except KeyboardInterrupt:
        pass


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
    sub.add_parser("demo").add_argument("--sites", type=Path, required=True)
    return parser


if __name__ == "__main__":
    main()
