"""The operators' CLI (agent.index.cli) against a tiny agent-svc played through httpx.MockTransport."""

import json
from pathlib import Path
from typing import Any

import httpx
import pytest

from agent.index import cli as index

AGENT = "http://agent.test"
RealClient = httpx.Client


class FakeAgent:
    """agent-svc's crawl and index routes: a crawl reports `statuses` one poll at a time (the last one repeats)."""

    def __init__(self, statuses: list[dict[str, Any]] | None = None, crawl_reply: httpx.Response | None = None,
                 down: bool = False) -> None:
        self.statuses = statuses or [progress("scraping", 1), progress("completed", 4)]
        self.crawl_reply, self.down = crawl_reply, down
        self.requests: list[httpx.Request] = []
        self.polls = 0

    def handle(self, request: httpx.Request) -> httpx.Response:
        self.requests.append(request)
        if self.down:
            raise httpx.ConnectError("connection refused", request=request)
        route = (request.method, request.url.path)
        if route == ("POST", "/v2/crawl"):
            return self.crawl_reply or httpx.Response(200, json={"success": True, "id": "job1",
                                                                 "url": f"{AGENT}/v2/crawl/job1"})
        if route == ("GET", "/v2/crawl/job1"):
            self.polls += 1
            return httpx.Response(200, json=self.statuses[min(self.polls, len(self.statuses)) - 1])
        if route == ("DELETE", "/v2/crawl/job1"):
            return httpx.Response(200, json={"status": "cancelled"})
        if route == ("GET", "/v2/index/stats"):
            return httpx.Response(200, json={"success": True, "documents": 3, "chunks": 9})
        if route == ("POST", "/v2/index/delete"):
            return httpx.Response(200, json={"success": True, "deletedChunks": 4})
        return httpx.Response(404, json={"success": False, "error": "no route"})

    def sent(self, method: str, path: str) -> list[httpx.Request]:
        return [r for r in self.requests if (r.method, r.url.path) == (method, path)]


def progress(status: str, completed: int, **more: Any) -> dict[str, Any]:
    return {"success": True, "status": status, "total": 4, "completed": completed, "data": [],
            "index": {"indexed": completed - 1, "unchanged": 1, "chunks": 12, "notIndexed": 0}, **more}


@pytest.fixture
def sleeps(monkeypatch: pytest.MonkeyPatch) -> list[float]:
    """No real pause between polls; each one asked for is recorded."""
    asked: list[float] = []
    monkeypatch.setattr(index.time, "sleep", asked.append)
    return asked


def serve(monkeypatch: pytest.MonkeyPatch, agent: FakeAgent) -> FakeAgent:
    def client(**options: Any) -> httpx.Client:
        return RealClient(transport=httpx.MockTransport(agent.handle), **options)

    monkeypatch.setattr(index.httpx, "Client", client)
    return agent


def run(*argv: str) -> int:
    return index.main(["--agent", f"{AGENT}/", *argv])


def test_crawl_starts_the_crawl_follows_it_and_reports(monkeypatch: pytest.MonkeyPatch, sleeps: list[float],
                                                      capsys: pytest.CaptureFixture[str]) -> None:
    agent = serve(monkeypatch, FakeAgent())
    assert run("crawl", "https://docs.test/guide/", "--limit", "5", "--depth", "2", "--include", "^/guide/",
               "--include", "^/api/", "--exclude", "secret", "--entire-domain") == 0
    [started] = agent.sent("POST", "/v2/crawl")
    assert json.loads(started.content) == {"url": "https://docs.test/guide/", "limit": 5,
                                           "includePaths": ["^/guide/", "^/api/"], "excludePaths": ["secret"],
                                           "crawlEntireDomain": True, "maxDiscoveryDepth": 2}
    polls = agent.sent("GET", "/v2/crawl/job1")
    assert len(polls) == 2 and all(p.url.params["limit"] == "1" for p in polls) and sleeps == [1, 1]
    out, err = capsys.readouterr()
    assert out == "crawl job1 completed: 4 pages, 3 indexed (12 chunks), 1 unchanged, 0 not indexed\n"
    assert "crawl job1 started" in err and "warning" not in err


def test_crawl_defaults_send_no_depth(monkeypatch: pytest.MonkeyPatch, sleeps: list[float]) -> None:
    agent = serve(monkeypatch, FakeAgent())
    assert run("crawl", "https://docs.test/") == 0
    body = json.loads(agent.sent("POST", "/v2/crawl")[0].content)
    assert body == {"url": "https://docs.test/", "limit": 100, "includePaths": [], "excludePaths": [],
                    "crawlEntireDomain": False}


def test_a_failed_crawl_exits_1_with_its_warning(monkeypatch: pytest.MonkeyPatch, sleeps: list[float],
                                                 capsys: pytest.CaptureFixture[str]) -> None:
    serve(monkeypatch, FakeAgent([progress("failed", 2, warning="the crawl failed: RuntimeError: boom")]))
    assert run("crawl", "https://docs.test/") == 1
    out, err = capsys.readouterr()
    assert out.startswith("crawl job1 failed: 2 pages")
    assert "warning: the crawl failed: RuntimeError: boom" in err


def test_ctrl_c_cancels_the_crawl(monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]) -> None:
    def interrupted(seconds: float) -> None:
        raise KeyboardInterrupt

    monkeypatch.setattr(index.time, "sleep", interrupted)
    agent = serve(monkeypatch, FakeAgent())
    assert run("crawl", "https://docs.test/") == 130
    assert len(agent.sent("DELETE", "/v2/crawl/job1")) == 1 and agent.polls == 0
    assert "crawl job1 cancelled" in capsys.readouterr().err


def test_urls_indexes_the_listed_pages_without_following_links(monkeypatch: pytest.MonkeyPatch, sleeps: list[float],
                                                               tmp_path: Path) -> None:
    listing = tmp_path / "urls.txt"
    listing.write_text("# pages to index\nhttps://docs.test/a\n\n  https://docs.test/b  \n  # not this\nhttps://docs.test/c\n")
    agent = serve(monkeypatch, FakeAgent())
    assert run("urls", str(listing)) == 0
    assert json.loads(agent.sent("POST", "/v2/crawl")[0].content) == {
        "url": "https://docs.test/a", "urls": ["https://docs.test/b", "https://docs.test/c"], "limit": 3,
        "maxDiscoveryDepth": 0, "sitemap": "skip"}


def test_a_file_without_urls_exits_1(monkeypatch: pytest.MonkeyPatch, tmp_path: Path,
                                     capsys: pytest.CaptureFixture[str]) -> None:
    listing = tmp_path / "urls.txt"
    listing.write_text("# nothing yet\n\n")
    agent = serve(monkeypatch, FakeAgent())
    assert run("urls", str(listing)) == 1
    assert agent.requests == [] and "lists no URL" in capsys.readouterr().err


def test_stats_prints_what_the_index_holds(monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]) -> None:
    serve(monkeypatch, FakeAgent())
    assert run("stats") == 0
    assert json.loads(capsys.readouterr().out) == {"documents": 3, "chunks": 9}


@pytest.mark.parametrize(("flag", "target"), [("--host", {"host": "docs.test"}),
                                              ("--url", {"url": "https://docs.test/a"})])
def test_delete_drops_a_host_or_a_page(flag: str, target: dict[str, str], monkeypatch: pytest.MonkeyPatch,
                                       capsys: pytest.CaptureFixture[str]) -> None:
    agent = serve(monkeypatch, FakeAgent())
    assert run("delete", flag, next(iter(target.values()))) == 0
    assert json.loads(agent.sent("POST", "/v2/index/delete")[0].content) == target
    assert capsys.readouterr().out == f"deleted 4 chunks of {target}\n"


def test_delete_needs_exactly_one_target(monkeypatch: pytest.MonkeyPatch) -> None:
    serve(monkeypatch, FakeAgent())
    with pytest.raises(SystemExit) as exited:
        run("delete")
    assert exited.value.code == 2
    with pytest.raises(SystemExit):
        run("delete", "--host", "docs.test", "--url", "https://docs.test/a")


def test_the_api_key_is_sent_as_a_bearer_token(monkeypatch: pytest.MonkeyPatch) -> None:
    agent = serve(monkeypatch, FakeAgent())
    assert index.main(["--agent", AGENT, "--api-key", "s3cret", "stats"]) == 0
    assert agent.requests[0].headers["authorization"] == "Bearer s3cret"
    assert str(agent.requests[0].url) == f"{AGENT}/v2/index/stats"


def test_an_error_from_agent_svc_exits_with_its_message(monkeypatch: pytest.MonkeyPatch) -> None:
    reply = httpx.Response(400, json={"success": False, "error": "invalid url 'ftp://x'"})
    serve(monkeypatch, FakeAgent(crawl_reply=reply))
    with pytest.raises(SystemExit, match=r"agent-svc answered HTTP 400: invalid url 'ftp://x'"):
        run("crawl", "ftp://x")


def test_an_unreachable_agent_svc_exits_2(monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]) -> None:
    serve(monkeypatch, FakeAgent(down=True))
    assert run("stats") == 2
    assert f"agent-svc at {AGENT}/ is unreachable: ConnectError" in capsys.readouterr().err
