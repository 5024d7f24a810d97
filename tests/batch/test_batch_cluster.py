"""A batch spreads over the cluster: a paired peer's engine is one more copy of the model."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from app.harness import wait_until
from tests.batch.support import (
    chat_lines,
    client_of,
    results,
    upload_and_create,
    wait_engines,
    wait_final,
    write_input,
)
from tests.cluster.multinode import pair
from tests.support.patience import patience


def test_a_batch_runs_on_this_node_and_a_peer(node_factory: Any, tiny_factory: Any, tmp_path: Path) -> None:
    here_tiny = tiny_factory("--model", "tiny", "--first-byte-delay-s", "0.05")
    peer_tiny = tiny_factory("--model", "tiny", "--first-byte-delay-s", "0.05")
    here = node_factory("here", env={"PAIRWISE_PEER_POLL_S": "0.3"}).start(wait_answer=True)
    peer = node_factory("peer", env={"PAIRWISE_PEER_POLL_S": "0.3"}).start(wait_answer=True)
    here.add_engine("desk", here_tiny.url, capacity=4)
    peer.add_engine("tower", peer_tiny.url, capacity=4)
    wait_engines(here, "desk")
    wait_engines(peer, "tower")
    pair(peer, here)
    wait_until(lambda: any(n.get("name") == "peer" and "tiny" in str(n.get("models")) for n in here.cli_json("nodes")),
               patience(30), "the peer's model to be known here")
    client = client_of(here)
    done = wait_final(client, upload_and_create(client, write_input(tmp_path, chat_lines(200))).id, timeout=180)
    assert done.status == "completed" and done.error_file_id is None
    assert len(results(client, done.output_file_id)) == 200
    copies = {row["kind"]: row["done"] for row in done.model_extra["pairwise"]["copies"]}  # type: ignore[index]
    assert copies.get("engine", 0) > 0 and copies.get("peer", 0) > 0 and sum(copies.values()) == 200
    assert here_tiny.stats()["inferences"] > 0 and peer_tiny.stats()["inferences"] > 0
