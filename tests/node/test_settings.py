"""Run-time settings through the service API: what the tray's Settings view changes, the CLI changes."""

from __future__ import annotations

import json
import subprocess
import sys

import pytest

from app.control_client import ControlClient
from app.harness import REPO, NodeProc
from app.home import Home
from app.services.errors import ConfigError


def test_off_lan_routing_is_set_from_the_cli_and_kept(node_factory: type[NodeProc]) -> None:
    node = node_factory("setter").start()
    assert node.cli_json("settings") == {"off_lan": "allow"}
    changed = node.cli("settings", "off-lan", "deny")
    assert changed.stdout.strip() == "off-LAN routing: deny"
    assert node.cli_json("settings") == {"off_lan": "deny"}
    assert json.loads((node.home / "settings.json").read_text())["off_lan"] == "deny"
    node.kill()
    node.start()
    assert node.cli_json("settings") == {"off_lan": "deny"}  # remembered across a restart


def test_a_policy_that_is_neither_allow_nor_deny_is_refused_by_name(node_factory: type[NodeProc]) -> None:
    node = node_factory("strict").start()
    assert node.cli("settings", "off-lan", "maybe", check=False).returncode == 2
    client = ControlClient(Home(node.home))
    with pytest.raises(ConfigError) as refused:
        client.call("PATCH", "/settings", {"off_lan": "maybe"})
    assert refused.value.status == 400
    assert refused.value.message == "off-LAN policy must be allow or deny, not 'maybe'"
    # One spelling: the key ``GET /settings`` reads; another is refused by name, not ignored.
    with pytest.raises(ConfigError) as misspelt:
        client.call("PATCH", "/settings", {"policy": "deny"})
    assert misspelt.value.message == "policy: Extra inputs are not permitted"
    assert node.cli_json("settings") == {"off_lan": "allow"}  # nothing changed


def test_the_change_is_one_event_that_events_text_renders(node_factory: type[NodeProc]) -> None:
    node = node_factory("watched").start()
    follower = subprocess.Popen([sys.executable, "-m", "app", "--home", str(node.home), "events", "--text"],
                                stdout=subprocess.PIPE, text=True, cwd=REPO, env=node.env)
    try:
        assert follower.stdout is not None
        assert follower.stdout.readline().strip() == "following the events of watched"
        node.cli("settings", "off-lan", "deny")
        line = follower.stdout.readline().strip()
        assert line.endswith("node_changed: watched: off-LAN routing deny"), line
    finally:
        follower.terminate()
        follower.wait(5)
