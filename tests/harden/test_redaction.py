"""Redaction by shape, not by example (issue 26, item 5).

Credentials are generated in every promised shape (key/value pairs whatever their characters,
Basic and Bearer values, x-api-key, URL user info and query secrets); none survives the log filter's
redaction or the scrubbing of text that leaves the node. Then a paired peer (a hostile one, on a
paired node's address and certificate) answers a relayed request with an error quoting them all:
the caller here, the job record, state.db and its WAL, and the log hold none of them."""

from __future__ import annotations

import httpx

from app.harness import NodeProc, wait_until
from app.services.secrets import redact
from app.services.text_safety import scrub_for_peer
from tests.cluster.hostile import HostilePeer
from tests.cluster.multinode import jobs
from tests.cluster.test_hostile_peer import hostile_pair
from tests.harden.credentials import generated

__all__ = ["hostile_pair"]


def test_generated_credentials_are_redacted_whatever_their_shape() -> None:
    for text, secret in generated():
        for cleaned in (redact(text), scrub_for_peer(text, limit=10_000)):
            assert secret not in cleaned, (text, cleaned)
            assert "request refused" in cleaned
        assert "[redacted]" in redact(text)  # the scrubber may take the whole URL out instead
    # What is not a credential stays: an error must still say what went wrong.
    for plain in ("max_tokens=4096 exceeds the context", "model 'llama3:8b' not found", "the key of the record",
                  "stream: true is not supported", "token count: 12"):
        assert redact(plain) == plain


def test_a_peers_error_text_reaches_nothing_here_with_a_credential(hostile_pair: tuple[NodeProc, HostilePeer]) -> None:
    alpha, hostile = hostile_pair
    carried = generated(seed=7, count=40)
    hostile.inventory["models"] = [{"name": "peer-only"}]
    hostile.relay_error = (400, {"error": {"message": " | ".join(text for text, _ in carried), "type": "bad"}})
    wait_until(lambda: "peer-only" in alpha.models(), timeout=30, what="alpha to list the peer's model")
    answer = httpx.post(f"{alpha.url}/v1/chat/completions", timeout=30,
                        json={"model": "peer-only", "messages": [{"role": "user", "content": "hi"}]})
    assert answer.status_code >= 400 and "[redacted]" in answer.text, answer.text
    records = [j for j in jobs(alpha) if j.get("model") == "peer-only"]
    assert records and all(j["state"] in ("failed", "refused") for j in records)
    alpha.stop()  # the log and the WAL as they are left on disk
    leaked = {}
    for path in alpha.home.rglob("*"):
        if path.is_file():
            data = path.read_bytes()
            leaked.update({str(path): secret for _, secret in carried if secret.encode() in data})
    for _, secret in carried:
        assert secret not in answer.text
        assert secret not in str(records)
    assert leaked == {}
