"""The Files and Batch APIs through the front door with the real openai SDK: a 500-line batch over
two engines of different speed, every custom_id once, spread over both."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import openai
import pytest

from tests.batch.support import (
    chat_lines,
    client_of,
    results,
    two_engines,
    upload_and_create,
    wait_final,
    write_input,
)


def test_a_500_line_batch_over_two_engines_completes_every_line_once(node_factory: Any, tiny_factory: Any,
                                                                      tmp_path: Path) -> None:
    node, fast, slow = two_engines(node_factory, tiny_factory)
    client = client_of(node)
    path = write_input(tmp_path, chat_lines(500))
    batch = upload_and_create(client, path, metadata={"purpose": "test"})
    assert batch.status in ("validating", "in_progress") and batch.endpoint == "/v1/chat/completions"
    done = wait_final(client, batch.id, timeout=180)
    assert done.status == "completed", done
    assert done.request_counts is not None
    assert (done.request_counts.total, done.request_counts.completed, done.request_counts.failed) == (500, 500, 0)
    assert done.error_file_id is None and done.output_file_id is not None
    lines = results(client, done.output_file_id)
    assert sorted(line["custom_id"] for line in lines) == sorted(f"req-{i}" for i in range(500))
    for line in lines:
        assert line["error"] is None and line["response"]["status_code"] == 200
        body = line["response"]["body"]
        assert body["object"] == "chat.completion" and body["choices"][0]["message"]["role"] == "assistant"
        assert body["usage"]["completion_tokens"] >= 1
    served = {"fast": fast.stats()["inferences"], "slow": slow.stats()["inferences"]}
    assert served["fast"] > 0 and served["slow"] > 0 and sum(served.values()) >= 500
    assert served["fast"] > served["slow"]  # the faster copy did more of the work
    extra: dict[str, Any] = done.model_extra or {}
    copies = {row["copy"]: row["done"] for row in extra["pairwise"]["copies"]}
    assert set(copies) == {"fast", "slow"} and sum(copies.values()) == 500
    assert done.usage is not None and done.usage.output_tokens >= 500
    assert done.metadata is not None and done.metadata["purpose"] == "test" and "cost_usd" in done.metadata
    # The objects the SDK types: list and files.
    assert any(b.id == batch.id for b in client.batches.list(limit=5).data)
    output = client.files.retrieve(done.output_file_id)
    assert output.purpose == "batch_output" and output.bytes > 0


def test_files_api_upload_retrieve_content_delete(node_factory: Any, tmp_path: Path) -> None:
    node = node_factory("files").start(wait_answer=True)
    client = client_of(node)
    path = write_input(tmp_path, chat_lines(3))
    with path.open("rb") as fh:
        uploaded = client.files.create(file=fh, purpose="batch")
    assert uploaded.purpose == "batch" and uploaded.bytes == path.stat().st_size and uploaded.filename == "input.jsonl"
    assert client.files.retrieve(uploaded.id).id == uploaded.id
    assert client.files.content(uploaded.id).content == path.read_bytes()
    stored = node.home / "batches" / "files" / f"{uploaded.id}.jsonl"
    assert stored.stat().st_mode & 0o077 == 0  # the user's data, private to them
    deleted = client.files.delete(uploaded.id)
    assert deleted.deleted and deleted.id == uploaded.id and not stored.exists()
    with pytest.raises(openai.NotFoundError):
        client.files.retrieve(uploaded.id)
    with path.open("rb") as fh, pytest.raises(openai.BadRequestError):
        client.files.create(file=fh, purpose="fine-tune")
    with pytest.raises(openai.NotFoundError):
        client.batches.create(input_file_id="file-nope", endpoint="/v1/chat/completions", completion_window="24h")
