"""Errors from Hugging Face's APIs, read the way huggingface_hub reads them (hf-api.md §0).

    PairwiseError
    └── HfError                 HF answered an error (status, HF's own message, request id)
        ├── HfAuthError         401: the token is invalid, or has no access to the namespace
        ├── HfPermissionError   403: the token lacks a permission (named when HF names it)
        ├── HfNotFound          404: no such endpoint / namespace / route
        └── HfUnavailable       429, 5xx, timeouts, unreachable: still failing after the retries

The message never contains the token: HF's messages do not echo it, and the client never
puts it in one.
"""

from __future__ import annotations

import json

import httpx

from app.services.errors import CredentialError, NotFound, PairwiseError, RefusedError


class HfError(PairwiseError):
    title = "Hugging Face error"
    status = 502

    def __init__(self, message: str, *, hf_status: int | None = None, hf_message: str = "",
                 request_id: str | None = None, error_code: str | None = None) -> None:
        super().__init__(message)
        self.hf_status = hf_status
        self.hf_message = hf_message
        self.request_id = request_id
        self.error_code = error_code
        self.retry_after_s: float | None = None  # what a 429 asked us to wait (Retry-After), if it said


class HfAuthError(HfError, CredentialError):
    title = "Hugging Face refused the token"
    status = 401


class HfPermissionError(HfError, RefusedError):
    title = "Hugging Face token lacks a permission"
    status = 403


class HfNotFound(HfError, NotFound):
    title = "Not found on Hugging Face"
    status = 404


class HfUnavailable(HfError):
    title = "Hugging Face unavailable"
    status = 503


def hf_message(response: httpx.Response) -> str:
    """HF's own error text: X-Error-Message, then the JSON error shapes, then plain text (not HTML)."""
    header = response.headers.get("x-error-message")
    if header:
        return header.strip()
    text = response.text.strip() if response.content else ""
    try:
        data = json.loads(text) if text else None
    except ValueError:
        data = None
    if isinstance(data, dict):
        error = data.get("error")
        if isinstance(error, list):
            message = "; ".join(str(e) for e in error)
        elif isinstance(error, dict):
            message = str(error.get("message") or error)
        elif error is not None:
            message = str(error)
        elif isinstance(data.get("errors"), list):
            message = "; ".join(str(e.get("message", e)) if isinstance(e, dict) else str(e) for e in data["errors"])
        else:
            message = str(data.get("message") or "")
        description = data.get("error_description")
        if description:
            message = f"{message}: {description}" if message else str(description)
        if message:
            return message[:500]
    if text and not text.lstrip().lower().startswith(("<!doctype", "<html")):
        return text[:500]
    return response.reason_phrase or f"HTTP {response.status_code}"


def error_for(response: httpx.Response, what: str) -> HfError:
    """The error for a final (non-retried) failed response to the call described by ``what``."""
    status = response.status_code
    message = hf_message(response)
    request_id = response.headers.get("x-request-id") or response.headers.get("x-amzn-trace-id")
    code = response.headers.get("x-error-code")
    text = f"{what}: Hugging Face answered {status}: {message}"
    cls: type[HfError] = HfError
    if status == 401:
        cls = HfAuthError
    elif status == 403:
        cls = HfPermissionError
    elif status == 404:
        cls = HfNotFound
    elif status == 429 or status >= 500:
        cls = HfUnavailable
    error = cls(text, hf_status=status, hf_message=message, request_id=request_id, error_code=code)
    if cls is HfError:
        error.status = 400 if 400 <= status < 500 else 502
    return error
