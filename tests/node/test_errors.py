"""Bad input gets a clear error in the caller's API shape, and the node keeps serving."""

from __future__ import annotations

import httpx
import pytest
from aiohttp import web
from aiohttp.test_utils import make_mocked_request

from app.services.frontdoor.server import is_loopback, loopback_only
from tests.node.conftest import TwoEngines


@pytest.mark.parametrize("path", ["/api/chat", "/v1/chat/completions"])
def test_bad_requests_are_refused_clearly(two_engines: TwoEngines, path: str) -> None:
    url = two_engines.node.url + path
    openai_shape = path.startswith("/v1/")

    def message(response: httpx.Response) -> str:
        error = response.json()["error"]
        return error["message"] if openai_shape else error

    malformed = httpx.post(url, content=b'{"model": "oa-model", "messages": [', timeout=10)
    assert malformed.status_code == 400 and "malformed JSON" in message(malformed)

    missing = httpx.post(url, json={"messages": []}, timeout=10)
    assert missing.status_code == 400 and "no 'model'" in message(missing)

    huge = httpx.post(url, content=b"x" * (10 * 1024 * 1024), headers={"content-type": "application/json"}, timeout=30)
    assert huge.status_code == 413 and "limit" in message(huge)

    unknown = httpx.post(url, json={"model": "ghost", "messages": []}, timeout=10)
    assert unknown.status_code == 404
    text = message(unknown)
    assert "ghost" in text and "oa-model" in text and "ol-model:latest" in text

    # Still serving after all that.
    ok = httpx.post(url, json={"model": "oa-model", "messages": [{"role": "user", "content": "hi"}], "stream": False},
                    timeout=10)
    assert ok.status_code == 200


def test_loopback_decision() -> None:
    assert is_loopback("127.0.0.1") and is_loopback("127.8.9.10") and is_loopback("::1")
    assert not is_loopback("192.168.1.20") and not is_loopback("10.0.0.1") and not is_loopback(None)
    assert not is_loopback("not-an-address")


class _FakeTransport:
    def __init__(self, peer: tuple[str, int]) -> None:
        self.peer = peer

    def get_extra_info(self, name: str, default: object = None) -> object:
        return self.peer if name == "peername" else default

    def is_closing(self) -> bool:
        return False


@pytest.mark.parametrize(("peer", "allowed"), [(("127.0.0.1", 5000), True), (("192.168.1.20", 5000), False)])
async def test_loopback_middleware(peer: tuple[str, int], allowed: bool) -> None:
    request = make_mocked_request("POST", "/v1/chat/completions", transport=_FakeTransport(peer))

    async def handler(_: web.Request) -> web.Response:
        return web.Response(text="served")

    response = await loopback_only(request, handler)
    assert isinstance(response, web.Response)
    if allowed:
        assert response.text == "served"
    else:
        assert response.status == 403
        assert "192.168.1.20 is not a loopback address" in (response.text or "")


@pytest.mark.parametrize(("headers", "allowed"), [
    ({"Host": "127.0.0.1:11434"}, True),
    ({"Host": "localhost:11434", "Origin": "http://localhost:3000"}, True),
    ({"Host": "[::1]:11434", "Origin": "app://obsidian.md"}, True),
    ({"Host": "127.0.0.1:11434", "Origin": "https://evil.example"}, False),
    ({"Host": "127.0.0.1:11434", "Origin": "null"}, False),
    ({"Host": "evil.example:11434"}, False),  # DNS rebinding: a site's name resolving to 127.0.0.1
])
async def test_browser_pages_and_rebinding_are_refused(headers: dict[str, str], allowed: bool) -> None:
    request = make_mocked_request("POST", "/api/chat", headers=headers, transport=_FakeTransport(("127.0.0.1", 5000)))

    async def handler(_: web.Request) -> web.Response:
        return web.Response(text="served")

    response = await loopback_only(request, handler)
    assert isinstance(response, web.Response)
    if allowed:
        assert response.text == "served"
    else:
        assert response.status == 403 and "refused" in (response.text or "")


def test_a_browser_origin_is_refused_over_a_real_socket(two_engines: TwoEngines) -> None:
    url = two_engines.node.url + "/v1/chat/completions"
    body = {"model": "oa-model", "messages": [{"role": "user", "content": "hi"}]}
    refused = httpx.post(url, json=body, headers={"Origin": "https://evil.example"}, timeout=10)
    assert refused.status_code == 403 and "https://evil.example" in refused.json()["error"]["message"]
    assert httpx.post(url, json=body, timeout=10).status_code == 200
