"""The two dialects answered by way of Chat Completions: OpenAI Responses (/v1/responses) and
Anthropic Messages (/v1/messages, /v1/messages/count_tokens).

A request is made a Chat Completions request (translate/resp_request.py, anthropic_request.py) and
run by the inference service like any other, so it takes the same way: routing, failover, the
relay to a peer (which gets Chat Completions), rented nodes, jobs and usage. The answer, whole or
streamed, is written back in the caller's dialect."""

from __future__ import annotations

import json
from collections.abc import Awaitable, Callable, Mapping
from typing import TYPE_CHECKING, cast

from aiohttp import web

from app.services.frontdoor.dialect_stream import DialectStream
from app.services.frontdoor.http import read_json_body, write_result
from app.services.inference import InferenceResult, json_result
from app.services.json_types import JsonArray, JsonObject
from app.services.keys.auth import caller_for, model_refusal
from app.services.translate.anthropic_answer import AnthropicWriter, chat_to_message
from app.services.translate.anthropic_answer import error_body as anthropic_error
from app.services.translate.anthropic_request import anthropic_to_chat
from app.services.translate.checks import InvalidRequest
from app.services.translate.refusal import Unsupported
from app.services.translate.resp_answer import chat_to_response, new_id, output_to_chat
from app.services.translate.resp_request import responses_to_chat
from app.services.translate.resp_store import ResponseStore
from app.services.translate.resp_stream import ResponsesWriter
from app.services.translate.shapes import error_body
from app.services.translate.wire import AnthropicRequest, OpenAIAnswer, ResponsesObject, ResponsesRequest

if TYPE_CHECKING:
    from app.services.frontdoor.context import DoorNode



def _message_of(raw: bytes | None) -> str:
    try:
        error = json.loads(raw or b"{}").get("error")
    except (ValueError, AttributeError):
        return "the request failed"
    return str(error.get("message") if isinstance(error, dict) else error or "the request failed")


Handler = Callable[[web.Request], Awaitable[web.StreamResponse]]


def dialect_handlers(node: DoorNode) -> dict[str, Handler]:
    """The handlers of ``DIALECT_PATHS`` (the front door registers them and imports this module at the
    first call of one: a node nobody asks in these dialects never loads their translators)."""
    store = ResponseStore()
    limit = node.settings.max_body_bytes

    async def responses(request: web.Request) -> web.StreamResponse:
        body = await read_json_body(request, "openai", limit)
        if isinstance(body, web.Response):
            return body
        try:
            previous = body.get("previous_response_id")
            history = store.conversation(previous) if isinstance(previous, str) and previous else []
            chat = responses_to_chat(body, history)
        except (Unsupported, InvalidRequest) as exc:
            return web.json_response(error_body("openai", exc.message, status=400, param=exc.field), status=400)
        refused = model_refusal(request, "openai", body)
        if refused is not None:
            return refused
        result = await node.inference.run("openai", "chat", chat, caller_for(node, request))
        response_id = new_id("resp")
        messages = cast(JsonArray, chat["messages"])  # responses_to_chat puts its list there
        asked = messages[1:] if body.get("instructions") else messages
        asking = cast(ResponsesRequest, body)  # its field table took it (responses_to_chat)

        def keep(response: ResponsesObject) -> None:
            if body.get("store", True) is not False and response["status"] in ("completed", "incomplete"):
                store.keep(response_id, [*asked, output_to_chat(response["output"])])

        if result.status != 200:  # an OpenAI-shaped error is the Responses API's error shape
            return await write_result(request, result)
        if result.stream is not None:
            writer = ResponsesWriter(asking, response_id, keep)
            result.stream = DialectStream(result.stream, writer)
            return await write_result(request, result)
        answer: OpenAIAnswer = json.loads(result.body or b"{}")  # the inference service's own OpenAI answer
        response = chat_to_response(answer, asking, response_id)
        keep(response)
        return await write_result(request, _rewritten(result, response))

    def anthropic_refusal(status: int, message: str) -> web.Response:
        return web.json_response(anthropic_error(status, message), status=status)

    async def anthropic_chat(request: web.Request, counting: bool) -> tuple[AnthropicRequest, JsonObject] | web.Response:
        body = await read_json_body(request, "openai", limit)
        if isinstance(body, web.Response):
            return anthropic_refusal(body.status, _message_of(body.body if isinstance(body.body, bytes) else None))
        try:
            chat = anthropic_to_chat(body, counting)
        except (Unsupported, InvalidRequest) as exc:
            return anthropic_refusal(400, exc.message)
        refused = model_refusal(request, "openai", body)
        if refused is not None:
            return anthropic_refusal(refused.status, _message_of(refused.body if isinstance(refused.body, bytes)
                                                                 else None))
        return cast(AnthropicRequest, body), chat  # its field table took it (anthropic_to_chat)

    async def messages(request: web.Request) -> web.StreamResponse:
        asked = await anthropic_chat(request, counting=False)
        if isinstance(asked, web.Response):
            return asked
        body, chat = asked
        result = await node.inference.run("openai", "chat", chat, caller_for(node, request))
        if result.status != 200:
            return await write_result(request, _anthropic_failure(result))
        if result.stream is not None:
            result.stream = DialectStream(result.stream, AnthropicWriter(body["model"]))
            return await write_result(request, result)
        answer: OpenAIAnswer = json.loads(result.body or b"{}")  # the inference service's own OpenAI answer
        message = chat_to_message(answer, body["model"])
        return await write_result(request, _rewritten(result, message))

    async def count_tokens(request: web.Request) -> web.StreamResponse:
        # The engine counts: the prompt is sent with a budget of one token and its usage read back.
        asked = await anthropic_chat(request, counting=True)
        if isinstance(asked, web.Response):
            return asked
        _, chat = asked
        chat.update({"max_tokens": 1, "stream": False})
        chat.pop("stream_options", None)
        result = await node.inference.run("openai", "chat", chat, caller_for(node, request))
        if result.status != 200:
            return await write_result(request, _anthropic_failure(result))
        counted: OpenAIAnswer = json.loads(result.body or b"{}")
        usage = counted.get("usage") or {}
        return await write_result(request, _rewritten(result, {"input_tokens": usage.get("prompt_tokens") or 0}))

    return {"/v1/responses": responses, "/v1/messages": messages, "/v1/messages/count_tokens": count_tokens}


def _rewritten(result: InferenceResult, obj: Mapping[str, object]) -> InferenceResult:
    return json_result(result.status, obj, result.headers)


def _anthropic_failure(result: InferenceResult) -> InferenceResult:
    return json_result(result.status, anthropic_error(result.status, _message_of(result.body)), result.headers)
