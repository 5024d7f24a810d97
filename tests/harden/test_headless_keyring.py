"""A headless machine without a credential store (issue 14, row 15).

The node runs with the keyring package's "fail" backend, which is what a Linux machine without a
Secret Service gets: commands that need no credential work; one that does fails with one line
naming the missing store and how to provide one."""

from __future__ import annotations

import json

from app.harness import NodeProc, TinyProc

NO_STORE = {"PYTHON_KEYRING_BACKEND": "keyring.backends.fail.Keyring"}


def test_commands_without_credentials_work_and_the_rest_say_what_is_missing(
        node_factory: type[NodeProc], tiny_factory: type[TinyProc]) -> None:
    tiny = tiny_factory("--api", "openai", "--model", "m")
    node = node_factory("headless", env=NO_STORE).start()
    node.cli("engines", "add", "plain", "--url", tiny.url, "--api", "openai")
    assert [e["name"] for e in node.cli_json("engines", "list")] == ["plain"]
    node.cli("engines", "remove", "plain")  # used to fail: "the OS keyring could not delete ..."
    assert node.cli_json("engines", "list") == []

    result = node.cli("engines", "add", "locked", "--url", tiny.url, "--api", "openai", "--token-stdin",
                      stdin="sk-test-token-123456\n", check=False)
    assert result.returncode == 1
    lines = result.stderr.strip().splitlines()
    assert len(lines) == 1 and "Traceback" not in result.stderr, result.stderr
    assert "cannot keep the credential for" in lines[0] and "no OS credential store is available" in lines[0]
    assert "Headless machines" in lines[0] and "dbus-run-session" in lines[0]
    assert "sk-test-token" not in result.stderr + result.stdout
    # Nothing half-done: no engine was added.
    assert node.cli_json("engines", "list") == []
    node.stop()
    assert "sk-test-token" not in json.dumps(json.loads((node.home / "settings.json").read_text()))
