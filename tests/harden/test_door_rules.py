"""The smaller door rules of issue 26 (item 8): a cross-site request without an Origin, repeated or
malformed Host and Origin headers, and a key revoked while its stream runs."""

from __future__ import annotations

import socket
import time

import httpx
import openai

from app.harness import NodeProc, TinyProc

CHAT = {"model": "m", "messages": [{"role": "user", "content": "hi"}]}


def raw_request(node: NodeProc, headers: list[tuple[str, str]]) -> bytes:
    """A request with exactly these header lines (httpx would merge or refuse repeated ones)."""
    host, port = node.runtime["listen"].rsplit(":", 1)
    body = b'{"model": "m", "messages": [{"role": "user", "content": "hi"}]}'
    lines = [b"POST /v1/chat/completions HTTP/1.1", *(f"{k}: {v}".encode() for k, v in headers),
             b"Content-Type: application/json", f"Content-Length: {len(body)}".encode(), b"Connection: close"]
    with socket.create_connection((host, int(port)), timeout=30) as sock:
        sock.sendall(b"\r\n".join(lines) + b"\r\n\r\n" + body)
        answer = b""
        while chunk := sock.recv(65536):
            answer += chunk
    return answer


def test_cross_site_and_malformed_headers_are_refused(node_factory: type[NodeProc], tiny_factory: type[TinyProc]) -> None:
    tiny = tiny_factory("--api", "openai", "--model", "m")
    node = node_factory("alpha").start()
    node.add_engine("local", tiny.url)
    local = f"127.0.0.1:{node.runtime['listen'].rsplit(':', 1)[1]}"
    refused = {
        "form POST without Origin": [("Host", local), ("Sec-Fetch-Site", "cross-site")],
        "two Hosts": [("Host", local), ("Host", "evil.example")],
        "a list as Host": [("Host", f"{local}, evil.example")],
        "two Origins": [("Host", local), ("Origin", "http://localhost:3000"), ("Origin", "https://evil.example")],
        "a list as Origin": [("Host", local), ("Origin", "http://localhost:3000, https://evil.example")],
        "userinfo in Host": [("Host", f"user@{local}")],
    }
    for what, headers in refused.items():
        answer = raw_request(node, headers)
        # 403 naming why, or aiohttp's own 400 for a header it will not parse at all: never served.
        status = answer.split(b" ", 2)[1]
        assert status in (b"400", b"403"), (what, answer[:300])
        assert b"refused" in answer or b"Duplicate" in answer, what
    # What a local app or a local page sends still works.
    allowed = {
        "a local app": [("Host", local)],
        "a local page on another port": [("Host", local), ("Origin", "http://localhost:3000"),
                                         ("Sec-Fetch-Site", "cross-site")],
        "same origin": [("Host", local), ("Sec-Fetch-Site", "same-origin")],
        "a direct navigation": [("Host", local), ("Sec-Fetch-Site", "none")],
    }
    for what, headers in allowed.items():
        assert raw_request(node, headers).startswith(b"HTTP/1.1 200"), what


def test_revoking_a_key_ends_its_running_stream(node_factory: type[NodeProc], tiny_factory: type[TinyProc]) -> None:
    tiny = tiny_factory("--api", "openai", "--model", "m", "--tokens-per-s", "4", "--reply-tokens", "400")
    node = node_factory("alpha").start()
    node.add_engine("local", tiny.url)
    key = node.cli("keys", "create", "ci").stdout.strip()
    client = openai.OpenAI(base_url=f"{node.url}/v1", api_key=key, max_retries=0, timeout=60)
    stream = client.chat.completions.create(stream=True, **CHAT)  # type: ignore[call-overload]
    chunks = 0
    revoked_at = None
    ended_by = None
    try:
        for _ in stream:
            chunks += 1
            if chunks == 3:
                node.cli("keys", "revoke", "ci")
                revoked_at = time.monotonic()
    except Exception as exc:  # the cut reaches the client as its HTTP library's error (openai 3.x: httpx2's)
        ended_by = exc
    assert revoked_at is not None
    took = time.monotonic() - revoked_at
    assert chunks < 100 and took < 20, (chunks, took, ended_by)  # 400 tokens at 4/s would run 100 s
    refused = httpx.post(f"{node.url}/v1/chat/completions", json=CHAT, headers={"Authorization": f"Bearer {key}"},
                         timeout=30)
    assert refused.status_code == 401 and "revoked" in refused.text
