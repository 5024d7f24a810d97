"""A sponsor node (its own process) with a rented node: the tiny model behind HTTPS with a test CA.

Refusals (http:// to a non-loopback host, a wrong token), the public-endpoint warning, the node list
row, a streamed request through the front door with a real openai client, the workload record
(off-LAN, rented node, tokens, cost), the off_lan_prompt event, and no trace of the token anywhere
the node writes.
"""

from __future__ import annotations

import http.client
import json
import socket
import threading
from pathlib import Path
from typing import Any

import httpx
import openai

from app.control_client import ControlClient
from app.harness import wait_until
from app.home import Home
from tests.rented.conftest import TOKEN


def attach_args(tiny: Any, name: str = "gpu", *extra: str) -> list[str]:
    return ["rented", "attach", name, "--url", tiny.url, "--ca-file", tiny.ca_file, "--token-stdin", *extra]


class Events:
    """The node's event stream, collected on a thread; close() it before the node stops."""

    def __init__(self, home: Path) -> None:
        runtime = ControlClient.runtime(Home(home)) or {}
        host, port = str(runtime["listen"]).rsplit(":", 1)
        self.events: list[dict[str, Any]] = []
        self._conn = http.client.HTTPConnection(host, int(port), timeout=30)
        self._conn.request("GET", "/_pairwise/v1/events",
                           headers={"Authorization": f"Bearer {Home(home).control_token()}"})
        self._response = self._conn.getresponse()
        self._thread = threading.Thread(target=self._run, daemon=True)
        self._thread.start()
        wait_until(lambda: self.of("subscribed"), what="the event stream")

    def _run(self) -> None:
        try:
            for line in self._response:
                if line.strip():
                    self.events.append(json.loads(line))
        except Exception:  # close() pulls the socket from under the reader: that ends it, quietly
            pass

    def of(self, kind: str) -> list[dict[str, Any]]:
        return [e for e in list(self.events) if e.get("kind") == kind]

    def close(self) -> None:
        # Shut the socket down so the node sees the caller leave at once (it stops faster).
        if self._conn.sock is not None:
            self._conn.sock.shutdown(socket.SHUT_RDWR)
        self._thread.join(5)
        self._conn.close()


def files_containing(root: Path, needle: bytes) -> list[str]:
    return [str(p) for p in root.rglob("*") if p.is_file() and needle in p.read_bytes()]


def test_refusals_are_specific(node_factory: Any, tls_tiny_factory: Any) -> None:
    tiny = tls_tiny_factory("--require-token", TOKEN, "--model", "rented-model")
    node = node_factory("A").start()

    plain = node.cli("rented", "attach", "gpu", "--url", "http://10.1.2.3:8000/v1", "--token-stdin",
                     stdin=TOKEN, check=False)
    assert plain.returncode == 1
    assert "rule 'http:// only for loopback hosts'" in plain.stderr and "10.1.2.3" in plain.stderr

    wrong = node.cli(*attach_args(tiny), stdin="wrong-token-0000", check=False)
    assert wrong.returncode == 1
    assert "refused to attach gpu: the endpoint refused the token given" in wrong.stderr
    assert "Incorrect API key provided" in wrong.stderr and "wrong-token-0000" not in wrong.stderr

    # Without the test CA the certificate is not trusted, and there is no way around it but a CA file.
    no_ca = node.cli("rented", "attach", "gpu", "--url", tiny.url, "--token-stdin", stdin=TOKEN, check=False)
    assert no_ca.returncode == 1 and "rule 'https is verified'" in no_ca.stderr
    assert "CERTIFICATE_VERIFY_FAILED" in no_ca.stderr and "--ca-file" in no_ca.stderr
    assert node.cli_json("rented", "list") == []

    # A wrong token later (rotated upstream) marks the node "credential refused" with the upstream's words.
    node.cli(*attach_args(tiny), stdin=TOKEN)
    tiny.config(require_token="rotated-token-1111")
    client = openai.OpenAI(base_url=node.url + "/v1", api_key="unused", max_retries=0)
    try:
        client.chat.completions.create(model="rented-model", messages=[{"role": "user", "content": "hi"}])
        raise AssertionError("the request should have failed")
    except openai.APIStatusError as exc:
        assert exc.status_code == 502 and "credential refused" in str(exc)
    row = node.cli_json("rented", "show", "gpu")
    assert row["state"] == "ineligible" and row["reason"].startswith("credential refused:")
    assert "Incorrect API key provided" in row["reason"]
    try:
        client.chat.completions.create(model="rented-model", messages=[{"role": "user", "content": "hi"}])
        raise AssertionError("the request should have been refused")
    except openai.APIStatusError as exc:
        assert exc.status_code == 403 and "gpu: credential refused" in str(exc)


def test_public_endpoint_warning(node_factory: Any, tls_tiny_factory: Any) -> None:
    tiny = tls_tiny_factory("--model", "open-model")  # answers anyone
    node = node_factory("A").start()
    events = Events(node.home)
    out = node.cli(*attach_args(tiny, "open"), stdin=TOKEN).stdout
    assert "warning: open answers without any credential: anyone with its URL can use it" in out
    [row] = [n for n in node.cli_json("nodes") if n["kind"] == "rented"]
    assert row["warning"] == "answers without any credential: anyone with its URL can use it"
    wait_until(lambda: [e for e in events.of("notice") if e.get("level") == "warning"], what="a warning notice")
    events.close()


def test_attach_serve_stream_and_audit(node_factory: Any, tls_tiny_factory: Any) -> None:
    tiny = tls_tiny_factory("--require-token", TOKEN, "--model", "rented-model")
    node = node_factory("A").start()
    row = node.cli_json(*attach_args(tiny, "gpu", "--gpu", "1x L4 24 GB", "--price-per-hour", "0.8"), stdin=TOKEN)
    assert row["state"] == "eligible" and row["models"] == ["rented-model"] and row["warning"] is None
    assert row["has_credential"] is True and row["shared"] is False and row["policy"] == "when-no-local-node"

    [fact] = [n for n in node.cli_json("nodes") if n["kind"] == "rented"]
    assert fact["label"] == "Rented · off-LAN" and fact["provider"] == "openai-compatible"
    assert fact["gpu"] == "1x L4 24 GB" and fact["price_per_hour"] == 0.8 and fact["sponsor"] == "A"
    assert fact["state"] == "eligible" and fact["eligible"] is True and fact["shared"] is False
    assert fact["policy"] == "when-no-local-node" and fact["reason"] is None
    assert "url" not in fact and tiny.url not in str(fact)

    events = Events(node.home)
    client = openai.OpenAI(base_url=node.url + "/v1", api_key="unused", max_retries=0)
    with client.chat.completions.with_streaming_response.create(
            model="rented-model", messages=[{"role": "user", "content": "hello there"}], stream=True) as response:
        assert response.headers["x-pairwise-off-lan"] == "gpu" and response.headers["x-pairwise-node"] == "gpu"
        job_id = response.headers["x-pairwise-job"]
        chunks = list(response.parse())
    assert "".join(c.choices[0].delta.content or "" for c in chunks if c.choices)
    headers = {k.lower(): v for k, v in tiny.stats()["last_headers"].items()}
    assert headers["authorization"] == f"Bearer {TOKEN}"  # added by the sponsor, never by the caller

    def finished() -> dict[str, Any] | None:
        jobs = [j for j in node.cli_json("jobs") if j["id"] == job_id]
        return jobs[0] if jobs and jobs[0].get("cost_usd") is not None else None

    job = wait_until(finished, what="the job's cost")
    assert job["state"] == "completed" and job["off_lan"] is True and job["rented_node"] == "gpu"
    assert job["serving_node"] == "gpu" and job["origin_node"] == "A" and job["completion_tokens"]
    assert job["cost_usd"] > 0
    prompt = wait_until(lambda: events.of("off_lan_prompt"), what="off_lan_prompt")
    assert prompt[0]["rented_node"] == "gpu" and prompt[0]["job_id"] == job_id
    assert [e["job"]["cost_usd"] for e in events.of("workload_updated")] == [job["cost_usd"]]
    events.close()

    # The ollama API reaches it too (translated), also off-LAN.
    answer = httpx.post(node.url + "/api/chat", json={"model": "rented-model", "stream": False,
                                                      "messages": [{"role": "user", "content": "hi"}]}, timeout=30)
    assert answer.status_code == 200 and answer.headers["x-pairwise-off-lan"] == "gpu"

    shown = node.cli_json("rented", "show", "gpu")
    assert shown["cost"]["session_usd"] > 0

    node.stop()
    assert files_containing(node.home, TOKEN.encode()) == []
    assert TOKEN not in node.log.read_text()
