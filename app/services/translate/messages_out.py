"""One answer's message between the APIs: text, reasoning, refusal, tool calls, finish reason."""

from __future__ import annotations

import json
import time

from app.services.translate.tool_calls import answer_arguments, call_id
from app.services.translate.wire import OllamaMessage, OllamaToolCall, OpenAIReply, OpenAIToolCall


def openai_message_to_ollama(message: OpenAIReply) -> OllamaMessage:
    """An OpenAI assistant message (or a whole streamed one) as Ollama's; a refusal is its text."""
    out: OllamaMessage = {"role": "assistant", "content": message.get("content") or message.get("refusal") or ""}
    reasoning = message.get("reasoning_content") or message.get("reasoning")
    if reasoning:
        out["thinking"] = reasoning
    calls = message.get("tool_calls")
    if calls:
        out["tool_calls"] = [{"function": {"name": (c.get("function") or {}).get("name", ""),
                                           "arguments": answer_arguments((c.get("function") or {}).get("arguments"))}}
                             for c in calls]
    return out


def ollama_done_reason(finish_reason: str | None) -> str:
    # Ollama ends a tool-calling answer with "stop"; "length" is the same in both.
    return "length" if finish_reason == "length" else "stop"


def ollama_calls_to_openai_deltas(calls: list[OllamaToolCall], first_index: int) -> list[OpenAIToolCall]:
    """Ollama tool calls as OpenAI ids and JSON-string arguments, numbered from ``first_index``."""
    stamp = str(time.time_ns())
    return [{"index": first_index + n, "id": call.get("id") or call_id(stamp, first_index + n), "type": "function",
             "function": {"name": (call.get("function") or {}).get("name", ""),
                          "arguments": json.dumps((call.get("function") or {}).get("arguments") or {})}}
            for n, call in enumerate(calls)]


def ollama_message_to_openai(message: OllamaMessage) -> OpenAIReply:
    out: OpenAIReply = {"role": "assistant", "content": message.get("content") or "", "refusal": None}
    if message.get("thinking"):
        out["reasoning_content"] = message["thinking"]
    if message.get("tool_calls"):
        calls = ollama_calls_to_openai_deltas(message["tool_calls"], 0)
        for call in calls:
            del call["index"]  # a whole answer's calls have no index (a delta's do)
        out["tool_calls"] = calls
        out["content"] = out["content"] or None
    return out
