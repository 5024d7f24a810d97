"""A field an engine names its own way: an Ollama caller's options.repeat_penalty reaches an engine
whose /v1/models says owned_by "vllm" as repetition_penalty (vLLM's name), and any other OpenAI-API
engine as repeat_penalty (llama.cpp's)."""

from __future__ import annotations

from typing import Any

import ollama


def test_repeat_penalty_reaches_vllm_by_its_name(node_factory: Any, tiny_factory: Any) -> None:
    vllm = tiny_factory("--api", "openai", "--model", "v-model", "--owned-by", "vllm")
    other = tiny_factory("--api", "openai", "--model", "l-model", "--owned-by", "llamacpp")
    node = node_factory("alpha").start()
    node.cli("engines", "add", "vllm", "--url", vllm.url, "--api", "openai")
    node.cli("engines", "add", "llama", "--url", other.url, "--api", "openai")
    client = ollama.Client(host=node.url)
    for model, engine, name in (("v-model", vllm, "repetition_penalty"), ("l-model", other, "repeat_penalty")):
        reply = client.chat(model=model, messages=[{"role": "user", "content": "hi"}],
                            options={"repeat_penalty": 1.15, "num_predict": 3})
        assert reply.message.content is not None
        body = engine.stats()["last_body"]
        assert body[name] == 1.15 and body["max_tokens"] == 3, body
        assert not {"repeat_penalty", "repetition_penalty"} - {name} & set(body), body
