"""Images between Ollama's base64 strings and OpenAI's image_url data URLs.

Remote image URLs are never fetched: a node that downloads what a prompt points at would
reach wherever a caller (or a document in its context) tells it to."""

from __future__ import annotations

import base64
import binascii

from app.services.translate.refusal import Untranslatable

_SIGNATURES: tuple[tuple[bytes, str], ...] = (
    (b"\x89PNG\r\n\x1a\n", "image/png"),
    (b"\xff\xd8\xff", "image/jpeg"),
    (b"GIF87a", "image/gif"),
    (b"GIF89a", "image/gif"),
    (b"RIFF", "image/webp"),  # RIFF....WEBP
    (b"BM", "image/bmp"),
)


def mime_of(b64: str) -> str:
    try:
        head = base64.b64decode(b64[:32] + "=" * (-len(b64[:32]) % 4), validate=False)
    except (binascii.Error, ValueError):
        return "application/octet-stream"
    return next((mime for signature, mime in _SIGNATURES if head.startswith(signature)), "application/octet-stream")


def data_url(b64: str) -> str:
    return f"data:{mime_of(b64)};base64,{b64}"


def base64_of(url: str, field: str) -> str:
    """The base64 payload of a data: URL; a remote URL is refused by name."""
    if not url.startswith("data:"):
        raise Untranslatable(field, "ollama", "remote image URLs are never fetched by Pairwise; "
                                              "send the image inline as a data: URL")
    header, _, payload = url.partition(",")
    if not header.endswith(";base64") or not payload:
        raise Untranslatable(field, "ollama", "only base64 data: URLs carry an image Ollama can read")
    return payload
