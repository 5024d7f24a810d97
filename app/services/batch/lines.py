"""A batch's input file, line by line: each a request to run or a reason it cannot be.

A line is ``{"custom_id", "method": "POST", "url", "body"}`` (OpenAI's batch input), its url one of
``shapes.ENDPOINTS`` and the batch's own endpoint. A line that is not JSON, lacks a field, names
another url or has no model is not run: it goes to the error file with that reason (the rest go
on). A custom_id given twice fails the whole batch while it validates, as OpenAI's does, since the
output could not say which answer is whose.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Any

from app.services.batch.shapes import ENDPOINTS, BatchErrorItem
from app.services.translate.shapes import Api, Operation

MAX_LINES = 50_000  # OpenAI's limit per batch
MAX_CUSTOM_ID = 512


@dataclass(frozen=True)
class Request:
    index: int  # the line's place among the file's non-blank lines, from 0
    custom_id: str
    api: Api
    operation: Operation
    model: str
    body: dict[str, Any]


@dataclass(frozen=True)
class BadLine:
    index: int
    custom_id: str | None
    code: str
    message: str


@dataclass
class Parsed:
    lines: list[Request | BadLine]
    errors: list[BatchErrorItem]  # what fails the whole batch (duplicates, too many lines, nothing to do)


def parse_input(content: bytes, endpoint: str) -> Parsed:
    out: list[Request | BadLine] = []
    errors: list[BatchErrorItem] = []
    seen: dict[str, int] = {}
    raw_lines = [line for line in content.split(b"\n") if line.strip()]
    if not raw_lines:
        errors.append({"code": "empty_file", "message": "the input file has no lines", "line": None, "param": None})
    if len(raw_lines) > MAX_LINES:
        errors.append({"code": "too_many_requests", "line": None, "param": None,
                       "message": f"a batch holds at most {MAX_LINES} lines; this file has {len(raw_lines)}"})
        return Parsed([], errors)
    for index, raw in enumerate(raw_lines):
        line = parse_line(index, raw, endpoint)
        out.append(line)
        if line.custom_id is None:
            continue
        if line.custom_id in seen:
            errors.append({"code": "duplicate_custom_id", "line": index + 1, "param": "custom_id",
                           "message": f"custom_id {line.custom_id[:80]!r} is on line {seen[line.custom_id] + 1} "
                                      f"and line {index + 1}; each line needs its own"})
        else:
            seen[line.custom_id] = index
    return Parsed(out, errors)


def parse_line(index: int, raw: bytes, endpoint: str) -> Request | BadLine:
    number = index + 1
    try:
        data = json.loads(raw)
    except (ValueError, UnicodeDecodeError):
        return BadLine(index, None, "invalid_json", f"line {number} is not JSON")
    if not isinstance(data, dict):
        return BadLine(index, None, "invalid_json", f"line {number} is not a JSON object")
    custom_id = data.get("custom_id")
    if not isinstance(custom_id, str) or not custom_id or len(custom_id) > MAX_CUSTOM_ID:
        return BadLine(index, None, "missing_custom_id",
                       f"line {number} needs a custom_id: a string of 1 to {MAX_CUSTOM_ID} characters")

    def bad(code: str, message: str) -> BadLine:
        return BadLine(index, custom_id, code, f"line {number}: {message}")

    method = data.get("method", "POST")
    if not isinstance(method, str) or method.upper() != "POST":
        return bad("invalid_method", f"method must be POST, not {str(method)[:20]!r}")
    url = data.get("url")
    if not isinstance(url, str) or url not in ENDPOINTS:
        return bad("invalid_url", f"url must be one of {', '.join(ENDPOINTS)}, not {str(url)[:80]!r}")
    if url != endpoint:
        return bad("mismatched_url", f"url {url} is not the batch's endpoint {endpoint}")
    body = data.get("body")
    if not isinstance(body, dict):
        return bad("invalid_body", "body must be a JSON object")
    model = body.get("model")
    if not isinstance(model, str) or not model.strip():
        return bad("missing_model", "body.model must name a model")
    api, operation = ENDPOINTS[url]
    # A batch collects whole answers: a stream flag would change how it travels, not what it says.
    body = {**body, "stream": False} if operation != "embed" else body
    return Request(index, custom_id, api, operation, model.strip(), body)
