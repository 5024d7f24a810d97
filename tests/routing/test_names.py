"""One model under many names: `pairwise models same/unlink/undo/suggest` on a real node process, with
the links kept in settings; plus the pure parts (the size estimate, name keys, the affinity book)."""

from __future__ import annotations

import json
from typing import Any

import ollama
import openai
import pytest

from app.services.routing.affinity import AffinityBook
from app.services.routing.fit import estimate, is_too_long
from app.services.routing.suggest import model_key

OLLAMA_NAME = "qwen2.5:7b"
GGUF_NAME = "bartowski/Qwen2.5-7B-Instruct-GGUF"


def test_same_unlink_undo_and_suggest(node_factory: Any, tiny_factory: Any) -> None:
    ol = tiny_factory("--api", "ollama", "--model", OLLAMA_NAME)
    oa = tiny_factory("--api", "openai", "--model", GGUF_NAME)
    node = node_factory("alpha").start()
    node.cli("engines", "add", "ol", "--url", ol.url, "--api", "ollama", "--context-window", "8192")
    node.cli("engines", "add", "gg", "--url", oa.url, "--api", "openai")
    suggestions = node.cli_json("models", "suggest")
    assert [s["names"] for s in suggestions] == [[OLLAMA_NAME, GGUF_NAME]]
    assert suggestions[0]["key"] == "qwen2.5-7b"
    assert len(node.cli_json("models")) == 2  # suggested, never linked without the user's word

    with pytest.raises(ollama.ResponseError) as missing:
        ollama.Client(host=node.url).chat(model=GGUF_NAME + "-other", messages=[{"role": "user", "content": "x"}])
    assert missing.value.status_code == 404

    node.cli("models", "same", OLLAMA_NAME, GGUF_NAME)
    settings = json.loads((node.home / "settings.json").read_text())
    assert settings["model_names"] == [[OLLAMA_NAME, GGUF_NAME]]
    models = node.cli_json("models")
    assert len(models) == 1 and {c["window"] for c in models[0]["copies"]} == {8192, 4096}
    assert node.cli_json("models", "suggest") == []
    # Every copy serves both names: the OpenAI-API copy answers to the Ollama name, under that name.
    ol.config(fail_mode="refuse")
    client = openai.OpenAI(base_url=node.url + "/v1", api_key="x", max_retries=0)
    reply = client.chat.completions.create(model=OLLAMA_NAME, messages=[{"role": "user", "content": "x"}],
                                           max_tokens=3)
    assert reply.model == OLLAMA_NAME and oa.stats()["last_body"]["model"] == GGUF_NAME
    ol.config(fail_mode=None)

    node.cli("models", "unlink", GGUF_NAME)
    assert json.loads((node.home / "settings.json").read_text())["model_names"] == []
    assert len(node.cli_json("models")) == 2
    assert node.cli_json("models", "undo") == [[OLLAMA_NAME, GGUF_NAME]]
    assert len(node.cli_json("models")) == 1

    refused = node.cli("models", "same", OLLAMA_NAME, check=False)
    assert refused.returncode != 0 and "at least two different names" in refused.stderr
    refused = node.cli("models", "unlink", "nothing-linked", check=False)
    assert refused.returncode != 0 and "not linked" in refused.stderr
    # The links outlive a restart.
    node.stop()
    node.start()
    assert len(node.cli_json("models")) == 1


@pytest.mark.parametrize(("name", "key"), [
    ("qwen2.5:7b", "qwen2.5-7b"),
    ("Qwen/Qwen2.5-7B-Instruct", "qwen2.5-7b"),
    ("bartowski/Qwen2.5-7B-Instruct-GGUF", "qwen2.5-7b"),
    ("qwen2.5-7b-instruct-q4_k_m.gguf", "qwen2.5-7b"),
    ("Qwen2.5-32B-Instruct-bf16", "qwen2.5-32b"),
    # the -hf tag (weights converted to the transformers format) says nothing of which model it is
    ("meta-llama/Llama-2-7b-chat-hf", "llama-2-7b"),
    ("llama-2-7b-chat.Q4_K_M.gguf", "llama-2-7b"),
    ("google/gemma-2-9b-it", "gemma-2-9b"),
    ("llama3", None),  # no size: too easily another model
])
def test_model_key(name: str, key: str | None) -> None:
    assert model_key(name) == key


def test_model_key_from_ollama_show() -> None:
    assert model_key("custom:latest", "Qwen2.5", "7B") == "qwen2.5-7b"


def test_estimate_counts_messages_tools_images_and_asked_tokens() -> None:
    small = estimate({"messages": [{"role": "user", "content": "hi"}]})
    assert 0 < small.total < 20 and small.answer == 0
    long = estimate({"messages": [{"role": "user", "content": "x" * 3500}], "max_tokens": 100})
    assert (long.prompt >= 1000, long.answer, long.total) == (True, 100, long.prompt + 100)
    ollama_body = estimate({"prompt": "x" * 35, "options": {"num_predict": 7, "num_ctx": 3900}, "images": ["b64"]})
    assert ollama_body.answer == 7 and ollama_body.num_ctx == 3900 and ollama_body.prompt > 768
    tools = estimate({"messages": [], "tools": [{"type": "function", "function": {"name": "f" * 350}}]})
    assert tools.prompt > 100


def test_too_long_wordings() -> None:
    assert is_too_long(400, "the request exceeds the available context size, try increasing it")
    assert is_too_long(400, "This model's maximum context length is 4096 tokens. However, you requested 5000")
    assert is_too_long(422, "Input validation error: `inputs` tokens + `max_new_tokens` must be <= 4096. Given: 9")
    assert is_too_long(400, "input length exceeds the context length")
    assert not is_too_long(400, "'temperature' must be a number")
    assert not is_too_long(200, "maximum context length is 4096 tokens")


def test_affinity_book_is_bounded_and_holds_digests_only() -> None:
    book = AffinityBook(limit=3)
    secret = "my secret prompt"
    turn1 = [{"role": "user", "content": secret}]
    book.remember("m:latest", turn1, "engine:a")
    turn2 = [*turn1, {"role": "assistant", "content": "ok"}, {"role": "user", "content": "more"}]
    assert book.lookup("m:latest", turn2) == "engine:a"
    assert book.lookup("other:latest", turn2) is None  # tied to the model
    assert book.lookup("m:latest", [{"role": "user", "content": "else"}, {"role": "user", "content": "x"}]) is None
    assert secret not in repr(book._served) and all(isinstance(k, bytes) for k in book._served)
    for i in range(5):
        book.remember("m:latest", [{"role": "user", "content": str(i)}], "engine:b")
    assert len(book) == 3 and book.lookup("m:latest", turn2) is None  # the oldest went first


def test_windows_from_what_engines_say() -> None:
    from app.services.backends.windows import context_length_of, llama_props_window, ollama_show_window

    router = {"providers": [{"provider": "a", "context_length": 131072}, {"provider": "b", "context_length": 16384}]}
    assert context_length_of(router) == 16384  # the router picks the provider: the smallest is what counts
    assert context_length_of({"max_model_len": 32768}) == 32768 and context_length_of({"meta": {"n_ctx": 8}}) == 8
    assert context_length_of({"max_model_len": True}) is None
    show = {"parameters": "stop <|im_end|>\nnum_ctx 8192\n", "model_info": {"qwen2.context_length": 32768}}
    assert ollama_show_window(show) == (8192, 32768)
    assert ollama_show_window({"model_info": {"general.architecture": "x"}}) == (None, None)
    assert llama_props_window({"default_generation_settings": {"n_ctx": 4096}}) == 4096
    assert llama_props_window("nope") is None


def test_a_large_answer_cap_is_not_a_need() -> None:
    capped = estimate({"messages": [{"role": "user", "content": "hi"}], "max_tokens": 8192})
    assert capped.answer == 8192 and capped.room == 512 and capped.total == capped.prompt + 512
