"""The `pairwise rented` commands against a running node: apply a YAML declaration, list, set every
flag, detach (the token leaves the keyring); and a node whose own callers may not go off-LAN."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import httpx
import keyring

from tests.rented.conftest import TOKEN

DECLARATION = """
rented_node:
  name: gpu
  provider: openai-compatible
  url: {url}
  ca_file: {ca_file}
  credential: os-credential-store:pair/gpu
  models: [rented-model]
  gpu: 1x A100 80 GB
  price_per_hour: 2.5
  routing:
    use: overflow
"""


def test_apply_list_set_detach_and_off_lan_deny(node_factory: Any, tls_tiny_factory: Any, tmp_path: Path) -> None:
    tiny = tls_tiny_factory("--require-token", TOKEN, "--model", "rented-model")
    home = tmp_path / "home-A"
    home.mkdir()
    (home / "settings.json").write_text(json.dumps({"off_lan": "deny"}))
    node = node_factory("A", home=home).start()

    declaration = tmp_path / "gpu.yaml"
    declaration.write_text(DECLARATION.format(url=tiny.url, ca_file=tiny.ca_file))
    out = node.cli("rented", "apply", str(declaration), "--token-stdin", stdin=TOKEN).stdout
    assert "rented node gpu (Rented · off-LAN): eligible; models: rented-model" in out
    listing = node.cli("rented", "list").stdout
    assert "gpu" in listing and "overflow" in listing and "$2.50/h" in listing
    nodes = node.cli("nodes").stdout
    assert "Rented · off-LAN" in nodes and "1x A100 80 GB" in nodes

    # This node denies off-LAN routing for its own callers: refused, and the refusal says why.
    answer = httpx.post(node.url + "/v1/chat/completions", timeout=30,
                        json={"model": "rented-model", "messages": [{"role": "user", "content": "hi"}]})
    assert answer.status_code == 403 and "off_lan: deny" in answer.text and "gpu" in answer.text

    row = node.cli_json("rented", "set", "gpu", "--share", "on", "--use", "prefer", "--cold-start-s", "42.5",
                        "--managed", "on", "--idle-pause-min", "0.5", "--budget-usd-per-day", "1.25",
                        "--budget-usd-per-month", "20", "--wake-on-request", "on", "--pause-on-exit", "off",
                        "--allow-model", "rented-model")
    assert row["shared"] is True and row["policy"] == "prefer" and row["cold_start_s"] == 42.5
    assert row["lifecycle"] == {"managed": True, "wake_on_request": True, "idle_pause_min": 0.5,
                                "pause_on_sponsor_exit": False}
    assert row["budget"] == {"usd_per_day": 1.25, "usd_per_month": 20.0}
    assert row["allow_models"] == ["rented-model"] and row["models"] == ["rented-model"]
    assert node.cli_json("rented", "show", "gpu")["policy"] == "prefer"
    bad = node.cli("rented", "set", "gpu", "--url", "http://203.0.113.9", check=False)
    assert bad.returncode == 1 and "rule 'http:// only for loopback hosts'" in bad.stderr

    service = f"pairwise:{node.runtime['node_id']}"
    assert keyring.get_password(service, "rented:gpu") == TOKEN
    assert "detached" in node.cli("rented", "detach", "gpu").stdout
    assert keyring.get_password(service, "rented:gpu") is None
    assert node.cli_json("rented", "list") == []
    missing = node.cli("rented", "show", "gpu", check=False)
    assert missing.returncode == 1 and "no rented node named 'gpu'" in missing.stderr
