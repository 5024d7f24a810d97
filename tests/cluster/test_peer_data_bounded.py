"""Peer data is bounded (issue 26, item 7).

Two nodes in their own processes are paired; the test speaks as beta on alpha's cluster port
(beta's own certificate, over mutual TLS): hundreds of records past alpha's retention, records
dated years ahead, and malformed and deeply nested job events. Alpha keeps its own records, the
newest of beta's up to its bound, dates nothing in the future, and answers bad input 400 without
a traceback."""

from __future__ import annotations

import asyncio
import time
from typing import Any

import openai

from app.harness import NodeProc, TinyProc, wait_until
from app.services.cluster.identity import NodeIdentity
from app.services.cluster.peer_client import PeerClient, url_for
from app.services.cluster.trust import PeerPin
from tests.cluster.multinode import FAST, api, pair
from tests.cluster.test_replicated_records import record, send_as

KEPT = 50


def all_jobs(node: NodeProc) -> list[dict[str, Any]]:
    return list(api(node, "GET", "/jobs?limit=5000")["jobs"])


async def post_raw(beta: NodeProc, alpha: NodeProc, bodies: list[bytes]) -> list[int]:
    me = NodeIdentity.load_or_create(beta.home / "identity", "beta")
    them = NodeIdentity.load_or_create(alpha.home / "identity", "alpha")
    client = PeerClient(me, PeerPin.create(them.node_id, "alpha", them.cert_pem, alpha.runtime["cluster"]), {})
    try:
        statuses = []
        for body in bodies:
            answer = await client._client.post(url_for(alpha.runtime["cluster"], "/jobs/events"), content=body,
                                               headers={"Content-Type": "application/json"},
                                               extensions={"sni_hostname": client.hostname})
            statuses.append(answer.status_code)
        return statuses
    finally:
        await client.aclose()


def test_a_peers_records_are_kept_within_bounds_and_dated_no_later_than_now(
        node_factory: type[NodeProc], tiny_factory: type[TinyProc]) -> None:
    tiny = tiny_factory("--api", "openai", "--model", "m")
    alpha = node_factory("alpha", env={**FAST, "PAIRWISE_PEER_RECORDS_KEPT": str(KEPT)}).start()
    alpha.add_engine("local", tiny.url)
    beta = node_factory("beta", env=FAST).start()
    pair(alpha, beta)
    client = openai.OpenAI(base_url=f"{alpha.url}/v1", api_key="unused", max_retries=0, timeout=30)
    client.chat.completions.create(model="m", messages=[{"role": "user", "content": "hi"}])
    own = wait_until(lambda: [j for j in all_jobs(alpha) if j["origin_node"] == "alpha"], what="alpha's own job")
    beta.stop()  # from here on only the test speaks as beta

    now = time.time()
    flood = [record(beta, id=f"flood-{i:04d}", created_at=now - 3600 + i, updated_at=now - 3600 + i)
             for i in range(600)]
    for batch in (flood[:300], flood[300:]):
        assert asyncio.run(send_as(beta, alpha, batch))["stored"] == 300
    kept = [j for j in all_jobs(alpha) if j["origin_node_id"] == beta.runtime["node_id"]]
    assert len(kept) == KEPT
    assert {j["id"] for j in kept} == {f"flood-{i:04d}" for i in range(600 - KEPT, 600)}  # the newest
    assert own[0]["id"] in {j["id"] for j in all_jobs(alpha)}  # older than all of them, and kept

    ahead = now + 10 * 365 * 86400
    asyncio.run(send_as(beta, alpha, [record(beta, id="future", created_at=ahead, updated_at=ahead,
                                             started_at=ahead, finished_at=ahead)]))
    future = next(j for j in all_jobs(alpha) if j["id"] == "future")
    for field in ("created_at", "updated_at", "started_at", "finished_at"):
        assert future[field] <= time.time() + 120, (field, future[field])

    deep = b'{"jobs": ' + b"[" * 50_000 + b"]" * 50_000 + b"}"
    statuses = asyncio.run(post_raw(beta, alpha, [deep, b"{not json", b'{"jobs": 5}', b"[1, 2]", b"\xff\xfe"]))
    assert statuses == [400, 400, 400, 400, 400]
    log = (alpha.home / "logs" / "node.log").read_text()
    assert "Traceback" not in log and "RecursionError" not in log
