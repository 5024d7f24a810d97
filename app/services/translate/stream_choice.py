"""Which stream translator a request needs: the same API passes through, the other one is translated.
Apart from ``responses.py``, which both translators import, so that neither import goes round."""

from __future__ import annotations

from typing import cast

from app.services.json_types import JsonObject
from app.services.translate.responses import PassThrough, StreamTranslator, wants_usage_chunk
from app.services.translate.shapes import Api, Operation
from app.services.translate.stream_to_ollama import OpenAIToOllama
from app.services.translate.stream_to_openai import OllamaToOpenAI
from app.services.translate.wire import OpenAIRequest


def make_stream_translator(upstream: Api, client: Api, operation: Operation, requested: str, upstream_model: str,
                           client_body: JsonObject) -> StreamTranslator:
    if upstream == client:
        return PassThrough(client, requested, upstream_model, keep_usage_chunk=wants_usage_chunk(client_body))
    if upstream == "openai":
        return OpenAIToOllama(operation, requested)
    # The client speaks OpenAI here, and its request passed that API's field table (validate.py).
    return OllamaToOpenAI(operation, requested, wants_usage_chunk(client_body), cast(OpenAIRequest, client_body))
