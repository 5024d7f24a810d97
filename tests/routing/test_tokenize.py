"""Near a window's edge the engine's own tokenizer decides (issue 23): a prompt the conservative
estimate puts over a real llama.cpp server's 1024-token window, but that its tokenizer counts inside
it, is served there; an engine with no tokenizer endpoint (the tiny model) is judged by the estimate.
Real node process, real llama-cpp-python server (its /extras/tokenize/count), the real `openai` client."""

from __future__ import annotations

from typing import Any

import openai
import pytest

from tests.node.test_llama_engine import llama_server  # noqa: F401  (a fixture)

# About 1,200 tokens by the estimate (3.5 bytes a token), about 700 by SmolLM2's tokenizer.
EDGE_PROMPT = [{"role": "user", "content": "hello " * 700}]


@pytest.mark.llama
def test_tokenizer_count_decides_near_the_edge(llama_server: str, node_factory: Any,  # noqa: F811
                                               tiny_factory: Any) -> None:
    tiny = tiny_factory("--api", "openai", "--model", "tiny", "--context-window", "1024")
    node = node_factory("alpha").start()
    node.cli("engines", "add", "llama", "--url", llama_server, "--api", "openai", "--context-window", "1024")
    node.cli("engines", "add", "tiny", "--url", tiny.url, "--api", "openai")
    client = openai.OpenAI(base_url=node.url + "/v1", api_key="x", max_retries=0)

    raw = client.chat.completions.with_raw_response.create(model="smollm2", messages=EDGE_PROMPT, max_tokens=3)
    reply = raw.parse()
    assert reply.usage is not None and 600 < reply.usage.prompt_tokens < 1024  # what the engine really took
    route = raw.headers["x-pairwise-route"]
    assert "llama window 1024 (its tokenizer counts" in route, route
    counted = int(route.split("its tokenizer counts ")[1].split(")")[0])
    assert reply.usage.prompt_tokens <= counted < 1024

    # No tokenizer endpoint there: the estimate decides, as before.
    with pytest.raises(openai.BadRequestError, match="tiny holds 1024"):
        client.chat.completions.create(model="tiny", messages=EDGE_PROMPT, max_tokens=3)
    assert tiny.stats()["inferences"] == 0
