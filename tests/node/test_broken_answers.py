"""An engine whose answer cannot be translated (tool call arguments that are not JSON): the caller gets
a clear error naming the engine, whole or streamed, and the job ends failed, never completed or running."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import ollama
import pytest

from app.harness import NodeProc, TinyProc, wait_until
from tests.cluster.multinode import jobs
from tests.node.test_ollama_client_to_openai_engine import WEATHER


@pytest.fixture(scope="module")
def broken(tmp_path_factory: pytest.TempPathFactory) -> Iterator[NodeProc]:
    root: Path = tmp_path_factory.mktemp("broken")
    tiny = TinyProc("--api", "openai", "--model", "oa-model", "--fail-mode", "bad_tool_arguments")
    node = NodeProc(root / "home", "alpha")
    try:
        node.start()
        node.cli("engines", "add", "oa", "--url", tiny.url, "--api", "openai")
        yield node
    finally:
        node.stop()
        tiny.stop()


@pytest.mark.parametrize("stream", [False, True])
def test_untranslatable_answer_fails_the_job_with_a_named_error(broken: NodeProc, stream: bool) -> None:
    client = ollama.Client(host=broken.url, timeout=60)
    with pytest.raises(ollama.ResponseError, match="arguments are not a JSON object|cannot translate") as raised:
        reply = client.chat(model="oa-model", messages=[{"role": "user", "content": "weather?"}], tools=[WEATHER],
                            stream=stream)
        if stream:
            list(iter(reply))
    if not stream:
        assert raised.value.status_code == 502 and str(raised.value).startswith("oa answered")

    def finished() -> list[dict] | None:
        found = [j for j in jobs(broken) if j["state"] not in ("queued", "running")]
        return found if len(found) == len(jobs(broken)) else None

    assert {j["state"] for j in wait_until(finished, what="every job finished")} == {"failed"}
