"""An Anthropic Messages request (/v1/messages) as a Chat Completions request.

What each field becomes is in fields_dialects.ANTHROPIC_TO_CHAT (also the README's table); a field
it refuses, a server tool, or a content block with no counterpart is refused by name."""

from __future__ import annotations

import json
from typing import cast

from app.services.json_types import JsonArray, JsonObject, JsonValue
from app.services.translate.checks import InvalidRequest
from app.services.translate.fields import fate, is_empty, why
from app.services.translate.fields_dialects import ANTHROPIC_TO_CHAT
from app.services.translate.refusal import Unsupported
from app.services.translate.validate import ANTHROPIC
from app.services.translate.wire import AnthropicBlock, AnthropicMessage, AnthropicRequest, AnthropicTool

# A Chat Completions message as this builds it: a plain JSON object, checked with the whole chat
# request by the OpenAI field table when the inference service runs it (validate.py).
ChatMessage = JsonObject
DIALECT = "the Anthropic Messages API"


def refuse(field: str, why: str) -> Unsupported:
    return Unsupported(field, DIALECT, why)


def validate_anthropic(body: JsonObject, counting: bool = False) -> None:
    ANTHROPIC["count" if counting else "create"](body, "")
    for name, value in body.items():
        if not is_empty(value) and fate(ANTHROPIC_TO_CHAT, name) == "refused":
            raise refuse(name, why(ANTHROPIC_TO_CHAT, name, "not a field of the Messages API Pairwise knows"))


def anthropic_to_chat(raw: JsonObject, counting: bool = False) -> JsonObject:
    validate_anthropic(raw, counting)
    body = cast(AnthropicRequest, raw)  # its field table took it
    messages: JsonArray = []
    system = body.get("system")
    if system:
        messages.append({"role": "system", "content": system if isinstance(system, str) else
                         text_of(system, "system")})
    for index, message in enumerate(body["messages"]):
        messages += message_to_chat(message, f"messages[{index}]")
    out: JsonObject = {"model": body["model"], "messages": messages}
    if body.get("max_tokens") is not None:
        out["max_tokens"] = body["max_tokens"]
    tools: JsonArray = [tool_to_chat(tool, f"tools[{i}]") for i, tool in enumerate(body.get("tools") or [])]
    choice = body.get("tool_choice") or {}
    if tools and choice.get("type") != "none":
        out["tools"] = tools
        if choice.get("type") == "any":
            out["tool_choice"] = "required"
        elif choice.get("type") == "tool":
            out["tool_choice"] = {"type": "function", "function": {"name": choice.get("name", "")}}
        if choice.get("disable_parallel_tool_use"):
            out["parallel_tool_calls"] = False
    if body.get("stop_sequences"):
        out["stop"] = raw["stop_sequences"]
    for name in ("temperature", "top_p", "top_k"):
        if raw.get(name) is not None:
            out[name] = raw[name]
    thinking = body.get("thinking") or {}
    if thinking.get("type") == "enabled":
        budget = thinking.get("budget_tokens") or 8192
        out["reasoning_effort"] = "low" if budget < 4096 else "medium" if budget < 16384 else "high"
    elif thinking.get("type") in ("adaptive", "between_tools"):
        out["reasoning_effort"] = "medium"
    config = body.get("output_config") or {}
    if config.get("effort") in ("low", "medium", "high", "xhigh", "max"):
        out["reasoning_effort"] = config["effort"] if config["effort"] in ("low", "medium", "high") else "high"
    fmt = config.get("format") or {}
    if fmt.get("type") == "json_schema":
        out["response_format"] = {"type": "json_schema", "json_schema": {"name": "output", "schema": fmt["schema"],
                                                                          "strict": True}}
    elif fmt:
        raise refuse("output_config.format.type", "only json_schema formats are taken")
    if body.get("stream"):
        out["stream"] = True
        out["stream_options"] = {"include_usage": True}
    return out


def text_of(blocks: list[AnthropicBlock], path: str) -> str:
    texts = []
    for n, block in enumerate(blocks):
        if block.get("type") != "text":
            raise refuse(f"{path}[{n}].type", "only text blocks are taken here")
        texts.append(str(block.get("text") or ""))
    return "\n".join(texts)


def image_part(block: AnthropicBlock, path: str) -> JsonObject:
    source = block.get("source")
    if not isinstance(source, dict):
        source = {}
    if source.get("type") == "base64":
        url = f"data:{source.get('media_type') or 'image/png'};base64,{source.get('data') or ''}"
    elif source.get("type") == "url":
        url = str(source.get("url") or "")
    else:
        raise refuse(f"{path}.source.type", "images are taken as base64 or url sources (a file_id names a file "
                                            "stored at Anthropic)")
    return {"type": "image_url", "image_url": {"url": url}}


def message_to_chat(message: AnthropicMessage, path: str) -> list[ChatMessage]:
    role = message.get("role")
    if role not in ("user", "assistant"):
        raise refuse(f"{path}.role", "a message is from the user or the assistant (system goes in 'system')")
    content = message["content"]
    if isinstance(content, str):
        return [{"role": role, "content": content}]
    if role == "assistant":
        return [assistant_to_chat(content, f"{path}.content")]
    tool_results: list[ChatMessage] = []
    parts: list[JsonObject] = []  # each with its "type", and "text" for a text part
    for n, block in enumerate(content):
        kind, where = block.get("type"), f"{path}.content[{n}]"
        if kind == "text":
            parts.append({"type": "text", "text": block.get("text", "")})
        elif kind == "image":
            parts.append(image_part(block, where))
        elif kind == "tool_result":
            tool_results.append(tool_result(block, where))
        elif kind in ("thinking", "redacted_thinking"):
            continue
        else:
            raise refuse(f"{where}.type", f"content blocks of type {kind!r} have no counterpart here")
    out = list(tool_results)  # tool results answer the assistant turn just before, so they come first
    if parts:
        images = any(p["type"] == "image_url" for p in parts)
        out.append({"role": "user", "content": list[JsonValue](parts) if images else "".join(
            str(p["text"]) for p in parts)})
    return out


def tool_result(block: AnthropicBlock, path: str) -> ChatMessage:
    content = block.get("content")
    text = content if isinstance(content, str) else text_of(_blocks(content, f"{path}.content"), f"{path}.content")
    if block.get("is_error"):
        text = f"error: {text}"
    return {"role": "tool", "tool_call_id": block.get("tool_use_id", ""), "content": text}


def _blocks(value: JsonValue, path: str) -> list[AnthropicBlock]:
    """A tool result's own content blocks, which its table does not check: each an object."""
    if not value:
        return []
    if not isinstance(value, list):
        raise InvalidRequest(path, "a string or a list of content blocks")
    for n, block in enumerate(value):
        if not isinstance(block, dict):
            raise InvalidRequest(f"{path}[{n}]", "a content block object")
    return cast(list[AnthropicBlock], value)  # each checked just now


def assistant_to_chat(blocks: list[AnthropicBlock], path: str) -> ChatMessage:
    texts: list[str] = []
    calls: JsonArray = []
    for n, block in enumerate(blocks):
        kind = block.get("type")
        if kind == "text":
            texts.append(str(block.get("text") or ""))
        elif kind == "tool_use":
            calls.append({"id": block.get("id", ""), "type": "function",
                          "function": {"name": block.get("name", ""), "arguments": json.dumps(block.get("input") or {})}})
        elif kind in ("thinking", "redacted_thinking"):
            continue
        else:
            raise refuse(f"{path}[{n}].type", f"content blocks of type {kind!r} have no counterpart here")
    turn: ChatMessage = {"role": "assistant", "content": "".join(texts)}
    if calls:
        turn["tool_calls"] = calls
    return turn


def tool_to_chat(tool: AnthropicTool, path: str) -> JsonObject:
    kind = tool.get("type")
    if kind not in (None, "custom"):
        raise refuse(f"{path}.type", f"the server tool {kind!r} cannot be run here: Pairwise runs models on your "
                                     "machines, not Anthropic's tools; declare a custom tool instead")
    function: JsonObject = {"name": tool["name"], "parameters": tool.get("input_schema") or {"type": "object"}}
    if tool.get("description"):
        function["description"] = tool["description"]
    return {"type": "function", "function": function}
