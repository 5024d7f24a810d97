"""What a paired peer replicates is data, not terminal input (issue 14, rows 10 and 11).

Two nodes in their own processes are paired; the test then speaks as beta on alpha's cluster port
(beta's own certificate, over mutual TLS) and sends job records a malicious or careless peer could."""

from __future__ import annotations

import asyncio
import json
import time
from typing import Any

from app.harness import NodeProc
from app.services.cluster.identity import NodeIdentity
from app.services.cluster.peer_client import PeerClient
from app.services.cluster.relay import scrubbed_error_body
from app.services.cluster.trust import PeerPin
from app.services.text_safety import printable, scrub_for_peer
from tests.cluster.multinode import FAST, jobs, pair


def record(beta: NodeProc, **fields: Any) -> dict[str, Any]:
    now = time.time()
    base = {"id": fields.pop("id"), "model": "m", "api": "openai", "origin_node": "beta",
            "origin_node_id": beta.runtime["node_id"], "requester": "app", "state": "completed",
            "created_at": now, "updated_at": now}
    return {**base, **fields}


async def send_as(beta: NodeProc, alpha: NodeProc, records: list[dict[str, Any]]) -> dict[str, Any]:
    me = NodeIdentity.load_or_create(beta.home / "identity", "beta")
    them = NodeIdentity.load_or_create(alpha.home / "identity", "alpha")
    client = PeerClient(me, PeerPin.create(them.node_id, "alpha", them.cert_pem, alpha.runtime["cluster"]), {})
    try:
        return dict(await client.call("POST", "/jobs/events", {"jobs": records}))
    finally:
        await client.aclose()


def test_a_peers_records_are_checked_and_cleaned(node_factory: type[NodeProc]) -> None:
    alpha = node_factory("alpha", env=FAST).start()
    beta = node_factory("beta", env=FAST).start()
    pair(alpha, beta)
    escape = "\x1b[2J\x1b]0;owned\x07\x1b[31m"
    answer = asyncio.run(send_as(beta, alpha, [
        record(beta, id="escapes", model=f"{escape}llama", requester=f"app{escape}\r\nforged line",
               error=f"{escape}engine at http://10.1.2.3:11434/api refused: Bearer hf_abcdefghijklmnop1234 "
                     "from gpu-box.lan:8080 ({escape})"),
        record(beta, id="listmodel", model=["a", "b"]),
        record(beta, id="badtokens", prompt_tokens="many"),
        record(beta, id="negative", cost_usd=-5),
        record(beta, id="longname", model="x" * 100_000),
        record(beta, id="structured", requester={"node_id": "n", "node_name": f"beta{escape}", "key": "ci",
                                                 "app": None, "authenticated": True}),
        record(beta, id="nested", requester={"node_name": {"deep": ["x"]}}),
    ]))
    assert answer == {"stored": 3, "ignored": 4}
    by_id = {j["id"]: j for j in jobs(alpha)}
    assert set(by_id) == {"escapes", "longname", "structured"}
    assert "\x1b" not in json.dumps(by_id["structured"]) and "beta" in json.dumps(by_id["structured"])
    kept = by_id["escapes"]
    assert kept["model"] == "llama" and "\x1b" not in json.dumps(kept)
    requester = json.dumps(kept["requester"])
    assert "forged line" in requester and "\\r" not in requester and "\\n" not in requester
    for leaked in ("10.1.2.3", "11434", "hf_abcdefghijklmnop1234", "gpu-box.lan", "8080", "http://"):
        assert leaked not in kept["error"], kept["error"]
    assert len(by_id["longname"]["model"]) <= 200
    printed = alpha.cli("jobs").stdout
    assert "\x1b" not in printed and "\x07" not in printed and "llama" in printed
    assert "refused a job record from beta: model must be text, not list" in \
        (alpha.home / "logs" / "node.log").read_text()


def test_scrubbing_keeps_the_gist() -> None:
    text = "engine gpu at https://user@10.0.0.5:8443/v1 said: model 'x' not found (token sk-proj-abc123def456ghi789)"
    scrubbed = scrub_for_peer(text)
    assert scrubbed.startswith("engine gpu at [url] said: model 'x' not found")
    assert "10.0.0.5" not in scrubbed and "sk-proj" not in scrubbed
    body = json.dumps({"error": {"message": "connect to 192.168.1.4:11434 failed", "type": "upstream_error"}})
    assert json.loads(scrubbed_error_body(body.encode())) == {
        "error": {"message": "connect to [address] failed", "type": "upstream_error"}}
    assert printable("a\x1b[1mb\x9b31mc\u202ed\x00e") == "abcde"
