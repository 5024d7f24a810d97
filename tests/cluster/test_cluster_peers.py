"""Peers found again after their address changed, and a peer that goes silent mid-job."""

from __future__ import annotations

import httpx

from app.harness import NodeProc, TinyProc, wait_until
from tests.cluster.multinode import FAST, api, job, pair, row, wait_models, wait_online


def address_of(node: NodeProc, other: NodeProc) -> str | None:
    found = row(node, other)
    return found["address"] if found else None


def test_restarted_peer_on_a_new_port_is_found_again(node_factory: type[NodeProc]) -> None:
    a = node_factory("alpha", env=FAST).start()
    b = node_factory("beta", env=FAST).start()
    pair(a, b)
    old = a.runtime["cluster"]
    a.stop()
    wait_online(b, a, online=False)
    a.start()  # an ephemeral cluster port: almost surely another one
    assert a.runtime["cluster"] != old
    # alpha still knows beta's address and calls it; its calls name its new cluster port.
    wait_online(b, a)
    assert address_of(b, a) == a.runtime["cluster"]


def test_peers_add_finds_a_peer_when_both_moved(node_factory: type[NodeProc]) -> None:
    a = node_factory("alpha", env=FAST).start()
    b = node_factory("beta", env=FAST).start()
    pair(a, b)
    a.stop()
    b.stop()
    a.start()
    b.start()
    # Each knows only the other's old address: both stay offline.
    assert row(b, a)["online"] is False and row(a, b)["online"] is False  # type: ignore[index]
    nowhere = b.cli("peers", "add", "127.0.0.1:9").stdout
    assert "no paired node answers at 127.0.0.1:9 yet" in nowhere
    found = b.cli("peers", "add", a.runtime["cluster"]).stdout
    assert f"alpha ({a.runtime['node_id']}) answers at {a.runtime['cluster']}" in found
    wait_online(b, a)
    wait_online(a, b)  # beta's calls told alpha where beta is now
    assert address_of(a, b) == b.runtime["cluster"]
    listed = b.cli_json("peers", "list")
    assert listed["manual"] == ["127.0.0.1:9", a.runtime["cluster"]]


def test_silent_peer_running_jobs_marked_failed(node_factory: type[NodeProc], tiny_factory: type[TinyProc]) -> None:
    engine = tiny_factory("--api", "openai", "--model", "slow", "--tokens-per-s", "4", "--reply-tokens", "400")
    a = node_factory("alpha", env=FAST).start()
    b = node_factory("beta", env={**FAST, "PAIRWISE_PEER_SILENT_S": "1"}).start()
    a.cli("engines", "add", "e", "--url", engine.url, "--api", "openai")
    pair(a, b)
    wait_models(b, a, "slow")
    body = {"model": "slow", "stream": True, "messages": [{"role": "user", "content": "hi"}]}
    with httpx.stream("POST", f"{a.url}/v1/chat/completions", json=body, timeout=30) as response:
        chunks = response.iter_raw()
        next(chunks)
        job_id = response.headers["x-pairwise-job"]
        wait_until(lambda: (j := job(b, job_id)) and j["state"] == "running", what="beta to see alpha's job running")
        a.kill()
    failed = wait_until(lambda: (j := job(b, job_id)) and j["state"] == "failed" and j,
                        what="beta to fail the silent peer's job")
    assert failed["error"].startswith("node alpha went silent for ") and "while this job was running" in failed["error"]
    assert failed["origin_node"] == "alpha" and api(b, "GET", "/status")["active_jobs"] == 0
