"""A change is saved or refused, never half-applied (issue 26, item 2).

The node's home is a small tmpfs: laid over read-only while the node runs, then filled to the last
block. Every change a person makes (revoke a key, deny off-LAN routing, add an engine) is refused,
naming the file and why; the running node keeps what it had, and after the disk is back the same
changes are saved and survive a restart. Engine URLs are checked whole: CR/LF, whitespace, ports
outside 1-65535 and credentials in the user info or the query are refused, naming why."""

from __future__ import annotations

import json
from pathlib import Path

import httpx

from app.harness import NodeProc
from tests.harden.disk import small_disk


def make_key(node: NodeProc, name: str) -> str:
    key = node.cli("keys", "create", name).stdout.strip()
    assert key.startswith("pw-")
    return key


def key_status(node: NodeProc, key: str) -> int:
    return httpx.get(f"{node.url}/v1/models", headers={"Authorization": f"Bearer {key}"}, timeout=10).status_code


def refused(node: NodeProc, *args: str) -> str:
    result = node.cli(*args, check=False)
    assert result.returncode != 0, result.stdout
    return result.stderr + result.stdout


def test_changes_the_home_cannot_take_are_refused_and_nothing_changes(node_factory: type[NodeProc],
                                                                       tmp_path: Path) -> None:
    with small_disk(tmp_path / "home") as disk:
        node = node_factory("alpha", home=disk.path).start()
        try:
            key = make_key(node, "ci")
            assert key_status(node, key) == 200

            disk.read_only()
            said = refused(node, "keys", "revoke", "ci")
            assert "keys.json" in said and "read-only" in said and "revoking key ci was not saved" in said
            assert key_status(node, key) == 200  # the revocation was refused, not half made
            said = refused(node, "settings", "off-lan", "deny")
            assert "settings.json" in said and "read-only" in said
            assert node.cli_json("settings", "--json")["off_lan"] == "allow"
            said = refused(node, "engines", "add", "e1", "--url", "http://127.0.0.1:9/", "--api", "openai")
            assert "settings.json" in said and "read-only" in said
            assert node.cli_json("engines", "list", "--json") == []
            assert "Server got itself in trouble" not in said
            said = refused(node, "lan", "on", "127.0.0.2:0")  # its CA or its setting: named, and why
            assert "was not saved" in said and "read-only" in said
            assert not node.cli_json("lan", "status")["on"]  # not saved, so not open

            disk.writable()
            disk.fill()
            said = refused(node, "settings", "off-lan", "deny")
            assert "settings.json" in said and "the disk is full" in said
            assert node.cli_json("settings", "--json")["off_lan"] == "allow"
            said = refused(node, "keys", "revoke", "ci")
            assert "keys.json" in said and "the disk is full" in said
            assert key_status(node, key) == 200

            disk.free()
            node.cli("settings", "off-lan", "deny")
            node.cli("keys", "revoke", "ci")
            assert key_status(node, key) == 401
            node.stop()
            node.start()
            assert node.cli_json("settings", "--json")["off_lan"] == "deny"
            assert key_status(node, key) == 401
        finally:
            node.stop()


BAD_URLS = [
    ("http://127.0.0.1:9/\r\nX-Evil: 1", "whitespace or control characters"),
    ("http://127.0.0.1:9/a\nb", "whitespace or control characters"),
    ("http://127.0.0.1:9/a b", "whitespace or control characters"),
    ("http://127.0.0.1:0/", "port must be a number from 1 to 65535"),
    ("http://127.0.0.1:99999/", "port must be a number from 1 to 65535"),
    ("http://user:hunter2@127.0.0.1:9/", "--token-stdin"),
    ("http://127.0.0.1:9/v1?api_key=sk-live-abcdef", "--token-stdin"),
    ("http://127.0.0.1:9/v1?x-goog-api-key=abc", "--token-stdin"),
    ("ftp://127.0.0.1:9/", "http:// or https://"),
]


def test_engine_urls_are_checked_whole(node_factory: type[NodeProc]) -> None:
    node = node_factory("alpha").start()
    token = (node.home / "control_token").read_text().strip()
    for url, why in BAD_URLS:
        answer = httpx.post(f"{node.url}/_pairwise/v1/engines", json={"name": "e1", "url": url, "api": "openai"},
                            headers={"Authorization": f"Bearer {token}"})
        assert answer.status_code == 400 and why in answer.json()["error"], (url, answer.text)
    said = refused(node, "engines", "add", "e2", "--url", BAD_URLS[0][0], "--api", "openai")
    assert BAD_URLS[0][1] in said
    said = refused(node, "engines", "add", "e2", "--url", BAD_URLS[6][0], "--api", "openai")
    assert "--token-stdin" in said and "sk-live-abcdef" not in said
    settings = json.loads((node.home / "settings.json").read_text()) if (node.home / "settings.json").exists() else {}
    assert settings.get("engines", []) == []
    listed = node.cli("engines", "list").stdout
    assert "hunter2" not in listed and "sk-live-abcdef" not in listed
    assert httpx.get(f"{node.url}/api/tags", timeout=10).status_code == 200
