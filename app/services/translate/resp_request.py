"""An OpenAI Responses request (/v1/responses) as a Chat Completions request.

What each field becomes is in fields_dialects.RESPONSES_TO_CHAT (also the README's table). A field
the table refuses, a built-in tool, or an input item of a kind with no counterpart is refused by
name (Unsupported, a 400 naming the field), before any engine is asked."""

from __future__ import annotations

import json
from typing import cast

from app.services.json_types import JsonArray, JsonObject, JsonValue
from app.services.translate.checks import InvalidRequest
from app.services.translate.fields import fate, is_empty, why
from app.services.translate.fields_dialects import RESPONSES_TO_CHAT
from app.services.translate.refusal import Unsupported
from app.services.translate.validate import RESPONSES
from app.services.translate.wire import ResponsesRequest, ResponsesTool

# A Chat Completions message as this builds it: a plain JSON object, checked with the whole chat
# request by the OpenAI field table when the inference service runs it (validate.py).
ChatMessage = JsonObject


def refuse(field: str, why: str) -> Unsupported:
    return Unsupported(field, "the Responses API", why)


def validate_responses(body: JsonObject) -> None:
    RESPONSES(body, "")
    for name, value in body.items():
        if not is_empty(value) and fate(RESPONSES_TO_CHAT, name) == "refused":
            raise refuse(name, why(RESPONSES_TO_CHAT, name, "not a field of the Responses API Pairwise knows"))


def responses_to_chat(raw: JsonObject, history: JsonArray) -> JsonObject:
    """The Chat Completions body; ``history`` is the stored conversation of previous_response_id."""
    validate_responses(raw)
    body = cast(ResponsesRequest, raw)  # its field table took it
    messages: JsonArray = []
    if body.get("instructions"):
        messages.append({"role": "system", "content": body["instructions"]})
    messages += history
    messages += input_messages(body.get("input"))
    out: JsonObject = {"model": body["model"], "messages": messages}
    tools: JsonArray = [tool_to_chat(tool, f"tools[{i}]") for i, tool in enumerate(body.get("tools") or [])]
    if tools:
        out["tools"] = tools
    if body.get("tool_choice") is not None:
        out["tool_choice"] = tool_choice_to_chat(body["tool_choice"])
    for name in ("parallel_tool_calls", "temperature", "top_p"):
        if raw.get(name) is not None:
            out[name] = raw[name]
    if body.get("max_output_tokens") is not None:
        out["max_tokens"] = body["max_output_tokens"]
    fmt = ((body.get("text") or {}).get("format")) or {}
    if fmt.get("type") == "json_object":
        out["response_format"] = {"type": "json_object"}
    elif fmt.get("type") == "json_schema":
        out["response_format"] = {"type": "json_schema", "json_schema": {
            "name": fmt.get("name") or "response", "schema": fmt.get("schema") or {}, "strict": bool(fmt.get("strict"))}}
    effort = (body.get("reasoning") or {}).get("effort")
    if effort in ("minimal", "low", "medium", "high"):
        out["reasoning_effort"] = "low" if effort == "minimal" else effort
    if body.get("stream"):
        out["stream"] = True
        out["stream_options"] = {"include_usage": True}
    return out


def input_messages(value: str | list[JsonObject] | None) -> list[ChatMessage]:
    if value is None:
        return []
    if isinstance(value, str):
        return [{"role": "user", "content": value}]
    out: list[ChatMessage] = []
    for index, item in enumerate(value):
        kind = item.get("type") or ("message" if "role" in item else None)
        path = f"input[{index}]"
        if kind == "message":
            out.append(message_to_chat(item, path))
        elif kind == "function_call":
            call: JsonObject = {"id": item.get("call_id") or item.get("id") or f"call_{index}", "type": "function",
                                "function": {"name": item.get("name", ""), "arguments": item.get("arguments") or "{}"}}
            last = out[-1] if out else None
            calls = last.get("tool_calls") if last is not None and last["role"] == "assistant" else None
            if isinstance(calls, list):
                calls.append(call)  # one assistant turn holds every call it made
            else:
                out.append({"role": "assistant", "content": "", "tool_calls": [call]})
        elif kind == "function_call_output":
            output = item.get("output")
            text = output if isinstance(output, str) else parts_text(output if isinstance(output, list) else [],
                                                                     f"{path}.output")
            out.append({"role": "tool", "tool_call_id": item.get("call_id", ""), "content": text})
        elif kind == "reasoning":
            continue
        else:
            raise refuse(f"{path}.type", f"input items of type {kind!r} have no counterpart here")
    return out


def message_to_chat(item: JsonObject, path: str) -> ChatMessage:
    role = item.get("role", "user")
    role = "system" if role == "developer" else role
    content = item.get("content")
    if content is None or isinstance(content, str):
        return {"role": role, "content": content or ""}
    if not isinstance(content, list):
        raise InvalidRequest(f"{path}.content", "a string or a list of content parts")
    if role != "user" or all(isinstance(p, dict) and p.get("type") in ("input_text", "output_text", "text")
                             for p in content):
        return {"role": role, "content": parts_text(content, f"{path}.content")}
    parts: JsonArray = []
    for n, part in enumerate(content):
        if not isinstance(part, dict):
            raise InvalidRequest(f"{path}.content[{n}]", "a content part object")
        kind = part.get("type")
        if kind in ("input_text", "output_text", "text"):
            parts.append({"type": "text", "text": part.get("text", "")})
        elif kind == "input_image":
            url = part.get("image_url")
            if not isinstance(url, str) or not url:
                raise refuse(f"{path}.content[{n}]", "images are taken as an image_url (a file_id names a "
                                                      "file stored at OpenAI)")
            parts.append({"type": "image_url", "image_url": {"url": url}})
        else:
            raise refuse(f"{path}.content[{n}].type", f"content parts of type {kind!r} have no counterpart here")
    return {"role": role, "content": parts}


def parts_text(parts: JsonArray, path: str) -> str:
    texts = []
    for n, part in enumerate(parts):
        if not isinstance(part, dict) or part.get("type") not in ("input_text", "output_text", "text", "refusal"):
            raise refuse(f"{path}[{n}]", "only text parts are taken here")
        texts.append(str(part.get("text") or part.get("refusal") or ""))
    return "".join(texts)


def tool_to_chat(tool: ResponsesTool, path: str) -> JsonObject:
    kind = tool.get("type")
    if kind != "function":
        raise refuse(f"{path}.type", f"the built-in tool {kind!r} cannot be run here: Pairwise runs models "
                                     "on your machines, not OpenAI's tools; offer a function tool instead")
    function: JsonObject = {"name": tool.get("name", ""), "parameters": tool.get("parameters") or
                                {"type": "object", "properties": {}}}
    if tool.get("description"):
        function["description"] = tool["description"]
    if tool.get("strict") is not None:
        function["strict"] = tool["strict"]
    return {"type": "function", "function": function}


def tool_choice_to_chat(choice: JsonValue) -> JsonValue:
    if choice in ("auto", "none", "required"):
        return choice
    if isinstance(choice, dict) and choice.get("type") == "function" and choice.get("name"):
        return {"type": "function", "function": {"name": choice["name"]}}
    raise refuse("tool_choice", f"{json.dumps(choice)[:80]} has no counterpart here (auto, none, required or a "
                                "named function)")
