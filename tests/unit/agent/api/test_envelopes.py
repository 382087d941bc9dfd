"""Every refusal on a route answers in that route's API's shape: the gate's 401, the body limit's 413, and the
app's 404 and 500 pick Tavily's, OpenAI's or Firecrawl's envelope by path."""

import openai
import pytest
from fastapi.testclient import TestClient

from agent.api.envelopes import error_body_for
from agent.app import create_app
from agent.config import Settings
from agent.errors import WispError

KEY = "a-key-of-twenty-chars-or-more"


@pytest.fixture(scope="module")
def keyed() -> TestClient:
    return TestClient(create_app(Settings.of(api_keys=KEY, max_body_bytes=10_000)), raise_server_exceptions=False)


def test_each_path_has_its_apis_envelope() -> None:
    error = WispError("nope")
    assert error_body_for("/search")(error) == {"detail": {"error": "nope"}}
    assert error_body_for("/v1/chat/completions")(error)["error"]["message"] == "nope"
    assert error_body_for("/v2/scrape")(error) == {"success": False, "error": "nope"}


@pytest.mark.parametrize(("path", "shape"), [("/v1/chat/completions", "openai"), ("/search", "tavily"),
                                             ("/v2/search", "firecrawl")])
def test_a_missing_key_and_a_body_past_the_limit_answer_in_the_routes_shape(keyed: TestClient, path: str,
                                                                             shape: str) -> None:
    unkeyed = keyed.post(path, json={"query": "q"})
    too_large = keyed.post(path, content=b"{" + b" " * 20_000 + b"}", headers={"authorization": f"Bearer {KEY}",
                                                                              "content-type": "application/json"})
    for response, status in ((unkeyed, 401), (too_large, 413)):
        body = response.json()
        assert response.status_code == status
        assert {"openai": "error" in body and "message" in body["error"], "tavily": "error" in body.get("detail", {}),
                "firecrawl": body.get("success") is False}[shape], body


def test_the_openai_sdk_raises_its_own_authentication_error(keyed: TestClient) -> None:
    client = openai.OpenAI(base_url="http://testserver/v1", api_key="wrong", max_retries=0, http_client=keyed)
    with pytest.raises(openai.AuthenticationError):
        client.models.list()
