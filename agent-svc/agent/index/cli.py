"""The operators' CLI of the vector index, a client of a running agent-svc:

    python -m agent.index.cli crawl URL --limit N     crawl a site into the index, with a progress bar
    python -m agent.index.cli urls FILE               index the pages listed in FILE (one URL a line), no links followed
    python -m agent.index.cli delete --host H         drop a host's pages from the index (or --url U: one page)
    python -m agent.index.cli stats                   what the index holds

`--agent` (or WISP_URL) names agent-svc, http://127.0.0.1:3002 by default; `--api-key` (or WISP_API_KEY) is
sent as a bearer token. Ctrl-C during a crawl cancels it.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import time
from pathlib import Path
from typing import Any

import httpx
from tqdm import tqdm

TERMINAL = ("completed", "failed", "cancelled")


def main(argv: list[str] | None = None) -> int:
    args = _parser().parse_args(argv)
    headers = {"Authorization": f"Bearer {args.api_key}"} if args.api_key else {}
    with httpx.Client(base_url=args.agent.rstrip("/"), headers=headers, timeout=60) as client:
        try:
            return args.run(args, client)
        except httpx.HTTPError as e:
            print(f"agent-svc at {args.agent} is unreachable: {type(e).__name__}: {e}", file=sys.stderr)
            return 2


def _crawl(args: argparse.Namespace, client: httpx.Client) -> int:
    body: dict[str, Any] = {"url": args.url, "limit": args.limit, "includePaths": args.include or [],
                            "excludePaths": args.exclude or [], "crawlEntireDomain": args.entire_domain}
    if args.depth is not None:
        body["maxDiscoveryDepth"] = args.depth
    return _follow(client, body)


def _urls(args: argparse.Namespace, client: httpx.Client) -> int:
    urls = [line.strip() for line in Path(args.file).read_text().splitlines()
            if line.strip() and not line.lstrip().startswith("#")]
    if not urls:
        print(f"{args.file} lists no URL", file=sys.stderr)
        return 1
    return _follow(client, {"url": urls[0], "urls": urls[1:], "limit": len(urls), "maxDiscoveryDepth": 0,
                            "sitemap": "skip"})


def _delete(args: argparse.Namespace, client: httpx.Client) -> int:
    target = {"host": args.host} if args.host else {"url": args.url}
    reply = _checked(client.post("/v2/index/delete", json=target))
    print(f"deleted {reply['deletedChunks']} chunks of {target}")
    return 0


def _stats(args: argparse.Namespace, client: httpx.Client) -> int:
    reply = _checked(client.get("/v2/index/stats"))
    reply.pop("success", None)
    print(json.dumps(reply, indent=2))
    return 0


def _follow(client: httpx.Client, body: dict[str, Any]) -> int:
    """Start the crawl, show its progress until it ends; Ctrl-C cancels it."""
    job_id = _checked(client.post("/v2/crawl", json=body))["id"]
    print(f"crawl {job_id} started", file=sys.stderr)
    status: dict[str, Any] = {}
    with tqdm(total=body["limit"], unit="page", desc="crawling") as bar:
        try:
            while status.get("status") not in TERMINAL:
                time.sleep(1)
                status = _checked(client.get(f"/v2/crawl/{job_id}", params={"limit": 1}))
                bar.total = max(status["total"], status["completed"], 1)
                bar.n = status["completed"]
                bar.set_postfix(indexed=status["index"]["indexed"], unchanged=status["index"]["unchanged"])
                bar.refresh()
        except KeyboardInterrupt:
            client.delete(f"/v2/crawl/{job_id}")
            print(f"\ncrawl {job_id} cancelled", file=sys.stderr)
            return 130
    index = status["index"]
    print(f"crawl {job_id} {status['status']}: {status['completed']} pages, {index['indexed']} indexed "
          f"({index['chunks']} chunks), {index['unchanged']} unchanged, {index['notIndexed']} not indexed")
    if status.get("warning"):
        print(f"warning: {status['warning']}", file=sys.stderr)
    return 0 if status["status"] == "completed" else 1


def _checked(response: httpx.Response) -> dict[str, Any]:
    try:
        payload = response.json()
    except ValueError:
        payload = {}
    if response.status_code != 200 or payload.get("success") is False:
        error = payload.get("error") or response.text[:300]
        raise SystemExit(f"agent-svc answered HTTP {response.status_code}: {error}")
    return payload


def _parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="python -m agent.index.cli", description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--agent", default=os.environ.get("WISP_URL", "http://127.0.0.1:3002"))
    parser.add_argument("--api-key", default=os.environ.get("WISP_API_KEY", ""))
    commands = parser.add_subparsers(required=True)
    crawl = commands.add_parser("crawl", help="crawl a site into the index")
    crawl.add_argument("url")
    crawl.add_argument("--limit", type=int, default=100, help="most pages (default 100)")
    crawl.add_argument("--depth", type=int, help="most link hops from the seed")
    crawl.add_argument("--include", action="append", help="RE2 pattern a followed path must match (repeatable)")
    crawl.add_argument("--exclude", action="append", help="RE2 pattern of paths not followed (repeatable)")
    crawl.add_argument("--entire-domain", action="store_true", help="not only the paths under the seed's")
    crawl.set_defaults(run=_crawl)
    urls = commands.add_parser("urls", help="index the pages listed in a file")
    urls.add_argument("file")
    urls.set_defaults(run=_urls)
    delete = commands.add_parser("delete", help="drop pages from the index")
    target = delete.add_mutually_exclusive_group(required=True)
    target.add_argument("--host")
    target.add_argument("--url")
    delete.set_defaults(run=_delete)
    stats = commands.add_parser("stats", help="what the index holds")
    stats.set_defaults(run=_stats)
    return parser


if __name__ == "__main__":
    sys.exit(main())
