"""Command line: `python -m offline_web build|serve --sites FILE`."""

from __future__ import annotations

import argparse
import logging
import time
from pathlib import Path

from offline_web.server import OfflineWeb
from offline_web.stack import offline_search_stack, prepare_index


def main() -> None:
    parser = argparse.ArgumentParser(prog="offline_web", description=__doc__)
    sub = parser.add_subparsers(dest="command", required=True)
    build = sub.add_parser("build", help="download the packages of a sites file and index them")
    build.add_argument("--sites", type=Path, required=True)
    serve = sub.add_parser("serve", help="serve the offline web (and, with --searx, a searx in front of it)")
    serve.add_argument("--sites", type=Path, required=True)
    serve.add_argument("--port", type=int, default=0)
    serve.add_argument("--searx-port", type=int, default=None)
    serve.add_argument("--searx", action="store_true", help="also run Debian searx against the offline web")
    serve.add_argument("--workdir", type=Path, default=Path(".offline-web"))
    args = parser.parse_args()
    logging.basicConfig(level=logging.INFO, format="%(message)s")

    if args.command == "build":
        started = time.monotonic()
        _, _, db = prepare_index(args.sites)
        print(f"index: {db} ({time.monotonic() - started:.1f} s)")
    elif args.searx:
        with offline_search_stack(args.sites, args.workdir.resolve(), args.port, args.searx_port) as stack:
            print(f"offline web: {stack.web.url}\nsearx: {stack.searx.url}", flush=True)
            _wait_forever()
    else:
        sites, cache, db = prepare_index(args.sites)
        web = OfflineWeb(sites, cache, db, port=args.port)
        print(f"offline web: {web.url}", flush=True)
        web.serve_forever()


def _wait_forever() -> None:
    try:
        while True:
            time.sleep(3600)
    except KeyboardInterrupt:
        pass


if __name__ == "__main__":
    main()
