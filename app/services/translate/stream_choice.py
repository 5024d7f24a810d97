"""Which stream translator a request needs: the same API passes through, the other one is translated.
Apart from ``responses.py``, which both translators import, so that neither import goes round."""

from __future__ import annotations

from typing import Any

from app.services.translate.responses import PassThrough, StreamTranslator, wants_usage_chunk
from app.services.translate.shapes import Api, Operation
from app.services.translate.stream_to_ollama import OpenAIToOllama
from app.services.translate.stream_to_openai import OllamaToOpenAI


def make_stream_translator(upstream: Api, client: Api, operation: Operation, requested: str, upstream_model: str,
                           client_body: dict[str, Any]) -> StreamTranslator:
    if upstream == client:
        return PassThrough(client, requested, upstream_model, keep_usage_chunk=wants_usage_chunk(client_body))
    if upstream == "openai":
        return OpenAIToOllama(operation, requested)
    return OllamaToOpenAI(operation, requested, wants_usage_chunk(client_body), client_body)
