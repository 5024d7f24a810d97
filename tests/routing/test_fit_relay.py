"""A peer's request takes the same decisions through the relay: the sponsor's names and its largest
window reach the peer in the inventory, the peer relays by either name, and the sponsor picks the copy
that holds the request (its local copy for a short prompt, its shared rented copy for a long one)."""

from __future__ import annotations

from typing import Any

import openai
import pytest

from tests.cluster.multinode import FAST, pair, wait_models
from tests.routing.conftest import LOCAL, LOCAL_WINDOW, RENTED_WINDOW, REPO, make_copies
from tests.routing.test_fit import HUGE, LONG, SHORT


def job(node: Any, job_id: str) -> dict[str, Any]:
    return next(j for j in node.cli_json("jobs", "--limit", "20") if j["id"] == job_id)  # type: ignore[no-any-return]


def test_peer_request_goes_where_it_fits(sim_factory: Any, node_factory: Any, tiny_factory: Any) -> None:
    copies = make_copies(sim_factory, node_factory, tiny_factory, "--share", **FAST)
    sponsor = copies.node
    peer = node_factory("beta", env=FAST).start()
    pair(sponsor, peer)
    wait_models(peer, sponsor, LOCAL)
    client = openai.OpenAI(base_url=peer.url + "/v1", api_key="x", max_retries=0)

    raw = client.chat.completions.with_raw_response.create(model=REPO, messages=SHORT, max_tokens=3)
    assert raw.parse().model == REPO  # the sponsor's other name for its model, relayed and answered under it
    served = job(sponsor, raw.headers["x-pairwise-job"])
    assert served["rented_node"] is None and served["engine"] == "local"

    chunks = list(client.chat.completions.create(model=LOCAL, messages=LONG, max_tokens=5, stream=True))
    assert {c.model for c in chunks} == {LOCAL}
    record = peer.cli_json("jobs", "--limit", "1")[0]
    assert record["off_lan"] and f"window {RENTED_WINDOW}" in record["route"]
    at_sponsor = job(sponsor, record["id"])
    assert at_sponsor["rented_node"] == "gpu" and f"too small: local (window {LOCAL_WINDOW})" in at_sponsor["route"]

    with pytest.raises(openai.BadRequestError, match=f"holds {RENTED_WINDOW}"):
        client.chat.completions.create(model=LOCAL, messages=HUGE)
