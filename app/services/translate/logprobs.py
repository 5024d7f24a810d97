"""Log probabilities between Ollama's list and OpenAI's shapes (chat: content list; completions: legacy)."""

from __future__ import annotations

from app.services.translate.wire import OllamaLogprob, OpenAILogprobs


def _utf8(token: str) -> list[int]:
    return list(token.encode("utf-8"))


def ollama_to_openai_chat(items: list[OllamaLogprob] | None) -> OpenAILogprobs | None:
    if not items:
        return None
    return {"content": [{"token": i.get("token", ""), "logprob": i.get("logprob", 0.0), "bytes": _utf8(i.get("token", "")),
                         "top_logprobs": [{"token": t.get("token", ""), "logprob": t.get("logprob", 0.0),
                                           "bytes": _utf8(t.get("token", ""))} for t in i.get("top_logprobs") or []]}
                        for i in items], "refusal": None}


def ollama_to_openai_legacy(items: list[OllamaLogprob] | None, offset: int = 0) -> OpenAILogprobs | None:
    if not items:
        return None
    offsets, position = [], offset
    for item in items:
        offsets.append(position)
        position += len(item.get("token", ""))
    return {"tokens": [i.get("token", "") for i in items], "token_logprobs": [i.get("logprob", 0.0) for i in items],
            "top_logprobs": [{t.get("token", ""): t.get("logprob", 0.0) for t in i.get("top_logprobs") or []}
                             for i in items], "text_offset": offsets}


def openai_to_ollama(logprobs: OpenAILogprobs | None) -> list[OllamaLogprob] | None:
    """Either OpenAI shape (chat's content list or completions' legacy columns) as Ollama's list."""
    if not isinstance(logprobs, dict):
        return None
    if isinstance(logprobs.get("content"), list):
        return [{"token": c.get("token", ""), "logprob": c.get("logprob", 0.0),
                 "top_logprobs": [{"token": t.get("token", ""), "logprob": t.get("logprob", 0.0)}
                                  for t in c.get("top_logprobs") or []]} for c in logprobs["content"]]
    tokens = logprobs.get("tokens") or []
    values = logprobs.get("token_logprobs") or []
    tops = logprobs.get("top_logprobs") or []
    return [{"token": token, "logprob": values[i] if i < len(values) else 0.0,
             "top_logprobs": [{"token": t, "logprob": v} for t, v in ((tops[i] if i < len(tops) else None) or {}).items()]}
            for i, token in enumerate(tokens)] or None
