"""Peers propose, this node decides (issue 26, items 1 and 7).

A real node pairs with another, which then stops; a hostile peer takes its place on the same
address with the same pinned certificate and says what an attacker would: a shared rented node
with policy ``prefer`` for the model this node serves on an idle local engine, a flood of models
with huge names, control characters in its name."""

from __future__ import annotations

import json
from collections.abc import Iterator
from typing import Any

import httpx
import openai
import pytest

from app.harness import NodeProc, TinyProc, wait_until
from tests.cluster.hostile import HostilePeer
from tests.cluster.multinode import FAST, nodes, pair


@pytest.fixture
def hostile_pair(node_factory: type[NodeProc], tiny_factory: type[TinyProc]) -> Iterator[tuple[NodeProc, HostilePeer]]:
    tiny = tiny_factory("--api", "openai", "--model", "m")
    alpha = node_factory("alpha", env=FAST).start()
    alpha.add_engine("local", tiny.url)
    beta = node_factory("beta", env=FAST).start()
    pair(alpha, beta)
    address = beta.runtime["cluster"]
    beta.stop()
    hostile = HostilePeer(beta.home, address, "beta").start()
    try:
        yield alpha, hostile
    finally:
        hostile.stop()


def rented_fact(**fields: Any) -> dict[str, Any]:
    return {"id": "rent-gpu-1", "name": "gpu", "kind": "rented", "provider": "huggingface", "state": "eligible",
            "shared": True, "eligible": True, "online": True, "off_lan": True, "models": ["m"],
            "in_flight": 0, "capacity": 4, "policy": "prefer", **fields}


def chat(node: NodeProc, model: str = "m") -> str:
    client = openai.OpenAI(base_url=f"{node.url}/v1", api_key="unused", max_retries=0, timeout=30)
    answer = client.chat.completions.create(model=model, messages=[{"role": "user", "content": "hi"}])
    return answer.choices[0].message.content or ""


def peer_row(node: NodeProc, kind: str, name: str) -> dict[str, Any] | None:
    return next((r for r in nodes(node) if r.get("kind") == kind and r.get("name") == name and r.get("online")), None)


def test_a_peers_prefer_claim_never_takes_this_nodes_local_traffic(hostile_pair: tuple[NodeProc, HostilePeer]) -> None:
    alpha, hostile = hostile_pair
    alpha_id = alpha.runtime["node_id"]
    # It claims its rented node prefers traffic, and even that this node sponsors it.
    hostile.inventory["models"] = [{"name": "m", "lan": False}]
    hostile.facts["shared_nodes"] = [rented_fact(sponsor="alpha", sponsor_id=alpha_id)]
    seen = wait_until(lambda: peer_row(alpha, "rented", "gpu"), timeout=30, what="alpha to see the peer's rented node")
    assert seen["policy"] == "when-no-local-node" and seen["sponsor_policy"] == "prefer"
    assert seen["sponsor_id"] == hostile.node_id and seen["via"] == "beta"

    for _ in range(3):
        assert chat(alpha) != hostile.reply
    assert hostile.relayed == []  # not one prompt reached the peer

    # The user raises it, for this rented node only: saved, shown, and then it is used first.
    shown = alpha.cli("settings", "peer-rented", "gpu", "--use", "prefer").stdout
    assert "gpu via beta: prefer (its sponsor asks for prefer)" in shown
    assert json.loads((alpha.home / "settings.json").read_text())["peer_rented"] == {"rent-gpu-1": "prefer"}
    assert chat(alpha) == hostile.reply and len(hostile.relayed) == 1
    # And back: the default forgets the rule.
    alpha.cli("settings", "peer-rented", "gpu", "--use", "default")
    assert chat(alpha) != hostile.reply and len(hostile.relayed) == 1
    missing = alpha.cli("settings", "peer-rented", "nope", "--use", "prefer", check=False)
    assert missing.returncode != 0 and "no peer shares a rented node named 'nope'" in missing.stderr + missing.stdout


def test_a_peers_inventory_is_bounded_and_its_names_cleaned(hostile_pair: tuple[NodeProc, HostilePeer]) -> None:
    alpha, hostile = hostile_pair
    # 10,000 models with long names and details, and a name built to split a response header.
    models = [{"name": f"flood-{i}-" + "x" * 400, "details": {"family": "y" * 300, "junk": "z" * 100}}
              for i in range(10_000)]
    hostile.inventory.update(name="evil\r\nX-Injected: 1", models=[{"name": "peer-only"}, *models],
                             load={"in_flight": 0, "capacity": 10**12, "by_origin": {}})
    hostile.facts["engines"] = [{"name": f"e{i}", "models": ["a" * 900]} for i in range(1000)]

    def flooded() -> list[str] | None:
        names = [m["name"] for m in httpx.get(f"{alpha.url}/api/tags", timeout=30).json()["models"]]
        return names if "peer-only" in names else None

    names = wait_until(flooded, timeout=30, what="alpha to list the peer's models")
    assert len(names) <= 512 + 1 and max(len(n) for n in names) <= 200
    tags = httpx.get(f"{alpha.url}/api/tags", timeout=30)
    assert len(tags.content) < 1_000_000
    assert all("junk" not in json.dumps(m) for m in tags.json()["models"])
    row = next(r for r in nodes(alpha) if r.get("kind") == "peer")
    assert len(row["engines"]) <= 32 and "\r" not in row["name"] and "\n" not in row["name"]

    # The peer serves it (no x-pairwise-node header of its own): the caller's reply is whole, and no
    # header carries a control character.
    reply = httpx.post(f"{alpha.url}/v1/chat/completions", timeout=30,
                       json={"model": "peer-only", "messages": [{"role": "user", "content": "hi"}]})
    assert reply.status_code == 200, reply.text
    assert reply.json()["choices"][0]["message"]["content"] == hostile.reply
    assert "x-injected" not in reply.headers
    assert all("\r" not in v and "\n" not in v for v in reply.headers.values())
