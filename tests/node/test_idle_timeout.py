"""A stream that stalls after it started fails within the upstream's idle timeout, not its first-byte budget.

In process: the data plane's client against a real aiohttp server on 127.0.0.1. Across
processes: a node whose engine (the tiny model server) goes silent mid-stream, with the
job failed and the caller told.
"""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator

import openai
import pytest
from aiohttp import web

from app.harness import NodeProc, TinyProc, wait_until
from app.services.backends.splice_client import SpliceClient
from app.services.backends.stream_client import StreamClient
from app.services.errors import UpstreamTimeout
from app.services.outbound import outbound_ssl_context

pytestmark = pytest.mark.usefixtures("data_path")  # each test on the splice and on aiohttp


@pytest.fixture
async def slow_server() -> AsyncIterator[tuple[str, asyncio.Event]]:
    """POST /: waits 2.5 s before its headers, sends two chunks, then goes silent."""
    release = asyncio.Event()

    async def handler(request: web.Request) -> web.StreamResponse:
        await asyncio.sleep(2.5)  # a cold start longer than the idle timeout below, shorter than the budget
        response = web.StreamResponse()
        await response.prepare(request)
        await response.write(b"one\n")
        await response.write(b"two\n")
        await release.wait()
        return response

    app = web.Application()
    app.router.add_post("/", handler)
    runner = web.AppRunner(app)
    await runner.setup()
    site = web.TCPSite(runner, "127.0.0.1", 0)
    await site.start()
    yield f"http://127.0.0.1:{runner.addresses[0][1]}/", release
    release.set()
    await runner.cleanup()


@pytest.mark.parametrize("client_type", [StreamClient, SpliceClient])
async def test_idle_timeout_is_separate_from_the_first_byte_budget(slow_server: tuple[str, asyncio.Event],
                                                                   client_type: type[StreamClient | SpliceClient]) -> None:
    url, _ = slow_server
    client = client_type(outbound_ssl_context())
    try:
        opened = await client.open(url, json_body={}, headers={}, first_byte_timeout_s=30, idle_timeout_s=1.0,
                                   label="engine slow")
        received = [opened.first_chunk]
        with pytest.raises(UpstreamTimeout, match="engine slow sent nothing for 1 s mid-stream"):
            async for chunk in opened.rest:
                received.append(chunk)
        assert b"".join(received) == b"one\ntwo\n"
        await opened.aclose()
    finally:
        await client.aclose()


def test_stalled_engine_fails_the_job_within_its_idle_timeout(node_factory: type[NodeProc],
                                                              tiny_factory: type[TinyProc]) -> None:
    tiny = tiny_factory("--api", "openai", "--model", "stally")
    node = node_factory("idle").start()
    node.cli("engines", "add", "wedged", "--url", tiny.url, "--api", "openai", "--idle-timeout-s", "1",
             "--first-byte-timeout-s", "300")
    assert node.cli_json("engines", "list")[0]["idle_timeout_s"] == 1
    tiny.config(fail_mode="stall", cut_after_chunks=3)
    client = openai.OpenAI(base_url=f"{node.url}/v1", api_key="x", max_retries=0, timeout=120)
    received = []
    with pytest.raises(openai.APIError, match="sent nothing for 1 s mid-stream"):
        for chunk in client.chat.completions.create(model="stally", messages=[{"role": "user", "content": "hi"}],
                                                    stream=True):
            received.append(chunk)
    assert received, "the chunks sent before the stall reached the caller"
    job = wait_until(lambda: next((j for j in node.cli_json("jobs") if j["state"] != "running"), None),
                     what="the job to end")
    assert job["state"] == "failed"
    assert "engine wedged sent nothing for 1 s mid-stream" in job["error"]
