"""One inference request's way through a node, independent of the transport.

The front door and the cluster relay both call ``InferenceService.run`` and
write the result to their own HTTP response. A result either carries a whole
body or a stream; the stream's ``close`` ends the workload record whatever
happened (finished, cut by the upstream, or abandoned by the caller).
"""

from __future__ import annotations

import asyncio
import json
import logging
import time
from collections.abc import AsyncIterator, Awaitable, Callable
from dataclasses import dataclass, field
from typing import Protocol, cast

from app.environment import environment
from app.services.backends.base import Caller, InFlight, Opened, Upstream, UpstreamRequest
from app.services.backends.http_open import error_text
from app.services.errors import (
    PairwiseError,
    RequesterLimitError,
    UpstreamCut,
    UpstreamError,
    UpstreamRefused,
)
from app.services.jobs.records import Workload
from app.services.jobs.tracker import JobTracker
from app.services.json_types import JsonObject
from app.services.routing.affinity import MAX_CONVERSATIONS, AffinityBook
from app.services.routing.fit import (
    RequestSize,
    copies_of,
    estimate,
    exact_sizes,
    is_too_long,
    near_edge,
    with_window,
)
from app.services.routing.plan import Plan, build_plan
from app.services.routing.registry import UpstreamRegistry
from app.services.routing.rent_hint import rent_hint
from app.services.translate.bodies import translate_body, usage_of
from app.services.translate.candidates import CandidateBody, for_candidates, load_answer
from app.services.translate.checks import InvalidRequest
from app.services.translate.requests import is_load_request
from app.services.translate.responses import StreamTranslator
from app.services.translate.shapes import (
    Api,
    Operation,
    canonical_model,
    error_body,
    error_param,
    wants_stream,
)
from app.services.translate.stream_choice import make_stream_translator
from app.services.translate.validate import validate_request

log = logging.getLogger(__name__)

# On the 503 of a request pinned to one copy that cannot serve it now (a batch then uses another).
PIN_GONE_HEADER = "X-Pairwise-Pin-Gone"


class ResultStream(Protocol):
    """An answer's stream to the caller: a StreamSession, or a dialect's rewriting of one."""

    def chunks(self) -> AsyncIterator[bytes]: ...

    async def close(self, *, cancelled: bool = False) -> None: ...


@dataclass
class InferenceResult:
    status: int
    content_type: str
    headers: dict[str, str] = field(default_factory=dict)
    body: bytes | None = None
    stream: ResultStream | None = None
    job: Workload | None = None  # the job that served it (the relay reads its serving node and engine)


def header_safe(text: str) -> str:
    """A header value: printable ASCII on one line."""
    if text.isascii() and text.isprintable():  # the usual route text: no character to replace
        return text
    return "".join(c if " " <= c <= "~" else "?" for c in text)


def json_result(status: int, obj: object, headers: dict[str, str] | None = None) -> InferenceResult:
    return InferenceResult(status, "application/json", headers or {}, json.dumps(obj).encode())


class StreamSession:
    """The translated stream to the caller, and its bookkeeping when it ends."""

    def __init__(self, opened: Opened, upstream: Upstream, translator: StreamTranslator,
                 finish: Callable[[str, str | None, StreamTranslator], Awaitable[None]], client_api: Api) -> None:
        self.opened, self.upstream, self.translator = opened, upstream, translator
        self._finish, self._client_api = finish, client_api
        self._closed = False
        self.state = "completed"
        self.error: str | None = None

    async def chunks(self) -> AsyncIterator[bytes]:
        translator = self.translator
        mid_line = False  # a passed-through line the upstream cut before its newline
        try:
            out = translator.feed(self.opened.first_chunk)
            if out:
                mid_line = not out.endswith(b"\n")
                yield out
            async for chunk in self.opened.rest:
                out = translator.feed(chunk)
                if out:
                    mid_line = not out.endswith(b"\n")
                    yield out
            tail = translator.finish()
        except UpstreamCut as exc:
            if not translator.finished_cleanly:
                self.state, self.error = "failed", exc.message
                yield self.error_chunk(exc.message, mid_line)
                return
            # The final chunk was here before the connection broke (an engine that drops it instead of
            # ending the chunked body): the answer is whole, and what the translator holds is its end.
            tail = self.finish_after_break(translator)
        except PairwiseError as exc:  # a line over the cap, an untranslatable answer, a stalled stream
            self.state, self.error = "failed", exc.message
            yield self.error_chunk(exc.message, mid_line)
            return
        except ValueError as exc:
            self.state, self.error = "failed", f"upstream stream broke: {type(exc).__name__}"
            yield self.error_chunk("the upstream stream broke before it finished", mid_line)
            return
        if tail:
            mid_line = not tail.endswith(b"\n")
            yield tail
        if not translator.finished_cleanly:
            self.state, self.error = "failed", "upstream stream ended without its final chunk"
            yield self.error_chunk("the upstream stream ended before it finished", mid_line)

    @staticmethod
    def finish_after_break(translator: StreamTranslator) -> bytes:
        try:
            return translator.finish()
        except PairwiseError:
            return b""  # what is left after the final chunk is not part of the answer

    def error_chunk(self, message: str, mid_line: bool) -> bytes:
        # The error goes on a line of its own, so the caller's line reader can parse it.
        body = json.dumps(error_body(self._client_api, message, status=502)).encode()
        line = b"data: " + body + b"\n\n" if self._client_api == "openai" else body + b"\n"
        return b"\n" + line if mid_line else line

    async def close(self, *, cancelled: bool = False) -> None:
        if self._closed:
            return
        self._closed = True
        # A caller that hangs up once it has the final chunk (before the upstream closed its end)
        # got the whole answer: that is a completed job, not a cancelled one.
        if cancelled and not self.translator.finished_cleanly:
            self.state, self.error = "cancelled", "the caller went away mid-stream"
        try:
            await self.opened.aclose()
        finally:
            await self._finish(self.state, self.error, self.translator)


class InferenceService:
    def __init__(self, registry: UpstreamRegistry, tracker: JobTracker, node_name: str, node_id: str,
                 refresh_stale: Callable[[], Awaitable[None]]) -> None:
        self.registry, self.tracker = registry, tracker
        self.node_name, self.node_id = node_name, node_id
        self._refresh_stale = refresh_stale
        # Checks run just before a candidate is asked; one raises RequesterLimitError to skip it.
        self.gates: list[Callable[[Upstream, Caller], None]] = []
        # Told of every attempt that failed before its first byte (what /metrics counts per upstream).
        self.attempt_watchers: list[Callable[[Upstream, UpstreamError], None]] = []
        # Which copy served each conversation's last turn (digests only); PAIRWISE_AFFINITY=off keeps none.
        self.affinity = AffinityBook(limit=0 if environment().affinity_off else MAX_CONVERSATIONS)

    def base_headers(self) -> dict[str, str]:
        return {"X-Pairwise-Node": self.node_name}

    async def plan_for(self, model: str, caller: Caller, size: RequestSize | None = None,
                       affine: str | None = None, body: JsonObject | None = None) -> Plan:
        """``body``: the request, for the engines' own token counts near a window's edge."""
        upstreams = self.registry.all(local_only=caller.local_only)
        copies = copies_of(upstreams, model, size)  # each copy's window, looked up once for both steps
        exact: dict[str, RequestSize] = {}
        counted = False
        if size is not None and body is not None and any(near_edge(window, size) for _, window in copies):
            exact, counted = await exact_sizes(copies, model, size, body), True
        # After the engines' counts (a while), the plan looks at the windows again, as they are now.
        plan = build_plan(model, upstreams, caller, size=size, affine=affine, exact=exact,
                          copies=None if counted else copies)
        if not plan.candidates and not plan.refused and not plan.too_small:
            await self._refresh_stale()
            plan = build_plan(model, self.registry.all(local_only=caller.local_only), caller, size=size,
                              affine=affine, exact=exact)
        return plan

    def available_models(self, caller: Caller) -> list[str]:
        """One name per model (``m`` and ``m:latest`` are the same model), as its first owner names it."""
        return sorted(pairs[0][1].name for pairs in self.registry.inventory(local_only=caller.local_only).values())

    def _record_unserved(self, api: Api, model: str, caller: Caller, state: str, error: str) -> None:
        """A request answered with an error before any node was asked still shows in Jobs, with why.
        Only on the node the caller asked: a relayed request is recorded by its origin."""
        if caller.local_only:
            return
        job = self.tracker.open(model=model[:200], api=api, requester=caller.requester,
                                origin_node=caller.origin_node, origin_node_id=caller.origin_node_id)
        self.tracker.finish(job, state, error=error)

    async def run(self, api: Api, operation: Operation, body: JsonObject, caller: Caller, *,
                  pin: str | None = None) -> InferenceResult:
        """``pin``: the key of the one upstream to ask (a batch spreads its lines over the copies
        itself); the plan's rules still apply to it, and when it is not among the plan's candidates
        the answer is a 503 with ``PIN_GONE_HEADER``."""
        headers = self.base_headers()
        try:
            validate_request(api, operation, body)
        except InvalidRequest as exc:
            model_field = body.get("model") if isinstance(body, dict) else None
            self._record_unserved(api, model_field if isinstance(model_field, str) else "?", caller, "failed",
                                  exc.message)
            return json_result(400, error_body(api, exc.message, status=400, param=exc.field), headers)
        requested = cast(str, body["model"])  # its field table took it (MODEL: a non-empty string)
        model = canonical_model(requested.strip())
        messages = body.get("messages") if operation == "chat" else None
        affine = (self.affinity.lookup(model, messages) if operation == "chat" else
                  self.affinity.lookup_prompt(model, body) if operation == "complete" else None)
        plan = await self.plan_for(model, caller, estimate(body), affine, body)
        if pin is not None and plan.candidates:
            plan.candidates = [u for u in plan.candidates if u.key == pin]
            if not plan.candidates:
                message = f"model '{requested}' is no longer served by the copy this request was given to"
                return json_result(503, error_body(api, message, status=503, kind="server_error"),
                                   {**headers, PIN_GONE_HEADER: pin})
        if not plan.candidates:
            if plan.too_small:  # copies there are, but none whose window holds the request
                message = plan.too_small_text(requested)
                if not caller.local_only:  # a peer's relayed request: its own node says how to rent
                    names = self.registry.names.group_of(requested) if self.registry.names is not None else [requested]
                    message += rent_hint(requested, names, plan.size.total if plan.size else 0)
                self._record_unserved(api, requested, caller, "failed", message)
                return json_result(400, error_body(api, message, status=400, param="messages" if messages else None),
                                   headers)
            if plan.refused:
                message = plan.refused_answer(requested)
                self._record_unserved(api, requested, caller, "refused", message)
                return json_result(403, error_body(api, message, status=403, kind="refused"), headers)
            available = ", ".join(self.available_models(caller)) or "none"
            message = f"model '{requested}' not found on any node; available models: {available}"
            self._record_unserved(api, requested, caller, "failed", message)
            return json_result(404, error_body(api, message, status=404), headers)

        # Each candidate gets the body in its own API; a field that cannot cross to any of them is
        # refused by name before a job is opened.
        bodies, refusals = for_candidates(api, operation, body, model, requested, plan.candidates)
        if not bodies:
            first = refusals[0]
            message = f"{first.message} (the engines serving '{requested}' speak that API)"
            return json_result(400, error_body(api, message, status=400, param=first.field), headers)
        first_target = plan.candidates[0].api_for(api)
        if is_load_request(api, operation, body) and first_target == "openai":
            return json_result(200, load_answer(operation, body, requested), headers)
        job = self.tracker.open(model=requested, api=api, requester=caller.requester,
                                origin_node=caller.origin_node, origin_node_id=caller.origin_node_id,
                                job_id=caller.job_id, soon=True)  # told while the upstream is asked
        try:
            return await self._serve(api, operation, body, caller, requested, bodies, job, headers, plan)
        except Exception as exc:
            # Whatever went wrong, the job ends failed: never left queued or running for ever.
            log.exception("job %s failed inside the node", job.id)
            if job.state in ("queued", "running"):
                self.tracker.finish(job, "failed", error=f"internal error: {type(exc).__name__}")
            message = f"the node could not serve this request ({type(exc).__name__})"
            return json_result(500, error_body(api, message, status=500, kind="server_error"), headers)

    async def _serve(self, api: Api, operation: Operation, body: JsonObject, caller: Caller, requested: str,
                     bodies: list[CandidateBody], job: Workload, headers: dict[str, str],
                     plan: Plan) -> InferenceResult:
        stream = wants_stream(api, operation, body)
        failures: list[str] = []
        limited: list[RequesterLimitError] = []
        refused: list[UpstreamRefused] = []
        started_ns = time.monotonic_ns()
        for upstream, target, upstream_body in bodies:
            if target == "ollama" and plan.size is not None:
                upstream_body = with_window(upstream, plan.model, plan.size, upstream_body)
            request = UpstreamRequest(
                api=target, operation=operation, stream=stream, client_api=api, body=upstream_body,
                requester=caller.requester.app or "", requester_key=caller.requester.key or "",
                origin_node_id=job.origin_node_id, job_id=job.id,
            )
            with upstream.slot() as slot:
                try:
                    for gate in self.gates:
                        gate(upstream, caller)
                    answered = await self._unless_too_long(await upstream.open(request), upstream, bodies,
                                                           failures)
                    if answered is None:
                        continue
                    opened = answered
                except UpstreamError as exc:
                    failures.append(exc.message)
                    for watch in self.attempt_watchers:
                        watch(upstream, exc)
                    if isinstance(exc, RequesterLimitError):
                        limited.append(exc)
                    elif isinstance(exc, UpstreamRefused):
                        refused.append(exc)
                    log.info("failover for job %s: %s", job.id, exc.message)
                    continue
                except asyncio.CancelledError:
                    self.tracker.finish(job, "cancelled", error="the caller went away before the first byte")
                    raise
                job.route = plan.why(upstream, failures)
                headers = {**headers, "X-Pairwise-Route": header_safe(job.route)}
                if operation == "chat" and opened.status < 400:
                    # Read at the conversation's next turn: remembered once the first chunk is written.
                    asyncio.get_running_loop().call_soon(self.affinity.remember, plan.model, body.get("messages"),
                                                         upstream.key)
                elif operation == "complete" and opened.status < 400:
                    self.affinity.remember_prompt(plan.model, body, upstream.key)
                return await self._respond(api, operation, body, requested, job, upstream, slot, opened,
                                           target, stream, started_ns, headers, str(upstream_body.get("model")))
        if limited:  # the caller's own limit is what stands in the way: say so (429), with the rest
            return self._refuse_limited(api, job, limited, [f for f in failures if f not in
                                                            {exc.message for exc in limited}], headers)
        if refused:  # a peer's rules refused it (its rented node's cap reached): its 403, as said there
            return self._refuse_by_policy(api, job, refused, [f for f in failures if f not in
                                                              {exc.message for exc in refused}], headers)
        message = f"every node that serves '{requested}' failed: " + "; ".join(failures)
        self.tracker.finish(job, "failed", error=message)
        return json_result(502, error_body(api, message, status=502, kind="upstream_error"), headers)

    async def _unless_too_long(self, opened: Opened, upstream: Upstream, bodies: list[CandidateBody],
                               failures: list[str]) -> Opened | None:
        """An engine's "too long" refusal before its first byte moves the request on when another copy
        remains (None); any other answer is returned as it came (a refusal read whole, for its text)."""
        if opened.status < 400 or upstream is bodies[-1][0]:
            return opened
        try:
            raw = opened.first_chunk + b"".join([c async for c in opened.rest])
        finally:
            await opened.aclose()
        text = upstream.scrub(error_text(raw))
        if is_too_long(opened.status, text):
            failures.append(f"{upstream.display_name()} refused it as too long ({text[:200]})")
            log.info("too long for %s; trying the next copy", upstream.display_name())
            return None

        async def nothing() -> AsyncIterator[bytes]:
            return
            yield b""

        async def closed() -> None:
            return None

        return Opened(opened.status, opened.content_type, raw, nothing(), closed, opened.headers,
                      opened.serving_node, opened.serving_node_id, opened.engine)

    def _refuse_limited(self, api: Api, job: Workload, limited: list[RequesterLimitError], others: list[str],
                        headers: dict[str, str]) -> InferenceResult:
        """No candidate served, and at least one was a rented node this requester is over its limit on:
        429 naming the limits (and what became of the other candidates)."""
        message = "; ".join(dict.fromkeys(exc.message for exc in limited))
        if others:
            message += "; the other nodes that serve it failed: " + "; ".join(others)
        self.tracker.finish(job, "refused", error=message)
        waits = [exc.retry_after_s for exc in limited]
        headers = {**headers, "X-Pairwise-Job": job.id, "X-Pairwise-Limit": "requester"}
        if all(w is not None for w in waits):
            headers["Retry-After"] = str(max(w for w in waits if w is not None))
        else:  # a daily cap: retrying before 00:00 UTC is pointless (OpenAI clients honour this header)
            headers["X-Should-Retry"] = "false"
        return json_result(429, error_body(api, message, status=429, kind="rate_limit"), headers)

    def _refuse_by_policy(self, api: Api, job: Workload, refused: list[UpstreamRefused], others: list[str],
                          headers: dict[str, str]) -> InferenceResult:
        """No candidate served, and a peer refused it by its rules: 403 in the peer's words (which name
        the node and the rule), as a caller on that peer gets, and what became of the other candidates."""
        message = "; ".join(dict.fromkeys(exc.message for exc in refused))
        if others:
            message += "; the other nodes that serve it failed: " + "; ".join(others)
        self.tracker.finish(job, "refused", error=message)
        return json_result(403, error_body(api, message, status=403, kind="refused"),
                           {**headers, "X-Pairwise-Job": job.id})

    async def _respond(self, api: Api, operation: Operation, body: JsonObject, requested: str, job: Workload,
                       upstream: Upstream, slot: InFlight, opened: Opened, target: Api, stream: bool,
                       started_ns: int, headers: dict[str, str], request_model: str) -> InferenceResult:
        """The answer of the upstream that opened. The caller's ``with slot`` gives the slot back
        when this returns or raises; a stream takes it over and gives it back when it closes."""
        ttfb_ms = (time.monotonic_ns() - started_ns) / 1e6
        off_lan = upstream.kind == "rented" or opened.headers.get("x-pairwise-off-lan") is not None
        rented = opened.headers.get("x-pairwise-off-lan") or (upstream.display_name() if upstream.kind == "rented" else None)
        served_by = opened.serving_node or upstream.node_name
        self.tracker.running(job, serving_node=served_by, serving_node_id=opened.serving_node_id or upstream.node_id,
                             engine=opened.engine, ttfb_ms=ttfb_ms, off_lan=off_lan, rented_node=rented,
                             soon=True)  # stored and told once the first chunk is on its way
        headers = {**headers, "X-Pairwise-Node": served_by, "X-Pairwise-Job": job.id}
        if rented:
            headers["X-Pairwise-Off-LAN"] = rented
        if opened.status >= 400:
            try:
                raw = opened.first_chunk + b"".join([c async for c in opened.rest])
            finally:
                await opened.aclose()
            # A rented node's URL and host stay out of errors.
            message = f"{upstream.display_name()} refused the request: {upstream.scrub(error_text(raw))}"
            self.tracker.finish(job, "failed", error=message)
            return json_result(opened.status, error_body(api, message, status=opened.status,
                                                         param=error_param(raw)), headers)

        if stream:
            stream_slot = slot.hand_off()  # the stream outlives this call: its close gives the slot back

            async def finish(state: str, error: str | None, translator: StreamTranslator) -> None:
                stream_slot.release()
                if operation == "complete" and state == "completed":
                    self.affinity.remember_context(canonical_model(requested.strip()), translator.context,
                                                   upstream.key)
                self.tracker.finish(job, state, error=error, prompt_tokens=translator.usage.prompt_tokens,
                                    completion_tokens=translator.usage.completion_tokens)

            translator = make_stream_translator(target, api, operation, requested, str(request_model), body)
            session = StreamSession(opened, upstream, translator, finish, api)
            return InferenceResult(200, translator.content_type, headers, stream=session, job=job)
        try:
            raw = opened.first_chunk + b"".join([c async for c in opened.rest])
        except UpstreamError as exc:
            self.tracker.finish(job, "failed", error=f"upstream broke mid-answer: {exc.message}")
            return json_result(502, error_body(api, "the upstream broke mid-answer", status=502), headers)
        finally:
            await opened.aclose()
        try:
            upstream_body = json.loads(raw)
        except ValueError:
            self.tracker.finish(job, "failed", error="upstream answered with invalid JSON")
            return json_result(502, error_body(api, "the upstream answered with invalid JSON", status=502), headers)
        if not isinstance(upstream_body, dict):  # JSON, but not the object every answer of both APIs is
            message = f"{upstream.display_name()} answered in a shape Pairwise cannot translate: not a JSON object"
            self.tracker.finish(job, "failed", error=message)
            return json_result(502, error_body(api, message, status=502, kind="upstream_error"), headers)
        usage = usage_of(target, upstream_body)
        if operation == "complete":
            # Read at the conversation's next turn, a later request's step: remembered after this answer is written.
            asyncio.get_running_loop().call_soon(self.affinity.remember_context, canonical_model(requested.strip()),
                                                 upstream_body.get("context"), upstream.key)
        # A whole answer is its first byte: the finished record is stored, told and replicated once it is
        # on its way (any later request's step comes after). An off-LAN answer's finish, which ends a rented
        # node's meter, is told at once: its money is never a turn behind.
        soon = not off_lan
        if target == api and upstream_body.get("model") in (None, requested):
            self.tracker.finish(job, "completed", prompt_tokens=usage.prompt_tokens,
                                completion_tokens=usage.completion_tokens, soon=soon)
            return InferenceResult(200, "application/json", headers, raw, job=job)
        try:
            out = translate_body(target, api, operation, upstream_body, requested, started_ns, body)
        except (PairwiseError, ValueError, TypeError, AttributeError) as exc:
            # e.g. tool call arguments that are not JSON: the engine's answer, not the caller's request.
            detail = exc.message if isinstance(exc, PairwiseError) else type(exc).__name__
            message = f"{upstream.display_name()} answered in a shape Pairwise cannot translate: {detail}"
            self.tracker.finish(job, "failed", error=message, prompt_tokens=usage.prompt_tokens,
                                completion_tokens=usage.completion_tokens)
            return json_result(502, error_body(api, message, status=502, kind="upstream_error"), headers)
        self.tracker.finish(job, "completed", prompt_tokens=usage.prompt_tokens,
                            completion_tokens=usage.completion_tokens, soon=soon)
        return InferenceResult(200, "application/json", headers, json.dumps(out).encode(), job=job)
