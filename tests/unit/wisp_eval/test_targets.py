import httpx

from wisp_eval.dataset import Query
from wisp_eval.targets import AgentMode


def test_an_agent_answer_keeps_what_degraded() -> None:
    def handle(request: httpx.Request) -> httpx.Response:
        return httpx.Response(200, json={"success": True, "data": {"web": [{"url": "https://a.org/x"}]},
                                         "warning": "semantic-svc failed: results keep SearXNG's order"})

    with httpx.Client(transport=httpx.MockTransport(handle)) as client:
        answer = AgentMode("hybrid", "http://agent.test", client, 10).ask(Query("q1", "c", "question", ()))
    assert answer.pages == ["a.org/x"] and answer.warning == "semantic-svc failed: results keep SearXNG's order"
