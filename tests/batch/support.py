"""Shared by the batch tests: a node with tiny engines, JSONL inputs, and the openai SDK on its front door."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import openai

from app.harness import NodeProc, TinyProc, wait_until
from tests.support.patience import patience


def client_of(node: NodeProc) -> openai.OpenAI:
    return openai.OpenAI(base_url=f"{node.url}/v1", api_key="placeholder", max_retries=0, timeout=60)


def chat_lines(count: int, model: str = "tiny", *, start: int = 0, max_tokens: int = 4) -> list[dict[str, Any]]:
    return [{"custom_id": f"req-{i}", "method": "POST", "url": "/v1/chat/completions",
             "body": {"model": model, "messages": [{"role": "user", "content": f"line {i}"}],
                      "max_tokens": max_tokens}} for i in range(start, start + count)]


def jsonl(lines: list[Any]) -> bytes:
    return b"".join((line if isinstance(line, bytes) else json.dumps(line).encode()) + b"\n" for line in lines)


def write_input(tmp: Path, lines: list[Any], name: str = "input.jsonl") -> Path:
    path = tmp / name
    path.write_bytes(jsonl(lines))
    return path


def upload_and_create(client: openai.OpenAI, path: Path, endpoint: str = "/v1/chat/completions",
                      metadata: dict[str, str] | None = None, window: str = "24h") -> Any:
    with path.open("rb") as fh:
        uploaded = client.files.create(file=fh, purpose="batch")
    return client.batches.create(input_file_id=uploaded.id, endpoint=endpoint,  # type: ignore[arg-type]
                                 completion_window=window, metadata=metadata)  # type: ignore[arg-type]


FINAL = ("completed", "failed", "cancelled", "expired")


def wait_final(client: openai.OpenAI, batch_id: str, timeout: float = 120) -> Any:
    return wait_until(lambda: (b := client.batches.retrieve(batch_id)).status in FINAL and b, patience(timeout),
                      f"batch {batch_id} to end", interval=0.2)


def results(client: openai.OpenAI, file_id: str | None) -> list[dict[str, Any]]:
    if file_id is None:
        return []
    return [json.loads(line) for line in client.files.content(file_id).text.splitlines() if line.strip()]


def two_engines(node_factory: Any, tiny_factory: Any, *, fast_delay: float = 0.005, slow_delay: float = 0.05,
                capacity: int = 4) -> tuple[NodeProc, TinyProc, TinyProc]:
    fast = tiny_factory("--model", "tiny", "--first-byte-delay-s", str(fast_delay))
    slow = tiny_factory("--model", "tiny", "--first-byte-delay-s", str(slow_delay))
    node = node_factory("batcher").start(wait_answer=True)
    node.add_engine("fast", fast.url, capacity=capacity)
    node.add_engine("slow", slow.url, capacity=capacity)
    wait_engines(node, "fast", "slow")
    return node, fast, slow


def wait_engines(node: NodeProc, *names: str) -> None:
    """Until each named engine lists its models (a batch spreads over the copies it can see)."""
    def listed() -> bool:
        engines = {e["name"]: e for e in node.control("GET", "/engines")["engines"]}
        return all(engines.get(name, {}).get("models") for name in names)

    wait_until(listed, patience(20), f"engines {names} to list their models")
