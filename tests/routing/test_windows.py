"""Each copy's window, learnt from each engine kind or declared where nothing says: llama.cpp's /props,
Ollama's /api/ps, vLLM's max_model_len, `--context-window` on engines and rented nodes (set and cleared)."""

from __future__ import annotations

from typing import Any


def windows(node: Any) -> dict[tuple[str, str], int | None]:
    return {(c["copy"], c["name"]): c["window"] for m in node.cli_json("models") for c in m["copies"]}


def test_windows_learnt_from_each_engine_kind_and_declared(node_factory: Any, tiny_factory: Any) -> None:
    llama = tiny_factory("--api", "openai", "--model", "llama-model", "--context-window", "2048", "--window-in-props")
    ollama_engine = tiny_factory("--api", "ollama", "--model", "ol:latest", "--context-window", "3000")
    vllm = tiny_factory("--api", "openai", "--model", "vllm-model", "--context-window", "6000")
    silent = tiny_factory("--api", "openai", "--model", "silent-model", "--hide-window", "--context-window", "700")
    endpoint = tiny_factory("--api", "openai", "--model", "endpoint-model")
    node = node_factory("alpha").start()
    node.cli("engines", "add", "llama", "--url", llama.url, "--api", "openai")
    node.cli("engines", "add", "ol", "--url", ollama_engine.url, "--api", "ollama")
    node.cli("engines", "add", "vllm", "--url", vllm.url, "--api", "openai")
    node.cli("engines", "add", "silent", "--url", silent.url, "--api", "openai")
    node.cli("engines", "add", "told", "--url", silent.url, "--api", "openai", "--context-window", "700")
    node.cli("rented", "attach", "box", "--url", endpoint.url, "--model", "endpoint-model", "--context-window", "9000")
    seen = windows(node)
    assert seen[("llama", "llama-model")] == 2048  # /props n_ctx
    assert seen[("ol", "ol:latest")] == 3000  # /api/ps context_length
    assert seen[("vllm", "vllm-model")] == 6000  # max_model_len
    assert seen[("silent", "silent-model")] is None  # nothing says: unknown, still a candidate
    assert seen[("told", "silent-model")] == 700  # declared
    assert seen[("box", "endpoint-model")] == 9000  # declared on the rented node
    engines = {e["name"]: e for e in node.cli_json("engines", "list")}
    assert engines["llama"]["windows"] == {"llama-model": 2048} and engines["told"]["context_window"] == 700
    node.cli("rented", "set", "box", "--context-window", "0")  # cleared: what the endpoint says again
    assert windows(node)[("box", "endpoint-model")] == 4096
    assert "WINDOW" in node.cli("models").stdout
    assert "llama-model (2048)" in node.cli("nodes").stdout and "ol:latest (3000)" in node.cli("nodes").stdout


def test_ollama_engine_is_asked_for_the_window_a_long_prompt_needs(node_factory: Any, tiny_factory: Any) -> None:
    """Ollama cuts a prompt longer than the context it loaded silently; a model trained for more is
    loaded with a num_ctx that holds the request (the caller's own num_ctx is only a hint)."""
    import openai

    engine = tiny_factory("--api", "ollama", "--model", "ol:latest", "--context-window", "8192",
                          "--loaded-window", "1024")
    node = node_factory("alpha").start()
    node.cli("engines", "add", "ol", "--url", engine.url, "--api", "ollama")
    assert windows(node)[("ol", "ol:latest")] == 1024  # what it serves now; it was trained for 8192
    client = openai.OpenAI(base_url=node.url + "/v1", api_key="x", max_retries=0)
    short = client.chat.completions.create(model="ol", messages=[{"role": "user", "content": "hi"}], max_tokens=3)
    assert short.choices[0].message.content and "num_ctx" not in (engine.stats()["last_body"].get("options") or {})
    long = client.chat.completions.create(model="ol", messages=[{"role": "user", "content": "word " * 1500}],
                                          max_tokens=3)
    assert long.choices[0].message.content
    assert engine.stats()["last_body"]["options"]["num_ctx"] == 3072  # ~2150 tokens, rounded up to 1024s
    import ollama

    reply = ollama.Client(host=node.url).chat(model="ol", messages=[{"role": "user", "content": "word " * 1500}],
                                              options={"num_ctx": 512})
    assert reply.done and engine.stats()["last_body"]["options"]["num_ctx"] == 3072
