"""Two paired nodes (separate processes): A sponsors a rented node (the tiny model behind HTTPS
with a test CA); B sees it in its node list, is refused by name while sharing is off, and is served
(streamed, through A) once it is on. The workload is off-LAN on both nodes, with the rented node as
serving node. Neither node's home nor log holds the token.
"""

from __future__ import annotations

from typing import Any

import httpx
import openai

from app.harness import NodeProc, wait_until
from tests.rented.conftest import TOKEN
from tests.rented.test_sponsor_e2e import Events, files_containing

FAST = {"PAIRWISE_PEER_POLL_S": "0.3"}


def pair(inviter: NodeProc, joiner: NodeProc) -> None:
    invite = inviter.cli_json("pair", "invite")
    joiner.cli("pair", "join", invite["address"], "--pin", invite["pin"])


def rented_row(node: NodeProc, **match: Any) -> dict[str, Any] | None:
    rows = [n for n in node.cli_json("nodes") if n.get("kind") == "rented"]
    return next((r for r in rows if all(r.get(k) == v for k, v in match.items())), None)


def ask(node: NodeProc, stream: bool = False) -> Any:
    client = openai.OpenAI(base_url=node.url + "/v1", api_key="unused", max_retries=0)
    return client.chat.completions.with_streaming_response.create(
        model="rented-model", messages=[{"role": "user", "content": "hello from B"}], stream=stream)


def test_sharing_off_then_on(node_factory: Any, tls_tiny_factory: Any) -> None:
    tiny = tls_tiny_factory("--require-token", TOKEN, "--model", "rented-model")
    a = node_factory("A", env=FAST).start()
    b = node_factory("B", env=FAST).start()
    pair(a, b)
    a.cli("rented", "attach", "gpu", "--url", tiny.url, "--ca-file", tiny.ca_file, "--token-stdin",
          "--gpu", "1x L4", "--price-per-hour", "0.8", stdin=TOKEN)

    # B lists A's rented node, from A's facts over mutual TLS: no URL, no token.
    row = wait_until(lambda: rented_row(b, name="gpu", shared=False), what="B to see A's rented node")
    assert row["label"] == "Rented · off-LAN" and row["sponsor"] == "A" and row["provider"] == "openai-compatible"
    assert row["gpu"] == "1x L4" and row["price_per_hour"] == 0.8 and row["state"] == "eligible"
    assert row["policy"] == "when-no-local-node" and row["eligible"] is True
    assert "url" not in row and tiny.url not in str(row)

    # B's model lists show only what B's callers may use.
    assert "rented-model" not in [m["id"] for m in httpx.get(f"{b.url}/v1/models", timeout=10).json()["data"]]

    # Sharing off: B's request is refused, naming the rented node and saying sharing is off.
    try:
        with ask(b):
            raise AssertionError("B's request should have been refused")
    except openai.APIStatusError as exc:
        assert exc.status_code == 403
        assert "gpu" in str(exc) and "sharing with the cluster is off on its sponsor A" in str(exc)

    # Sharing on: B's request is served through A, streamed, off-LAN.
    a.cli("rented", "set", "gpu", "--share", "on")
    wait_until(lambda: rented_row(b, name="gpu", shared=True), what="B to see sharing on")
    events = Events(b.home)

    def served() -> Any:
        try:
            with ask(b, stream=True) as response:
                chunks = list(response.parse())
                return response.headers, chunks
        except openai.APIStatusError:
            return None  # B's inventory of A may lag a poll behind the facts

    headers, chunks = wait_until(served, what="B's request to be served")
    assert "rented-model" in [m["id"] for m in httpx.get(f"{b.url}/v1/models", timeout=10).json()["data"]]
    assert headers["x-pairwise-off-lan"] == "gpu" and headers["x-pairwise-node"] == "gpu"
    assert "".join(c.choices[0].delta.content or "" for c in chunks if c.choices)
    job_id = headers["x-pairwise-job"]

    def job_on(node: NodeProc) -> dict[str, Any] | None:
        found = [j for j in node.cli_json("jobs") if j["id"] == job_id and j["state"] == "completed"]
        return found[0] if found else None

    for node in (a, b):
        job = wait_until(lambda node=node: job_on(node), what=f"the job on {node.name}")
        assert job["off_lan"] is True and job["rented_node"] == "gpu" and job["serving_node"] == "gpu"
        assert job["origin_node"] == "B"
    # The sponsor's meter prices the work; the origin's copy learns the same cost.
    cost_on_a = wait_until(lambda: (job_on(a) or {}).get("cost_usd"), what="the cost on the sponsor")
    assert cost_on_a > 0
    wait_until(lambda: (job_on(b) or {}).get("cost_usd") == cost_on_a, what="the cost on the origin")
    assert wait_until(lambda: events.of("off_lan_prompt"), what="off_lan_prompt on B")[0]["job_id"] == job_id
    events.close()

    a.stop()
    b.stop()
    for node in (a, b):
        assert files_containing(node.home, TOKEN.encode()) == []
        assert TOKEN not in node.log.read_text()


def test_peer_rented_node_keeps_its_policy_across_the_cluster(node_factory: Any, tls_tiny_factory: Any,
                                                              tiny_factory: Any) -> None:
    """B has its own engine for the model; A's shared rented node is paid off-LAN capacity to B, routed
    under B's policy for it, never ranked as a LAN peer: default policy → B's busy engine still serves;
    A's own claim of overflow changes nothing on B (issue 26: peers propose, this node decides); B's
    overflow → the busy engine overflows to A's rented node; B's engine down → the rented node serves."""
    import threading

    rented = tls_tiny_factory("--require-token", TOKEN, "--model", "rented-model")
    local = tiny_factory("--api", "openai", "--model", "rented-model", "--tokens-per-s", "20")
    a = node_factory("A", env=FAST).start()
    b = node_factory("B", env=FAST).start()
    pair(a, b)
    a.cli("rented", "attach", "gpu", "--url", rented.url, "--ca-file", rented.ca_file, "--token-stdin", "--share",
          "--price-per-hour", "0.8", stdin=TOKEN)
    b.cli("engines", "add", "own", "--url", local.url, "--api", "openai", "--capacity", "1")
    wait_until(lambda: rented_row(b, name="gpu", shared=True), what="B to see A's shared rented node")

    def served_by_while_busy() -> tuple[str, str | None]:
        local.config(reply_tokens=60)  # about 3 s at 20 tokens/s: B's only slot stays busy
        started = threading.Event()

        def hold() -> None:
            with ask(b, stream=True) as response:
                started.set()
                for _ in response.iter_bytes():
                    pass

        holder = threading.Thread(target=hold)
        holder.start()
        started.wait(30)
        local.config(reply_tokens=3)
        with ask(b) as response:
            result = response.headers["x-pairwise-node"], response.headers.get("x-pairwise-off-lan")
        holder.join(60)
        return result

    assert served_by_while_busy() == ("B", None)  # default policy: a busy local engine is still local
    a.cli("rented", "set", "gpu", "--use", "overflow")
    wait_until(lambda: rented_row(b, name="gpu", sponsor_policy="overflow"), what="B to see A's claim")
    assert rented_row(b, name="gpu", policy="when-no-local-node")  # a claim, not B's rule
    assert served_by_while_busy() == ("B", None)
    b.cli("settings", "peer-rented", "gpu", "--use", "overflow")
    wait_until(lambda: rented_row(b, name="gpu", policy="overflow"), what="B's own overflow policy")
    assert served_by_while_busy() == ("gpu", "gpu")

    b.cli("settings", "peer-rented", "gpu", "--use", "default")
    wait_until(lambda: rented_row(b, name="gpu", policy="when-no-local-node"), what="policy back to default")
    local.stop()
    with ask(b) as response:
        assert response.headers["x-pairwise-off-lan"] == "gpu"
    assert b.cli_json("jobs")[0]["serving_node"] == "gpu" and b.cli_json("jobs")[0]["off_lan"] is True
