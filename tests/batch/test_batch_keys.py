"""Batches and keys: a key limited to some models cannot run others through a batch, and the LAN
door (keys, other machines) offers no Files or Batch API, since a batch holds its prompts and answers."""

from __future__ import annotations

import ssl
from pathlib import Path
from typing import Any

import httpx
import openai

from tests.batch.support import chat_lines, results, upload_and_create, wait_engines, wait_final, write_input


def make_key(node: Any, name: str, *options: str) -> str:
    return str(node.cli("keys", "create", name, *options).stdout.strip())


def test_a_keys_model_patterns_hold_for_its_batch_lines(node_factory: Any, tiny_factory: Any, tmp_path: Path) -> None:
    tiny = tiny_factory("--model", "lan-model", "--model", "other-model")
    node = node_factory("keys").start(wait_answer=True)
    node.add_engine("tiny", tiny.url, capacity=4)
    wait_engines(node, "tiny")
    key = make_key(node, "phone", "--models", "lan-*")
    client = openai.OpenAI(base_url=f"{node.url}/v1", api_key=key, max_retries=0)
    lines = chat_lines(2, model="lan-model") + chat_lines(1, model="other-model", start=2)
    done = wait_final(client, upload_and_create(client, write_input(tmp_path, lines)).id)
    assert done.status == "completed"
    assert [line["custom_id"] for line in results(client, done.output_file_id)] == ["req-0", "req-1"]
    refused = results(client, done.error_file_id)
    assert [(r["custom_id"], r["error"]["code"]) for r in refused] == [("req-2", "model_not_allowed")]
    assert tiny.stats()["inferences"] == 2  # the refused line never reached the engine


def test_the_lan_door_has_no_batches(node_factory: Any, tmp_path: Path) -> None:
    node = node_factory("lan").start(wait_answer=True)
    key = make_key(node, "laptop")
    node.cli("lan", "on", "127.0.0.2:0")
    status = node.cli_json("lan", "status")
    pinned = tmp_path / "node.pem"
    pinned.write_text(node.cli("lan", "cert").stdout)
    context = ssl.create_default_context(cafile=str(pinned))
    with httpx.Client(verify=context, headers={"Authorization": f"Bearer {key}"}, timeout=10) as http:
        assert http.get(status["url"] + "/v1/models").status_code == 200  # the door and the key work
        assert http.get(status["url"] + "/v1/batches").status_code == 404
        assert http.get(status["url"] + "/v1/files").status_code == 404
    assert httpx.get(f"{node.url}/v1/batches", trust_env=False).json()["object"] == "list"  # loopback has them
