"""The tray's loop: qasync with asyncio's async-generator hooks, so a client that leaves
mid-stream still gets its workload closed and its upstream released."""

from __future__ import annotations

import asyncio
import gc
import sys
from typing import Any

import httpx
import pytest

from app.ui import app as app_module
from app.ui.aio import asyncgen_hooks_installed
from tests.ui.conftest import until


async def _leave_mid_stream(app: Any, tiny_factory: Any) -> tuple[dict[str, Any], Any]:
    tiny = tiny_factory("--api", "openai", "--model", "slow", "--tokens-per-s", "20", "--reply-tokens", "400")
    await app.facade.engine_add({"name": "tiny", "url": tiny.url, "api": "openai"}, None)
    url = f"http://{app.node.frontdoor_address}/v1/chat/completions"
    body = {"model": "slow", "stream": True, "messages": [{"role": "user", "content": "hi"}]}
    async with httpx.AsyncClient(timeout=10) as client:
        async with client.stream("POST", url, json=body) as response:
            assert response.status_code == 200
            async for _chunk in response.aiter_raw():
                break  # the client leaves after the first chunk
    running = await until(lambda: app.facade.jobs(), what="the job record")
    job_id = running[0]["id"]

    def finished() -> dict[str, Any] | None:
        job = next(j for j in app.facade.jobs() if j["id"] == job_id)
        return job if job["state"] not in ("queued", "running") else None

    return await until(finished, timeout=10, what="the abandoned stream's job to close"), tiny


async def _collect() -> None:
    for _ in range(3):  # the abandoned generator, then what its failed cleanup left behind
        gc.collect()
        await asyncio.sleep(0.05)


async def test_hooks_are_installed_at_start(make_app: Any) -> None:
    sys.set_asyncgen_hooks(None, None)  # as qasync leaves them
    loop = asyncio.get_running_loop()
    assert not asyncgen_hooks_installed(loop)
    await make_app()
    assert "qasync" in type(loop).__module__
    assert asyncgen_hooks_installed(loop)


async def test_client_leaving_mid_stream_closes_its_job_and_upstream(make_app: Any, tiny_factory: Any,
                                                                     monkeypatch: pytest.MonkeyPatch) -> None:
    unraisable: list[Any] = []
    monkeypatch.setattr(sys, "unraisablehook", unraisable.append)
    app = await make_app()
    job, tiny = await _leave_mid_stream(app, tiny_factory)
    assert job["state"] in ("cancelled", "failed"), job
    assert app.facade.status()["active_jobs"] == 0
    # The upstream stream is closed on the loop (400 tokens at 20/s would take 20 s otherwise).
    await until(lambda: tiny.stats()["in_flight"] == 0, timeout=8, what="the upstream stream to close")
    await _collect()
    assert not unraisable, [u.exc_value for u in unraisable]


@pytest.mark.filterwarnings("ignore::pytest.PytestUnraisableExceptionWarning")  # the breakage shown here
async def test_without_the_hooks_cleanup_breaks(make_app: Any, tiny_factory: Any,
                                                monkeypatch: pytest.MonkeyPatch) -> None:
    """What the hooks prevent: the abandoned generator is finalised off the loop and its cleanup fails."""
    unraisable: list[Any] = []
    monkeypatch.setattr(sys, "unraisablehook", unraisable.append)
    monkeypatch.setattr(app_module, "install_asyncgen_hooks", lambda: sys.set_asyncgen_hooks(None, None))
    app = await make_app()
    await _leave_mid_stream(app, tiny_factory)
    await _collect()
    assert any(isinstance(u.exc_value, RuntimeError) for u in unraisable)
