"""RentedUpstream against the tiny model behind HTTPS (a CA made for the test), in process."""

from __future__ import annotations

from typing import Any

import pytest

from app.services.backends.base import UpstreamRequest
from app.services.errors import UpstreamError
from app.services.rented.hooks import LifecycleHooks
from app.services.rented.upstream import RentedUpstream
from tests.rented.conftest import TOKEN, Make, TlsTiny
from tests.rented.tls_tiny import WARM


def chat(model: str = "rented-model", stream: bool = False, **extra: Any) -> UpstreamRequest:
    body = {"model": model, "messages": [{"role": "user", "content": "hi"}], "stream": stream, **extra}
    return UpstreamRequest(api="openai", operation="chat", body=body, stream=stream, client_api="openai", job_id="")


async def read_all(node: RentedUpstream, request: UpstreamRequest) -> tuple[int, bytes]:
    opened = await node.open(request)
    data = opened.first_chunk + b"".join([c async for c in opened.rest])
    await opened.aclose()
    return opened.status, data


async def test_probe_reads_models_and_sends_token(make: Make, tls_tiny: TlsTiny) -> None:
    node = make()
    result = await node.probe()
    assert result.credential_error is None and [m.name for m in node.models()] == ["rented-model"]
    assert node.public is False and node.status() == ("eligible", None)


async def test_no_verification_bypass_without_the_ca(make: Make, tls_tiny: TlsTiny) -> None:
    node = make(ca_file=None)  # the test CA is not in the system store
    result = await node.probe()
    assert result.error is not None and "CERTIFICATE_VERIFY_FAILED" in result.error


async def test_wrong_token_marks_credential_refused_with_upstream_message(make: Make) -> None:
    node = make(token="wrong-token-xyz")
    result = await node.probe()
    assert result.credential_error is not None and "Incorrect API key provided" in result.credential_error
    state, reason = node.status()
    assert state == "ineligible" and reason is not None and reason.startswith("credential refused:")
    assert node.ineligible_reason() == reason
    node.set_token(TOKEN)
    await node.probe()
    assert node.status() == ("eligible", None)


async def test_a_refused_token_during_a_request_fails_over_and_marks_the_node(make: Make) -> None:
    node = make(token="wrong-token-xyz", models=["rented-model"])
    with pytest.raises(UpstreamError) as caught:
        await node.open(chat())
    assert "credential refused" in caught.value.message and "Incorrect API key" in caught.value.message
    assert node.ineligible_reason() is not None and "wrong-token-xyz" not in caught.value.message


async def test_public_endpoint_is_flagged(make: Make, tls_tiny: TlsTiny) -> None:
    tls_tiny.opts.require_token = None
    node = make()
    await node.probe()
    assert node.public and node.warning == "answers without any credential: anyone with its URL can use it"
    tokenless = make(token=None)
    await tokenless.probe()
    assert tokenless.public


async def test_model_is_pinned_and_usage_requested(make: Make, tls_tiny: TlsTiny) -> None:
    node = make()
    await node.probe()
    with pytest.raises(UpstreamError, match="serves only rented-model"):
        await node.open(chat(model="someone-elses-model"))
    status, data = await read_all(node, chat(stream=True, stream_options={"include_usage": False}))
    assert status == 200 and b'"usage"' in data and data.rstrip().endswith(b"data: [DONE]")
    assert tls_tiny.state.last_body["stream_options"] == {"include_usage": True}
    headers = {k.lower(): v for k, v in tls_tiny.state.last_headers.items()}
    assert headers["authorization"] == f"Bearer {TOKEN}"
    assert "x-scale-up-timeout" not in headers  # only for huggingface-endpoint


async def test_hf_endpoint_gets_scale_up_timeout_and_first_byte_budget(make: Make, tls_tiny: TlsTiny) -> None:
    node = make(provider="huggingface-endpoint", models=["rented-model"], timeouts={"cold_start_s": 30})
    assert node.first_byte_timeout_s == 30
    status, _ = await read_all(node, chat())
    headers = {k.lower(): v for k, v in tls_tiny.state.last_headers.items()}
    assert status == 200 and headers["x-scale-up-timeout"] in ("30", "29")


async def test_a_503_while_warming_is_waited_out(make: Make, tls_tiny: TlsTiny) -> None:
    node = make(models=["rented-model"], timeouts={"cold_start_s": 20})
    tls_tiny.warm(2)  # "model is loading" twice, then ready
    status, data = await read_all(node, chat())
    assert status == 200 and b"choices" in data and tls_tiny.app[WARM]["count"] == 0


async def test_a_503_past_the_cold_start_budget_fails_over(make: Make, tls_tiny: TlsTiny) -> None:
    node = make(models=["rented-model"], timeouts={"cold_start_s": 0.6})
    tls_tiny.warm(1000)
    with pytest.raises(UpstreamError) as caught:
        await node.open(chat())
    assert "503" in caught.value.message or "cold-start budget" in caught.value.message


async def test_down_endpoint_fails_at_once(make: Make, tls_tiny: TlsTiny) -> None:
    node = make(models=["rented-model"], url="https://127.0.0.1:9")
    with pytest.raises(UpstreamError, match="could not be reached"):
        await node.open(chat())


async def test_before_route_hook_wakes_a_paused_node(make: Make) -> None:
    node = make(models=["rented-model"], lifecycle={"managed": True, "wake_on_request": True})
    node.set_state_word("paused")
    woke: list[str] = []

    async def resume(target: RentedUpstream) -> None:
        woke.append(target.name)
        target.set_state_word("running")

    hooks = LifecycleHooks(before_route=[resume])
    began: list[str] = []
    hooks.began = lambda n, job_id: began.append(job_id)
    node.hooks = hooks
    assert node.ineligible_reason() is None
    request = chat()
    request.job_id = "job-1"
    status, _ = await read_all(node, request)
    assert status == 200 and woke == ["gpu"] and began == ["job-1"]


async def test_reasons_never_quote_the_endpoint(make: Make, tls_tiny: TlsTiny) -> None:
    node = make(models=["rented-model"], url="https://localhost:9")
    node.set_state_word("failed", "replica at https://localhost:9 crashed (localhost unreachable)")
    state, reason = node.status()
    assert state == "unhealthy" and "localhost" not in (reason or "") and "[endpoint]" in (reason or "")
    with pytest.raises(UpstreamError) as caught:
        await node.open(chat())
    assert "localhost" not in caught.value.message
