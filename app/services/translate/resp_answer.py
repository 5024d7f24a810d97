"""A Chat Completions answer as an OpenAI Responses object (whole, or built up by the stream
translator in resp_stream.py): output items for reasoning, text and function calls, usage."""

from __future__ import annotations

import time
import uuid

from app.services.json_types import JsonArray, JsonObject
from app.services.translate.responses import Usage
from app.services.translate.wire import (
    OpenAIAnswer,
    OpenAIChoice,
    OpenAIReply,
    ResponsesItem,
    ResponsesObject,
    ResponsesPart,
    ResponsesRequest,
    ResponsesText,
)


def new_id(prefix: str) -> str:
    return f"{prefix}_{uuid.uuid4().hex}"


def response_usage(usage: Usage) -> JsonObject:
    prompt, completion = usage.prompt_tokens or 0, usage.completion_tokens or 0
    return {"input_tokens": prompt, "input_tokens_details": {"cached_tokens": 0}, "output_tokens": completion,
            "output_tokens_details": {"reasoning_tokens": 0}, "total_tokens": prompt + completion}


def text_format(body: ResponsesRequest) -> ResponsesText:
    return {"format": ((body.get("text") or {}).get("format")) or {"type": "text"}}


def response_object(response_id: str, body: ResponsesRequest, output: list[ResponsesItem], status: str,
                    usage: Usage | None, created_at: int | None = None) -> ResponsesObject:
    """The response as the openai SDK types it (``openai.types.responses.Response``)."""
    reasoning = body.get("reasoning") or {}
    return {
        "id": response_id, "object": "response", "created_at": created_at or int(time.time()),
        "status": status, "model": body.get("model", ""), "output": output,
        "error": None, "incomplete_details": {"reason": "max_output_tokens"} if status == "incomplete" else None,
        "instructions": body.get("instructions"), "metadata": body.get("metadata") or {},
        "parallel_tool_calls": body.get("parallel_tool_calls", True), "temperature": body.get("temperature"),
        "top_p": body.get("top_p"), "tool_choice": body.get("tool_choice") or "auto",
        "tools": body.get("tools") or [], "max_output_tokens": body.get("max_output_tokens"),
        "previous_response_id": body.get("previous_response_id"), "store": body.get("store", True) is not False,
        "reasoning": {"effort": reasoning.get("effort"), "summary": reasoning.get("summary")},
        "text": text_format(body), "truncation": "disabled", "user": body.get("user"),
        "usage": response_usage(usage) if usage is not None else None,
    }


def message_item(item_id: str, text: str, status: str = "completed") -> ResponsesItem:
    content: list[ResponsesPart] = [{"type": "output_text", "text": text, "annotations": [], "logprobs": []}] if status == "completed" else []
    return {"type": "message", "id": item_id, "status": status, "role": "assistant", "content": content}


def reasoning_item(item_id: str, text: str) -> ResponsesItem:
    return {"type": "reasoning", "id": item_id, "summary": [],
            "content": [{"type": "reasoning_text", "text": text}] if text else []}


def call_item(item_id: str, call_id: str, name: str, arguments: str, status: str = "completed") -> ResponsesItem:
    return {"type": "function_call", "id": item_id, "call_id": call_id, "name": name, "arguments": arguments,
            "status": status}


def chat_to_output(message: OpenAIReply) -> list[ResponsesItem]:
    output: list[ResponsesItem] = []
    reasoning = message.get("reasoning_content") or message.get("reasoning")
    if reasoning:
        output.append(reasoning_item(new_id("rs"), reasoning))
    content = message.get("content")
    if content:
        output.append(message_item(new_id("msg"), content))
    for call in message.get("tool_calls") or []:
        function = call.get("function") or {}
        output.append(call_item(new_id("fc"), call.get("id") or new_id("call"), function.get("name", ""),
                                function.get("arguments") or "{}"))
    return output


def output_to_chat(output: list[ResponsesItem]) -> JsonObject:
    """The assistant turn a stored response adds to its conversation (for previous_response_id)."""
    text = "".join(part.get("text", "") for item in output if item["type"] == "message" for part in item["content"])
    calls: JsonArray = [{"id": item["call_id"], "type": "function", "function": {"name": item["name"],
                                                                      "arguments": item["arguments"]}}
             for item in output if item["type"] == "function_call"]
    turn: JsonObject = {"role": "assistant", "content": text}
    if calls:
        turn["tool_calls"] = calls
    return turn


def chat_to_response(chat: OpenAIAnswer, body: ResponsesRequest, response_id: str) -> ResponsesObject:
    choice: OpenAIChoice = (chat.get("choices") or [{}])[0]
    usage = chat.get("usage") or {}
    status = "incomplete" if choice.get("finish_reason") == "length" else "completed"
    return response_object(response_id, body, chat_to_output(choice.get("message") or {}), status,
                           Usage(usage.get("prompt_tokens"), usage.get("completion_tokens")))
