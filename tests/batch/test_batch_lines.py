"""Lines that cannot run go to the error file with their reason, and the rest go on; transient
failures are retried with backoff, permanent ones are not; Ollama /api/chat lines run too."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import httpx

from app.harness import wait_until
from tests.batch.support import (
    chat_lines,
    client_of,
    results,
    upload_and_create,
    wait_engines,
    wait_final,
    write_input,
)


def one_engine(node_factory: Any, tiny_factory: Any, *args: str, capacity: int = 4) -> tuple[Any, Any]:
    tiny = tiny_factory("--model", "tiny", *args)
    node = node_factory("lines").start(wait_answer=True)
    node.add_engine("tiny", tiny.url, capacity=capacity)
    wait_engines(node, "tiny")
    return node, tiny


def test_malformed_lines_and_unknown_models_go_to_the_error_file(node_factory: Any, tiny_factory: Any,
                                                                  tmp_path: Path) -> None:
    node, tiny = one_engine(node_factory, tiny_factory)
    client = client_of(node)
    good = chat_lines(3)
    lines: list[Any] = [
        good[0],
        b"{not json",
        {"method": "POST", "url": "/v1/chat/completions", "body": {"model": "tiny"}},  # no custom_id
        {"custom_id": "wrong-url", "method": "POST", "url": "/v1/embeddings", "body": {"model": "tiny", "input": "x"}},
        {"custom_id": "no-model", "method": "POST", "url": "/v1/chat/completions", "body": {"messages": []}},
        {"custom_id": "unknown-model", "method": "POST", "url": "/v1/chat/completions",
         "body": {"model": "no-such-model", "messages": [{"role": "user", "content": "hi"}]}},
        {"custom_id": "bad-messages", "method": "POST", "url": "/v1/chat/completions",
         "body": {"model": "tiny", "messages": "not a list"}},
        good[1], good[2],
    ]
    done = wait_final(client, upload_and_create(client, write_input(tmp_path, lines)).id)
    assert done.status == "completed"
    assert done.request_counts is not None
    assert (done.request_counts.total, done.request_counts.completed, done.request_counts.failed) == (9, 3, 6)
    assert sorted(line["custom_id"] for line in results(client, done.output_file_id)) == ["req-0", "req-1", "req-2"]
    errors = results(client, done.error_file_id)
    assert len(errors) == 6
    by_id = {line["custom_id"]: line for line in errors if line["custom_id"]}
    assert by_id["wrong-url"]["error"]["code"] == "mismatched_url"
    assert by_id["no-model"]["error"]["code"] == "missing_model"
    unknown = by_id["unknown-model"]["response"]
    assert unknown["status_code"] == 404 and "no-such-model" in unknown["body"]["error"]["message"]
    refused = by_id["bad-messages"]["response"]
    assert refused["status_code"] == 400 and refused["body"]["error"]["param"] == "messages"
    nameless = sorted(line["error"]["code"] for line in errors if line["custom_id"] is None)
    assert nameless == ["invalid_json", "missing_custom_id"]
    assert all("line 2" in line["error"]["message"] for line in errors if line["error"]
               and line["error"]["code"] == "invalid_json")


def test_a_duplicate_custom_id_fails_the_batch_while_it_validates(node_factory: Any, tiny_factory: Any,
                                                                   tmp_path: Path) -> None:
    node, _ = one_engine(node_factory, tiny_factory)
    client = client_of(node)
    lines = chat_lines(2) + chat_lines(1)
    done = wait_final(client, upload_and_create(client, write_input(tmp_path, lines)).id)
    assert done.status == "failed" and done.failed_at is not None
    assert done.errors is not None and done.errors.data is not None
    assert [e.code for e in done.errors.data] == ["duplicate_custom_id"] and done.errors.data[0].line == 3


def test_transient_failures_are_retried_until_the_engine_answers(node_factory: Any, tiny_factory: Any,
                                                                  tmp_path: Path) -> None:
    node, tiny = one_engine(node_factory, tiny_factory)
    tiny.config(fail_mode="500")
    client = client_of(node)
    batch = upload_and_create(client, write_input(tmp_path, chat_lines(4)))
    wait_until(lambda: tiny.stats()["requests"] >= 8, 30, "the engine to fail each line at least twice")
    tiny.config(fail_mode=None)
    done = wait_final(client, batch.id)
    assert done.request_counts is not None and done.request_counts.completed == 4 and done.error_file_id is None
    assert tiny.stats()["inferences"] == 4  # each line answered once, after its retries


def test_ollama_chat_lines_run_on_the_batch(node_factory: Any, tiny_factory: Any, tmp_path: Path) -> None:
    node, tiny = one_engine(node_factory, tiny_factory)
    client = client_of(node)
    lines = [{"custom_id": f"o-{i}", "method": "POST", "url": "/api/chat",
              "body": {"model": "tiny", "messages": [{"role": "user", "content": "hi"}]}} for i in range(5)]
    done = wait_final(client, upload_and_create(client, write_input(tmp_path, lines), endpoint="/api/chat").id)
    assert done.status == "completed"
    out = results(client, done.output_file_id)
    assert sorted(line["custom_id"] for line in out) == [f"o-{i}" for i in range(5)]
    for line in out:
        body = line["response"]["body"]
        assert body["done"] is True and body["message"]["role"] == "assistant" and body["model"] == "tiny"


def test_the_batch_leaves_headroom_for_interactive_requests(node_factory: Any, tiny_factory: Any,
                                                            tmp_path: Path) -> None:
    node, tiny = one_engine(node_factory, tiny_factory, "--first-byte-delay-s", "0.2", capacity=4)
    client = client_of(node)
    batch = upload_and_create(client, write_input(tmp_path, chat_lines(300)))
    wait_until(lambda: tiny.stats()["in_flight"] == 3, 30, "the batch to fill its share (capacity 4 - headroom 1)")
    seen = [tiny.stats()["in_flight"] for _ in range(20)]
    assert max(seen) <= 3  # never the whole engine: one slot stays for apps
    answer = httpx.post(f"{node.url}/v1/chat/completions", timeout=30, trust_env=False,
                        json={"model": "tiny", "messages": [{"role": "user", "content": "now"}], "max_tokens": 2})
    assert answer.status_code == 200
    assert client.batches.retrieve(batch.id).status == "in_progress"  # served while the batch ran
    client.batches.cancel(batch.id)
    assert wait_final(client, batch.id).status == "cancelled"
