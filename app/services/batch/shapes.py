"""The Files and Batch objects as the OpenAI API (and its SDK's types) has them, and the endpoints a
batch line may name.

``FileObject``, ``BatchObject``, ``RequestCounts`` and ``BatchUsage`` mirror ``openai.types``
(``FileObject``, ``Batch``, ``BatchRequestCounts``, ``BatchUsage``); a batch also carries a
``pairwise`` object (progress, the copies serving it and their measured rates, cost) that the SDK
keeps as an extra field. Output and error lines are ``OutputLine``s, as OpenAI writes them.
"""

from __future__ import annotations

import re
import secrets
from typing import Literal, NotRequired, TypedDict

from app.services.translate.shapes import Api, Operation

BatchStatus = Literal["validating", "failed", "in_progress", "finalizing", "completed", "expired", "cancelling",
                      "cancelled"]
ACTIVE = ("validating", "in_progress", "finalizing", "cancelling")
FilePurpose = Literal["batch", "batch_output"]

# What a line's url may be, and the API and operation it is served as (the batch's endpoint too).
ENDPOINTS: dict[str, tuple[Api, Operation]] = {
    "/v1/chat/completions": ("openai", "chat"),
    "/v1/completions": ("openai", "complete"),
    "/v1/embeddings": ("openai", "embed"),
    "/api/chat": ("ollama", "chat"),
    "/api/generate": ("ollama", "complete"),
    "/api/embed": ("ollama", "embed"),
}
DEFAULT_WINDOW = "24h"
_WINDOW = re.compile(r"^\s*(\d+(?:\.\d+)?)\s*([smhd])\s*$")
_UNIT_S = {"s": 1, "m": 60, "h": 3600, "d": 86400}


def new_id(prefix: str) -> str:
    return f"{prefix}_{secrets.token_hex(12)}" if prefix != "file" else f"file-{secrets.token_hex(12)}"


def duration_s(text: str) -> float | None:
    """``24h``, ``90m``, ``2.5h``, ``30s``, ``1d`` in seconds; None for anything else."""
    match = _WINDOW.match(text)
    if match is None:
        return None
    seconds = float(match.group(1)) * _UNIT_S[match.group(2)]
    return seconds if seconds > 0 else None


class FileObject(TypedDict):
    id: str
    object: Literal["file"]
    bytes: int
    created_at: int
    filename: str
    purpose: FilePurpose
    status: Literal["uploaded", "processed", "error"]
    expires_at: int | None
    status_details: str | None


class RequestCounts(TypedDict):
    total: int
    completed: int
    failed: int


class TokenDetails(TypedDict, total=False):
    cached_tokens: int
    reasoning_tokens: int


class BatchUsage(TypedDict):
    input_tokens: int
    input_tokens_details: TokenDetails
    output_tokens: int
    output_tokens_details: TokenDetails
    total_tokens: int


class BatchErrorItem(TypedDict):
    code: str
    message: str
    line: int | None
    param: str | None


class BatchErrors(TypedDict):
    object: Literal["list"]
    data: list[BatchErrorItem]


class CopyRow(TypedDict):
    """One copy of the model the batch ran on: how much it did and how fast (measured as it goes)."""

    copy: str  # the upstream as a person reads it (an engine's name, a peer, a rented node)
    kind: str
    done: int
    lines_per_s: float
    tokens_per_s: float
    in_flight: int


class PairwiseProgress(TypedDict):
    done: int
    pending: int
    lines_per_s: float
    eta_s: float | None
    cost_usd: float
    budget_usd: float | None
    deadline_at: int | None
    rented_stopped: str | None  # why the batch stopped using rented copies, once it did
    rented_since: float | None  # when (Unix seconds) the batch first used a rented copy: its cost counts from there
    copies: list[CopyRow]


class BatchObject(TypedDict):
    id: str
    object: Literal["batch"]
    endpoint: str
    model: str | None
    errors: BatchErrors | None
    input_file_id: str
    completion_window: str
    status: BatchStatus
    output_file_id: str | None
    error_file_id: str | None
    created_at: int
    in_progress_at: int | None
    expires_at: int | None
    finalizing_at: int | None
    completed_at: int | None
    failed_at: int | None
    expired_at: int | None
    cancelling_at: int | None
    cancelled_at: int | None
    request_counts: RequestCounts
    usage: BatchUsage
    metadata: dict[str, str] | None
    pairwise: NotRequired[PairwiseProgress]


class ResponsePart(TypedDict):
    status_code: int
    request_id: str
    body: object


class LineError(TypedDict):
    code: str
    message: str


class OutputLine(TypedDict):
    id: str
    custom_id: str | None
    response: ResponsePart | None
    error: LineError | None


def empty_usage() -> BatchUsage:
    return {"input_tokens": 0, "input_tokens_details": {"cached_tokens": 0}, "output_tokens": 0,
            "output_tokens_details": {"reasoning_tokens": 0}, "total_tokens": 0}
