"""Pairing by PIN between node processes, through the CLI: the right PIN, each refusal, removal."""

from __future__ import annotations

import datetime as dt
import json
import subprocess
import sys

from app.harness import REPO, NodeProc, wait_until
from tests.cluster.multinode import FAST, api, free_port, pair, pinned, wait_online


def refused(node: NodeProc, address: str, pin: str) -> str:
    result = node.cli("pair", "join", address, "--pin", pin, check=False)
    assert result.returncode == 1, result.stdout
    return result.stderr


def test_pair_by_pin_remove_and_pair_again(node_factory: type[NodeProc]) -> None:
    a = node_factory("alpha", env=FAST).start()
    b = node_factory("beta", env=FAST).start()
    invite = a.cli_json("pair", "invite")
    assert set(invite) == {"pin", "address", "expires_at"}
    assert len(invite["pin"]) == 6 and invite["pin"].isdigit()
    host, port = invite["address"].rsplit(":", 1)
    assert host == "127.0.0.1" and int(port) != int(a.runtime["cluster"].rsplit(":", 1)[1])
    ttl = dt.datetime.fromisoformat(invite["expires_at"]) - dt.datetime.now(dt.UTC)
    assert dt.timedelta(minutes=4) < ttl <= dt.timedelta(minutes=5)

    joined = b.cli("pair", "join", invite["address"], "--pin", invite["pin"]).stdout
    assert f"paired with alpha ({a.runtime['node_id']})" in joined
    assert [p["id"] for p in a.cli_json("pair", "list")] == [b.runtime["node_id"]]
    assert pinned(b) == [a.runtime["node_id"]]
    assert wait_online(a, b)["kind"] == "peer"
    wait_online(b, a)
    wait_until(lambda: a.cli_json("pair", "status")["state"] == "used", what="the invite to read 'used'")

    # Removing on one side: the other side stops trusting too.
    removed = b.cli("pair", "remove", "alpha").stdout
    assert "removed alpha; alpha stopped trusting this node too" in removed
    assert pinned(b) == []
    wait_until(lambda: pinned(a) == [], what="alpha to drop beta's pin")
    assert all(n["kind"] == "local" for n in b.cli_json("nodes"))

    # ...and they can pair again.
    pair(a, b)


def test_wrong_used_member_expired_and_void_pins(node_factory: type[NodeProc]) -> None:
    a = node_factory("alpha", env=FAST).start()
    b = node_factory("beta", env=FAST).start()
    c = node_factory("gamma", env=FAST).start()

    invite = a.cli_json("pair", "invite")
    wrong = f"{(int(invite['pin']) + 1) % 10**6:06d}"
    assert "wrong PIN (2 tries left)" in refused(b, invite["address"], wrong)
    b.cli("pair", "join", invite["address"], "--pin", invite["pin"])  # a wrong try does not spend the PIN
    assert "PIN already used" in refused(c, invite["address"], invite["pin"])

    again = a.cli_json("pair", "invite")
    assert "this node is already a member" in refused(b, again["address"], again["pin"])
    assert a.cli_json("pair", "status")["state"] == "pending"  # a member knocking does not spend it

    short = a.cli_json("pair", "invite", "--ttl", "1")
    wait_until(lambda: api(a, "GET", "/pair/invite")["state"] == "expired", what="the invite to expire")
    assert "PIN expired" in refused(c, short["address"], short["pin"])

    last = a.cli_json("pair", "invite")
    wrong = f"{(int(last['pin']) + 1) % 10**6:06d}"
    assert "wrong PIN (2 tries left)" in refused(c, last["address"], wrong)
    assert "wrong PIN (1 try left)" in refused(c, last["address"], wrong)
    assert "too many wrong tries; the PIN is void" in refused(c, last["address"], wrong)
    assert "the PIN is void" in refused(c, last["address"], last["pin"])
    assert pinned(a) == [b.runtime["node_id"]] and pinned(c) == []


def test_invite_wait_prints_the_joined_node(node_factory: type[NodeProc]) -> None:
    a = node_factory("alpha", env=FAST).start()
    b = node_factory("beta", env=FAST).start()
    waiting = subprocess.Popen(
        [sys.executable, "-m", "app", "--home", str(a.home), "pair", "invite", "--json", "--wait"],
        stdout=subprocess.PIPE, text=True, env=a.env, cwd=REPO)
    try:
        assert waiting.stdout is not None
        invite = json.loads(waiting.stdout.readline())
        b.cli("pair", "join", invite["address"], "--pin", invite["pin"])
        joined = json.loads(waiting.stdout.readline())
        assert joined["paired"]["id"] == b.runtime["node_id"] and joined["paired"]["name"] == "beta"
        assert waiting.wait(30) == 0
    finally:
        if waiting.poll() is None:
            waiting.kill()
        if waiting.stdout:
            waiting.stdout.close()


def test_removed_while_away_is_told_when_reachable(node_factory: type[NodeProc]) -> None:
    port = free_port()
    a = node_factory("alpha", "--cluster-listen", f"127.0.0.1:{port}", env=FAST).start()
    b = node_factory("beta", env=FAST).start()
    pair(a, b)
    a.stop()
    message = b.cli("pair", "remove", a.runtime["node_id"][:8]).stdout
    assert "could not be told now" in message and "it will be told when it can be reached" in message
    assert pinned(b) == []
    a.start()  # same cluster address: the notice kept on beta reaches it
    wait_until(lambda: pinned(a) == [], what="alpha to hear it was removed")
    assert b.cli_json("pair", "list") == []
