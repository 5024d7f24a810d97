"""A rented node's pass-through streams on the splice's connections (``rented/link.py::splice_client``),
with every rule the rented path enforces kept: against the tiny model behind HTTPS with a CA made for
the test (in process), raw TLS servers on 127.0.0.1 that close connections on purpose, and sponsor
nodes in their own processes, one on the splice and one with ``PAIRWISE_SPLICE=off``, billing the
same answer per token.

Which client carried a request is seen at the endpoint: the splice names itself ``pairwise`` in its
User-Agent, aiohttp's client names itself; in process, ``Opened.splice`` is set on the splice's path.
"""

from __future__ import annotations

import socket
import ssl
import threading
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import httpx
import pytest

from app.environment import reread_environment
from app.harness import wait_until
from app.services.backends.base import UpstreamRequest
from app.services.errors import UpstreamError
from app.services.rented.decl import validate_decl
from app.services.rented.upstream import RentedUpstream
from app.simulator.ca import generate_tls, server_ssl_context
from tests.rented.conftest import TOKEN, Make, TlsTiny
from tests.rented.test_link_wire import on_loop
from tests.rented.tls_tiny import WARM

SPLICE_AGENT = "pairwise"  # the splice's User-Agent (backends/splice_client.py)

MODELS = ["rented-model"]


def chat(stream: bool = True, client_api: str = "openai", **extra: Any) -> UpstreamRequest:
    body = {"model": "rented-model", "messages": [{"role": "user", "content": "hi"}], "stream": stream, **extra}
    return UpstreamRequest(api="openai", operation="chat", body=body, stream=stream,
                           client_api=client_api, job_id="")  # type: ignore[arg-type]


async def read_all(node: RentedUpstream, request: UpstreamRequest) -> tuple[bool, bytes]:
    """Whether the splice carried it, and the whole answer."""
    opened = await node.open(request)
    data = opened.first_chunk + b"".join([c async for c in opened.rest])
    await opened.aclose()
    return opened.splice is not None, data


def agent(tiny: TlsTiny) -> str:
    return tiny.state.last_headers.get("user-agent", "")


async def test_a_pass_through_stream_is_spliced_with_the_token_the_pinned_model_and_usage(
        make: Make, tls_tiny: TlsTiny) -> None:
    node = make(models=MODELS)
    spliced, data = await read_all(node, chat(stream_options={"include_usage": False}))
    assert spliced and agent(tls_tiny) == SPLICE_AGENT
    assert b'"usage"' in data and data.rstrip().endswith(b"data: [DONE]")
    assert tls_tiny.state.last_body["stream_options"] == {"include_usage": True}
    assert tls_tiny.state.last_body["model"] == "rented-model"
    assert tls_tiny.state.last_headers["authorization"] == f"Bearer {TOKEN}"
    assert "x-scale-up-timeout" not in tls_tiny.state.last_headers  # only for huggingface-endpoint
    with pytest.raises(UpstreamError, match="serves only rented-model"):
        await node.open(chat(model="someone-elses-model"))

    # A translated stream (an Ollama caller) and a whole answer keep aiohttp's client.
    spliced, data = await read_all(node, chat(client_api="ollama"))
    assert not spliced and agent(tls_tiny) != SPLICE_AGENT and b"[DONE]" in data
    spliced, data = await read_all(node, chat(stream=False))
    assert not spliced and agent(tls_tiny) != SPLICE_AGENT and b"choices" in data


async def test_splice_off_keeps_aiohttps_client(make: Make, tls_tiny: TlsTiny,
                                                monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("PAIRWISE_SPLICE", "off")
    reread_environment()  # the node reads the snapshot (the next test's own fixture takes it again)
    spliced, _ = await read_all(make(models=MODELS), chat())
    assert not spliced and agent(tls_tiny) != SPLICE_AGENT


async def test_an_endpoint_signed_by_another_ca_is_refused(make: Make, tls_tiny: TlsTiny, tmp_path: Path) -> None:
    other = generate_tls(tmp_path / "other-ca")
    node = make(models=MODELS, ca_file=str(other.ca_file))
    before = dict(tls_tiny.state.last_body)
    with pytest.raises(UpstreamError) as caught:
        await node.open(chat())
    assert "CERTIFICATE_VERIFY_FAILED" in caught.value.message and "could not be reached" in caught.value.message
    assert tls_tiny.state.last_body == before  # nothing was sent
    assert "127.0.0.1" not in caught.value.message  # the endpoint is never quoted


async def test_a_refused_token_on_a_spliced_stream_marks_the_node_with_the_upstreams_message(make: Make) -> None:
    node = make(token="wrong-token-xyz", models=MODELS)
    with pytest.raises(UpstreamError) as caught:
        await node.open(chat())
    assert caught.value.upstream_status == 401
    assert "credential refused" in caught.value.message and "Incorrect API key" in caught.value.message
    assert "wrong-token-xyz" not in caught.value.message
    reason = node.ineligible_reason()
    assert reason is not None and reason.startswith("credential refused:") and "wrong-token-xyz" not in reason


async def test_a_503_while_warming_is_waited_out_and_the_wait_header_sent(make: Make, tls_tiny: TlsTiny) -> None:
    node = make(models=MODELS, provider="huggingface-endpoint", timeouts={"cold_start_s": 20})
    tls_tiny.warm(2)  # "model is loading" twice, then ready
    spliced, data = await read_all(node, chat())
    assert spliced and b"[DONE]" in data and tls_tiny.app[WARM]["count"] == 0
    assert agent(tls_tiny) == SPLICE_AGENT and tls_tiny.state.last_headers["x-scale-up-timeout"] in ("20", "19")


async def test_a_503_past_the_cold_start_budget_fails_over(make: Make, tls_tiny: TlsTiny) -> None:
    node = make(models=MODELS, timeouts={"cold_start_s": 0.6})
    tls_tiny.warm(1000)
    with pytest.raises(UpstreamError) as caught:
        await node.open(chat())
    assert "503" in caught.value.message or "cold-start budget" in caught.value.message


# --- kept connections: a close the loop has not read, and a request that may have arrived ---------------


SSE = (b"HTTP/1.1 200 OK\r\ncontent-type: text/event-stream\r\ntransfer-encoding: chunked\r\n\r\n"
       + b"".join(b"%x\r\n%b\r\n" % (len(e), e) for e in (
           b'data: {"id":"c","object":"chat.completion.chunk","model":"m","choices":[{"index":0,'
           b'"delta":{"content":"hi"}}]}\n\n', b"data: [DONE]\n\n")) + b"0\r\n\r\n")


@dataclass
class RawTls:
    """A TLS server on its own thread. ``plan(n)`` says what to do with the n-th request of a
    connection: "answer" (keep the connection), "answer-close" (answer, then close it: an endpoint
    closing idle connections), "drop" (read it, then close without a byte: it reached the endpoint)."""

    plan: Callable[[int], str]
    ca_file: str = ""
    port: int = 0
    requests: int = 0
    connections: int = 0
    closed: threading.Event = field(default_factory=threading.Event)

    def start(self, tls_dir: Path) -> RawTls:
        tls = generate_tls(tls_dir)
        self.ca_file = str(tls.ca_file)
        context = server_ssl_context(tls)
        self._sock = socket.create_server(("127.0.0.1", 0))
        self.port = self._sock.getsockname()[1]
        threading.Thread(target=self._serve, args=(context,), daemon=True).start()
        return self

    def _serve(self, context: ssl.SSLContext) -> None:
        while True:
            try:
                raw, _ = self._sock.accept()
            except OSError:
                return
            self.connections += 1
            try:
                with context.wrap_socket(raw, server_side=True) as conn:
                    self._conversation(conn)
            except (OSError, ssl.SSLError):
                pass
            self.closed.set()

    def _conversation(self, conn: ssl.SSLSocket) -> None:
        number, data = 0, b""
        while True:
            while b"\r\n\r\n" not in data:
                more = conn.recv(65536)
                if not more:
                    return
                data += more
            head, _, data = data.partition(b"\r\n\r\n")
            length = next(int(line.split(b":")[1]) for line in head.split(b"\r\n")
                          if line.lower().startswith(b"content-length"))
            while len(data) < length:
                data += conn.recv(65536)
            data = data[length:]
            number += 1
            self.requests += 1
            what = self.plan(number)
            if what == "drop":
                return
            conn.sendall(SSE)
            if what == "answer-close":
                return

    def close(self) -> None:
        self._sock.close()


def raw_node(server: RawTls) -> RentedUpstream:
    decl = validate_decl({"name": "raw", "url": f"https://127.0.0.1:{server.port}", "ca_file": server.ca_file,
                          "models": MODELS})
    return RentedUpstream(decl, sponsor_name="A", sponsor_id="a-id", token=TOKEN)


@pytest.mark.parametrize("loop", ["asyncio", "uvloop"])  # a node runs on uvloop where it is installed
def test_a_kept_connection_the_endpoint_closed_costs_no_error(tmp_path: Path, loop: str) -> None:
    server = RawTls(lambda n: "answer-close").start(tmp_path / "tls")
    node = raw_node(server)

    async def turns() -> None:
        try:
            for turn in range(3):
                server.closed.clear()
                spliced, data = await read_all(node, chat())
                assert spliced and data.endswith(b"data: [DONE]\n\n")
                # The endpoint has closed it; the loop is not let run, so the pool still holds the
                # connection as idle when the next request is sent: its socket's close must be seen.
                assert server.closed.wait(10)
                assert server.connections == turn + 1
        finally:
            await node.aclose()
            server.close()

    on_loop(loop, turns)
    assert server.requests == 3 and server.connections == 3


async def test_a_request_that_may_have_reached_the_endpoint_is_never_sent_again(tmp_path: Path) -> None:
    # The second request on a connection reaches the endpoint, which closes without answering.
    server = RawTls(lambda n: "answer" if n == 1 else "drop").start(tmp_path / "tls")
    node = raw_node(server)
    try:
        spliced, _ = await read_all(node, chat())
        assert spliced
        with pytest.raises(UpstreamError, match="could not be reached"):
            await node.open(chat())
        assert node.last_error is not None
    finally:
        await node.aclose()
        server.close()
    assert server.requests == 2 and server.connections == 1  # sent once (billed once), not again


# --- through sponsor nodes: the same answer billed the same, per token -----------------------------------


def ask(url: str) -> httpx.Response:
    with httpx.Client(timeout=60, trust_env=False) as client, client.stream("POST", url + "/v1/chat/completions", json={
            "model": "rented-model", "stream": True,
            "messages": [{"role": "user", "content": "tell me about the splice"}]}) as response:
        response.read()
        return response


@pytest.mark.keyring
def test_a_spliced_rented_stream_is_counted_and_billed_as_on_aiohttps_path(node_factory: Any,
                                                                           tls_tiny_factory: Any) -> None:
    tiny = tls_tiny_factory("--require-token", TOKEN, "--model", "rented-model")
    nodes = {"splice": node_factory("S").start(),
             "aiohttp": node_factory("O", env={"PAIRWISE_SPLICE": "off"}).start()}
    jobs: dict[str, dict[str, Any]] = {}
    for path, node in nodes.items():
        node.cli("rented", "attach", "gpu", "--url", tiny.url, "--ca-file", tiny.ca_file, "--token-stdin",
                 "--price-per-mtok-in", "30", "--price-per-mtok-out", "60", stdin=TOKEN)
        response = ask(node.url)
        assert response.status_code == 200 and response.headers["x-pairwise-node"] == "gpu"
        headers = {k.lower(): v for k, v in tiny.stats()["last_headers"].items()}
        assert (headers.get("user-agent") == SPLICE_AGENT) == (path == "splice")
        assert headers["authorization"] == f"Bearer {TOKEN}"
        job_id = response.headers["x-pairwise-job"]
        jobs[path] = wait_until(lambda n=node, j=job_id: next(
            (r for r in n.cli_json("jobs") if r["id"] == j and r.get("cost_usd") is not None), None),
            what="the job's cost")
    spliced, plain = jobs["splice"], jobs["aiohttp"]
    assert spliced["state"] == plain["state"] == "completed"
    assert spliced["prompt_tokens"] > 0 and spliced["completion_tokens"] > 0
    assert (spliced["prompt_tokens"], spliced["completion_tokens"]) == (plain["prompt_tokens"],
                                                                        plain["completion_tokens"])
    expected = (spliced["prompt_tokens"] * 30 + spliced["completion_tokens"] * 60) / 1e6
    assert spliced["cost_usd"] == pytest.approx(expected) and plain["cost_usd"] == pytest.approx(expected)
    shown = {path: node.cli_json("rented", "show", "gpu")["cost"]["session_usd"] for path, node in nodes.items()}
    assert shown["splice"] == pytest.approx(shown["aiohttp"]) and shown["splice"] == pytest.approx(expected)
    for node in nodes.values():
        node.stop()
        assert TOKEN not in node.log.read_text()
        assert [str(p) for p in node.home.rglob("*") if p.is_file() and TOKEN.encode() in p.read_bytes()] == []

