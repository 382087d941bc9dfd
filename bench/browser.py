"""What rendering pages in headless Chromium costs agent-svc: time per page against the HTTP fetch, the browser's
memory under load for each BROWSER_MAX_PAGES, and crawl throughput for each RENDER.

Brings up the offline web (real pages of www.sqlite.org and git-scm.com from the sites file), a real searx and
agent-svc processes on loopback (no semantic-svc: nothing here is ranked or indexed), then:

1. render cost: `--pages` pages, each POST /v2/scrape {formats: [markdown], maxAge: 0} in turn to an agent with
   RENDER=never (HTTP) and one with RENDER=always (browser), interleaved page by page so that a change in the
   machine's load falls on both; p50/p95 of each and the ratio of medians. The first scrape of each agent (a page
   outside the measured ones) is reported apart: for the browser it includes starting Chromium (cold).
2. memory and throughput: for each BROWSER_MAX_PAGES of `--max-pages`, a fresh agent with RENDER=always renders one
   page and idles a second (the base: Chromium plus the Playwright driver, the RSS of every descendant of agent-svc
   whose argv0 names chromium or /playwright/driver/), then `--clients` clients scrape back to back for `--seconds`
   while that RSS is sampled every 0.2 s: pages/s, p50/p95, peak and mean browser RSS, per-page memory
   ((peak - base) / BROWSER_MAX_PAGES), the same in PSS (a page shared by Chromium's processes counted once, not
   once per process as in the RSS sum), and agent-svc's own RSS (its uvicorn process).
3. crawl: POST /v2/crawl {limit: `--crawl-limit`, scrapeOptions.maxAge: 0} from `--seed`, polled until completed,
   with RENDER=never, auto and always (`--crawl-repeats` each, alternating): pages/s, pages rendered (the agent's
   /metrics renders delta), mean markdown length per page. Then the same over a web whose `--seed` host serves
   every page as a shell a script fills in (`--no-scripted` skips it): there auto should render what always
   does, and never reads empty shells.

Every agent has CRAWL_HOST_DELAY_S=0 and the default CRAWL_HOST_CONCURRENCY (2). Beside the results: the machine
(CPUs, load average before and after), the Chromium and Playwright versions, and what else ran: the CPU that
processes other than this benchmark's used meanwhile, and the busiest of them. Prints tables and writes JSON:

    .venv/bin/python bench/browser.py [--sites tests/fixtures/sites-mini.tsv] [--pages 20] [--seconds 30] \
        [--clients 10] [--max-pages 2,4,8] [--crawl-limit 20] [--crawl-repeats 2] [--seed www.sqlite.org/wal.html] \
        [--no-scripted] [--out bench/results/browser.json]
"""

from __future__ import annotations

import argparse
import asyncio
import importlib.metadata
import itertools
import json
import os
import re
import statistics
import subprocess
import tempfile
import threading
import time
from contextlib import ExitStack
from pathlib import Path

import httpx

from agent.pages.browser.processes import argv0, pss_mb
from agent.pages.browser.settings import BrowserSettings
from offline_web.corpus import site_dir
from offline_web.processes import Service
from offline_web.sites import load_sites
from offline_web.stack import OfflineStack, offline_search_stack, uvicorn_service

ROOT = Path(__file__).parent.parent
CHROMIUM = "/usr/bin/chromium"
HOSTS = ("www.sqlite.org", "git-scm.com")
POLL_S = 0.05  # a crawl of 20 pages over HTTP takes about half a second
SAMPLE_S = 0.2
_METRIC = re.compile(r'^(wisp_agent_browser_(?:renders_total|starts_total))(?:\{outcome="(\w+)"\})? ([0-9.e+]+)$',
                     re.MULTILINE)


# --- the processes: memory and CPU, read from /proc ---

def _processes() -> dict[int, tuple[int, int]]:
    """Every process: its parent and the CPU ticks it used (user and system)."""
    found = {}
    for entry in os.scandir("/proc"):
        if entry.name.isdigit():
            try:
                with open(f"/proc/{entry.name}/stat") as stat:
                    fields = stat.read().rsplit(")", 1)[1].split()
            except OSError:  # it ended meanwhile
                continue
            found[int(entry.name)] = (int(fields[1]), int(fields[11]) + int(fields[12]))
    return found


def descendants(root: int, processes: dict[int, tuple[int, int]] | None = None) -> set[int]:
    processes = _processes() if processes is None else processes
    found, grown = {root}, True
    while grown:
        more = {pid for pid, (parent, _) in processes.items() if parent in found} - found
        found |= more
        grown = bool(more)
    return found - {root}


def _command(pid: int) -> str:
    """Its command line, or [its name] for a kernel thread."""
    try:
        command = Path(f"/proc/{pid}/cmdline").read_bytes().replace(b"\0", b" ").decode(errors="replace").strip()
        return command[:160] or f"[{Path(f'/proc/{pid}/comm').read_text().strip()}]"
    except OSError:
        return "?"


def rss_mb(pid: int) -> float:
    try:
        return int(Path(f"/proc/{pid}/statm").read_text().split()[1]) * os.sysconf("SC_PAGE_SIZE") / 2**20
    except (OSError, IndexError, ValueError):
        return 0.0


def memory(agent_pid: int) -> dict[str, float]:
    """RSS in MB of the browser (Chromium and the Playwright driver under agent-svc; the sum counts a page shared
    by its processes once per process) and its PSS (each shared page counted once in all: what agent-svc compares
    with BROWSER_MAX_RSS_MB), of agent-svc's own process, and of its other children (extraction workers)."""
    browser = browser_pss = others = 0.0
    for pid in descendants(agent_pid):
        argv = argv0(pid)
        if "chromium" in argv or "/playwright/driver/" in argv:
            browser += rss_mb(pid)
            browser_pss += pss_mb(pid)
        else:
            others += rss_mb(pid)
    return {"browser_mb": browser, "browser_pss_mb": browser_pss, "agent_mb": rss_mb(agent_pid),
            "workers_mb": others}


class Sampler(threading.Thread):
    """memory(agent_pid) every SAMPLE_S until stopped."""

    def __init__(self, agent_pid: int) -> None:
        super().__init__(daemon=True)
        self.agent_pid, self.samples, self._stop_event = agent_pid, [], threading.Event()

    def run(self) -> None:
        while not self._stop_event.is_set():
            self.samples.append(memory(self.agent_pid))
            self._stop_event.wait(SAMPLE_S)

    def stop(self) -> list[dict[str, float]]:
        self._stop_event.set()
        self.join()
        return self.samples


class OtherProcesses(threading.Thread):
    """The CPU that processes other than this benchmark's (it and everything it started) used while it ran,
    sampled every second: in all, in cores, and the busiest of them. Chromium and Playwright processes outside
    this benchmark's tree are counted apart: those of a stopped agent-svc outlive it for a moment, orphaned."""

    def __init__(self) -> None:
        super().__init__(daemon=True)
        self.ticks, self.began = os.sysconf("SC_CLK_TCK"), time.monotonic()
        self.used: dict[int, float] = {}  # pid: CPU seconds while this ran
        self.commands: dict[int, str] = {}
        self._stop_event = threading.Event()

    def _times(self) -> dict[int, int]:
        processes = _processes()
        ours = descendants(os.getpid(), processes) | {os.getpid()}
        return {pid: ticks for pid, (_, ticks) in processes.items() if pid not in ours}

    def run(self) -> None:
        previous = self._times()
        while not self._stop_event.wait(1.0):
            now = self._times()
            for pid, ticks in now.items():
                if ticks > previous.get(pid, 0):  # one that started meanwhile: all of its time
                    self.used[pid] = self.used.get(pid, 0.0) + (ticks - previous.get(pid, 0)) / self.ticks
                    if pid not in self.commands:
                        self.commands[pid] = _command(pid)
            previous = now

    def stop(self) -> dict:
        self._stop_event.set()
        self.join()
        elapsed = time.monotonic() - self.began
        browsers = {pid for pid, command in self.commands.items()
                    if "chromium" in command.split(" ", 1)[0] or "/playwright/driver/" in command}
        busiest = sorted(((s, self.commands.get(pid, "?")) for pid, s in self.used.items() if pid not in browsers),
                         reverse=True)[:5]
        return {"cpu_cores": round(sum(s for pid, s in self.used.items() if pid not in browsers) / elapsed, 2),
                "orphaned_browser_cpu_cores": round(sum(self.used.get(pid, 0.0) for pid in browsers) / elapsed, 2),
                "busiest": [{"cpu_s": round(s, 1), "command": command} for s, command in busiest]}


# --- the agents and their requests ---

def agent_service(name: str, offline: OfflineStack, workdir: Path, **env: str) -> Service:
    """agent-svc on the offline web (as tests/integration/conftest.py's), with files of its own."""
    return uvicorn_service(name, "agent.app:app", workdir, {
        "SEARXNG_URL": offline.searx.url, "FETCH_ALLOW_HOSTS": "127.0.0.1", "CRAWL_HOST_DELAY_S": "0",
        "CRAWL_DB": str(workdir / f"{name}.sqlite"), "RESEARCH_DB": str(workdir / f"{name}-research.sqlite"),
        "PAGE_CACHE_DIR": str(workdir / f"{name}-pages"), **env})


def page_urls(offline: OfflineStack, sites_path: Path, count: int) -> list[str]:
    """`count` pages of HOSTS, taking from each site in turn."""
    per_site = []
    for site in load_sites(sites_path):
        if site.host in HOSTS:
            root = site_dir(offline.web.cache, site)
            pages = sorted(str(p.relative_to(root)) for p in root.rglob("*.html"))
            per_site.append([f"{offline.web.url}/{site.prefix}/{page}" for page in pages if site.includes(page)])
    mixed = [url for urls in itertools.zip_longest(*per_site) for url in urls if url]
    return mixed[:count]


def scrape(client: httpx.Client, agent: str, url: str) -> tuple[float, int | None]:
    """(ms, markdown length) of one scrape; None for the length when it failed."""
    started = time.perf_counter()
    response = client.post(f"{agent}/v2/scrape", json={"url": url, "formats": ["markdown"], "maxAge": 0})
    ms = (time.perf_counter() - started) * 1000
    ok = response.status_code == 200 and response.json().get("success")
    return ms, len(response.json()["data"].get("markdown") or "") if ok else None


def browser_metrics(client: httpx.Client, agent: str) -> dict[str, float]:
    """wisp_agent_browser_renders_total by outcome, and starts_total as "starts"."""
    return {(outcome or "starts"): float(value) for _, outcome, value in _METRIC.findall(client.get(
        f"{agent}/metrics").text)}


def delta(after: dict[str, float], before: dict[str, float]) -> dict[str, int]:
    return {k: round(v - before.get(k, 0)) for k, v in after.items() if round(v - before.get(k, 0))}


def percentiles(ms: list[float]) -> dict[str, float | None]:
    ms = sorted(ms)
    return {"p50_ms": round(statistics.median(ms)) if ms else None,
            "p95_ms": round(ms[int(0.95 * (len(ms) - 1))]) if ms else None}


# --- 1. render cost per page ---

def render_cost(client: httpx.Client, agents: dict[str, str], urls: list[str], cold_url: str) -> dict:
    cold = {how: scrape(client, agent, cold_url)[0] for how, agent in agents.items()}
    times: dict[str, list[float]] = {how: [] for how in agents}
    lengths: dict[str, list[int]] = {how: [] for how in agents}
    for i, url in enumerate(urls):
        for how in (list(agents) if i % 2 == 0 else list(reversed(agents))):
            ms, length = scrape(client, agents[how], url)
            if length is not None:
                times[how].append(ms)
                lengths[how].append(length)
    rows = {how: {"pages": len(urls), "ok": len(times[how]), **percentiles(times[how]),
                  "first_ms": round(cold[how]), "mean_markdown_chars": round(statistics.fmean(lengths[how] or [0]))}
            for how in agents}
    http, browser = rows["http"]["p50_ms"], rows["browser"]["p50_ms"]
    return {"rows": rows, "median_ratio": round(browser / http, 1) if http and browser else None}


# --- 2. memory and throughput under concurrent load ---

async def load(agent: str, urls: list[str], clients: int, seconds: float) -> tuple[list[float], int, float]:
    """(latencies of the pages scraped, errors, elapsed s) of `clients` scraping back to back for `seconds`."""
    pages, stop, latencies, errors = itertools.cycle(urls), time.monotonic() + seconds, [], 0

    async def client_loop(client: httpx.AsyncClient) -> None:
        nonlocal errors
        while time.monotonic() < stop:
            started = time.perf_counter()
            try:
                response = await client.post(f"{agent}/v2/scrape",
                                             json={"url": next(pages), "formats": ["markdown"], "maxAge": 0})
                ok = response.status_code == 200 and bool(response.json()["data"].get("markdown"))
            except httpx.HTTPError:
                ok = False
            if ok:
                latencies.append((time.perf_counter() - started) * 1000)
            else:
                errors += 1

    began = time.monotonic()
    limits = httpx.Limits(max_connections=clients, max_keepalive_connections=clients)
    async with httpx.AsyncClient(timeout=120, limits=limits) as client:
        await asyncio.gather(*(client_loop(client) for _ in range(clients)))
    return latencies, errors, time.monotonic() - began


def under_load(offline: OfflineStack, workdir: Path, urls: list[str], max_pages: int, clients: int,
               seconds: float) -> dict:
    with agent_service(f"agent-max{max_pages}", offline, workdir, RENDER="always",
                       BROWSER_MAX_PAGES=str(max_pages)) as agent, httpx.Client(timeout=120) as client:
        assert agent.process is not None
        scrape(client, agent.url, urls[0])
        time.sleep(1)
        base = memory(agent.process.pid)
        before = browser_metrics(client, agent.url)
        sampler = Sampler(agent.process.pid)
        sampler.start()
        latencies, errors, elapsed = asyncio.run(load(agent.url, urls, clients, seconds))
        samples = sampler.stop()
        renders = delta(browser_metrics(client, agent.url), before)
    peak, peak_pss = max(s["browser_mb"] for s in samples), max(s["browser_pss_mb"] for s in samples)
    return {"max_pages": max_pages, "clients": clients, "pages": len(latencies), "errors": errors,
            "elapsed_s": round(elapsed, 1), "pages_per_s": round(len(latencies) / elapsed, 2),
            **percentiles(latencies), "base_browser_mb": round(base["browser_mb"]), "peak_browser_mb": round(peak),
            "mean_browser_mb": round(statistics.fmean(s["browser_mb"] for s in samples)),
            "per_page_mb": round((peak - base["browser_mb"]) / max_pages, 1),
            "base_browser_pss_mb": round(base["browser_pss_mb"]), "peak_browser_pss_mb": round(peak_pss),
            "per_page_pss_mb": round((peak_pss - base["browser_pss_mb"]) / max_pages, 1),
            "base_agent_mb": round(base["agent_mb"]), "peak_agent_mb": round(max(s["agent_mb"] for s in samples)),
            "peak_workers_mb": round(max(s["workers_mb"] for s in samples)), "samples": len(samples),
            "renders": renders, "load_1m_after": round(os.getloadavg()[0], 2)}


# --- 3. crawls ---

def crawl(client: httpx.Client, agent: str, seed: str, limit: int) -> dict:
    before = browser_metrics(client, agent)
    started = time.monotonic()
    job = client.post(f"{agent}/v2/crawl", json={"url": seed, "limit": limit, "scrapeOptions": {
        "formats": ["markdown"], "maxAge": 0}}).json()
    while (status := client.get(f"{agent}/v2/crawl/{job['id']}", params={"limit": 1}).json())["status"] == "scraping":
        time.sleep(POLL_S)
    wall = time.monotonic() - started
    lengths, skip = [], 0
    while page := client.get(f"{agent}/v2/crawl/{job['id']}", params={"skip": skip, "limit": 100}).json()["data"]:
        lengths += [len(d.get("markdown") or "") for d in page]
        skip += len(page)
    renders = delta(browser_metrics(client, agent), before)
    return {"status": status["status"], "pages": len(lengths), "wall_s": round(wall, 2),
            "pages_per_s": round(len(lengths) / wall, 2),
            "rendered": sum(n for outcome, n in renders.items() if outcome != "starts"),
            "renders": renders, "mean_markdown_chars": round(statistics.fmean(lengths or [0])),
            "empty_pages": sum(n < 200 for n in lengths)}


def crawls(offline: OfflineStack, web: str, seed: str, limit: int, agents: dict[str, str], client: httpx.Client,
           repeats: int) -> list[dict]:
    """`repeats` crawls with each agent, their order alternating; each agent first scrapes a shell (its workers
    warmed, and Chromium started where it renders, so that no crawl starts it) and a second passes."""
    for agent in agents.values():
        scrape(client, agent, f"{offline.web.url}/_test/js/inserted")
    time.sleep(1)
    rows = []
    for repeat in range(repeats):
        for render in (list(agents) if repeat % 2 == 0 else list(reversed(agents))):
            rows.append({"web": web, "render": render, "repeat": repeat, "seed": seed, "limit": limit,
                         **crawl(client, agents[render], f"{offline.web.url}/{seed}", limit)})
            print(f"crawl {web} RENDER={render}: {rows[-1]['pages']} pages, {rows[-1]['pages_per_s']} pages/s",
                  flush=True)
    return rows


def render_agents(offline: OfflineStack, workdir: Path, running: ExitStack, modes: tuple[str, ...]) -> dict[str, str]:
    return {mode: running.enter_context(agent_service(f"agent-{workdir.name}-{mode}", offline, workdir,
                                                      RENDER=mode)).url for mode in modes}


# --- the run ---

def versions() -> dict:
    """The machine, the browser, and the browser settings the agents ran with where a run set none (BROWSER_MAX_PAGES
    in the render cost and the crawls)."""
    chromium = subprocess.run([CHROMIUM, "--version"], capture_output=True, text=True).stdout.strip()
    return {"chromium": chromium, "playwright": importlib.metadata.version("playwright"), "cpus": os.cpu_count(),
            "memory_mb": os.sysconf("SC_PHYS_PAGES") * os.sysconf("SC_PAGE_SIZE") // 2**20,
            "browser_settings": BrowserSettings().model_dump(exclude={"render"})}


def run(args: argparse.Namespace, max_pages: list[int]) -> dict:
    results: dict = {"render_cost": {}, "under_load": [], "crawl": []}
    with tempfile.TemporaryDirectory(prefix="wisp-browser-bench-") as tmp, httpx.Client(timeout=120) as client:
        workdir = Path(tmp)
        with offline_search_stack(args.sites, workdir / "web") as offline:
            urls = page_urls(offline, args.sites, args.pages)
            print(f"{len(urls)} pages of {', '.join(HOSTS)}", flush=True)
            with ExitStack() as running:
                agents = render_agents(offline, workdir / "normal", running, ("never", "auto", "always"))
                cold_url = f"{offline.web.url}/_test/js/inserted"
                results["render_cost"] = render_cost(client, {"http": agents["never"], "browser": agents["always"]},
                                                     urls, cold_url)
                print_render_cost(results["render_cost"])
                results["crawl"] += crawls(offline, "normal", args.seed, args.crawl_limit, agents, client,
                                           args.crawl_repeats)
            for n in max_pages:
                results["under_load"].append(under_load(offline, workdir / "load", urls, n, args.clients,
                                                        args.seconds))
                row = results["under_load"][-1]
                print(f"BROWSER_MAX_PAGES={n}: {row['pages_per_s']} pages/s, peak {row['peak_browser_mb']} MB",
                      flush=True)
        if args.scripted:
            host = args.seed.split("/", 1)[0]
            with offline_search_stack(args.sites, workdir / "scripted-web", scripted_hosts=(host,)) as offline, \
                    ExitStack() as running:
                agents = render_agents(offline, workdir / "scripted", running, ("never", "auto", "always"))
                results["crawl"] += crawls(offline, f"scripted {host}", args.seed, args.crawl_limit, agents,
                                           client, args.crawl_repeats)
    return results


def print_render_cost(cost: dict) -> None:
    print("\n| fetch | pages | ok | first (cold) ms | p50 ms | p95 ms | markdown chars (mean) |\n"
          "|---|---|---|---|---|---|---|")
    for how, r in cost["rows"].items():
        print(f"| {how} | {r['pages']} | {r['ok']} | {r['first_ms']} | {r['p50_ms']} | {r['p95_ms']} "
              f"| {r['mean_markdown_chars']} |")
    print(f"\nbrowser / HTTP, medians: {cost['median_ratio']}x\n", flush=True)


def print_tables(results: dict) -> None:
    print_render_cost(results["render_cost"])
    print("| BROWSER_MAX_PAGES | clients | pages | errors | pages/s | p50 ms | p95 ms | browser RSS MB: base "
          "| peak | mean | per page | browser PSS MB: base, peak, per page | agent-svc MB (base, peak) "
          "| workers MB | renders |\n|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|")
    for r in results["under_load"]:
        print(f"| {r['max_pages']} | {r['clients']} | {r['pages']} | {r['errors']} | {r['pages_per_s']} "
              f"| {r['p50_ms']} | {r['p95_ms']} | {r['base_browser_mb']} | {r['peak_browser_mb']} "
              f"| {r['mean_browser_mb']} | {r['per_page_mb']} "
              f"| {r['base_browser_pss_mb']}, {r['peak_browser_pss_mb']}, {r['per_page_pss_mb']} "
              f"| {r['base_agent_mb']}, {r['peak_agent_mb']} | {r['peak_workers_mb']} | {r['renders']} |")
    print("\n| web | RENDER | pages | wall s (runs) | pages/s (median) | rendered | markdown chars (mean) "
          "| pages under 200 chars |\n|---|---|---|---|---|---|---|---|")
    for key in dict.fromkeys((r["web"], r["render"]) for r in results["crawl"]):
        runs = [r for r in results["crawl"] if (r["web"], r["render"]) == key]
        walls, rendered = ", ".join(f"{r['wall_s']:g}" for r in runs), ", ".join(str(r["rendered"]) for r in runs)
        print(f"| {key[0]} | {key[1]} | {', '.join(str(r['pages']) for r in runs)} | {walls} "
              f"| {statistics.median(r['pages_per_s'] for r in runs):.2f} | {rendered} "
              f"| {runs[-1]['mean_markdown_chars']} | {runs[-1]['empty_pages']} |")
        assert all(r["status"] == "completed" for r in runs), runs


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--sites", type=Path, default=ROOT / "tests" / "fixtures" / "sites-mini.tsv")
    parser.add_argument("--pages", type=int, default=20, help="pages scraped by each agent in the render cost")
    parser.add_argument("--seconds", type=float, default=30.0, help="of load, for each BROWSER_MAX_PAGES")
    parser.add_argument("--clients", type=int, default=10)
    parser.add_argument("--max-pages", default="2,4,8", help="BROWSER_MAX_PAGES values, comma-separated")
    parser.add_argument("--crawl-limit", type=int, default=20)
    parser.add_argument("--crawl-repeats", type=int, default=2, help="crawls of each RENDER on each web")
    parser.add_argument("--seed", default="www.sqlite.org/wal.html", help="the crawls' seed, on the offline web")
    parser.add_argument("--no-scripted", dest="scripted", action="store_false",
                        help="skip the crawls over a web whose seed host serves its pages as script-filled shells")
    parser.add_argument("--out", type=Path, default=ROOT / "bench" / "results" / "browser.json")
    args = parser.parse_args()
    max_pages = [int(n) for n in args.max_pages.split(",")]
    load_before, began, others = [round(x, 2) for x in os.getloadavg()], time.monotonic(), OtherProcesses()
    print(f"load average at the start: {load_before} on {os.cpu_count()} CPUs", flush=True)
    others.start()
    results = run(args, max_pages)
    meanwhile, load_after = others.stop(), [round(x, 2) for x in os.getloadavg()]
    print()
    print_tables(results)
    busiest = ", ".join(f"{b['command'][:60]} {b['cpu_s']} s" for b in meanwhile["busiest"][:3]) or "none"
    print(f"\nload average: {load_before} at the start, {load_after} at the end; other processes used "
          f"{meanwhile['cpu_cores']} cores meanwhile (the busiest: {busiest}); {time.monotonic() - began:.0f} s")
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_text(json.dumps({
        "args": {"sites": str(args.sites), "pages": args.pages, "seconds": args.seconds, "clients": args.clients,
                 "max_pages": max_pages, "crawl_limit": args.crawl_limit,
                 "crawl_repeats": args.crawl_repeats, "seed": args.seed,
                 "scripted": args.scripted},
        "machine": {**versions(), "load_average_before": load_before, "load_average_after": load_after,
                    "other_processes": meanwhile, "wall_s": round(time.monotonic() - began)},
        **results}, indent=1))
    print(f"results: {args.out}")


if __name__ == "__main__":
    main()
