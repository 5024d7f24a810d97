"""The Files and Batch APIs at the front door, as OpenAI serves them (so the openai SDK's
``files.create/retrieve/content/delete/list`` and ``batches.create/retrieve/list/cancel`` work unchanged).

    POST   /v1/files                 multipart: purpose=batch, file=<JSONL>
    GET    /v1/files                 {"object": "list", "data": [file...]}
    GET    /v1/files/{id}            the file object
    GET    /v1/files/{id}/content    its bytes
    DELETE /v1/files/{id}            {"id", "object": "file", "deleted": true}
    POST   /v1/batches               {"input_file_id", "endpoint", "completion_window", "metadata"}
    GET    /v1/batches?after=&limit= a page of batches, newest first
    GET    /v1/batches/{id}          the batch object
    POST   /v1/batches/{id}/cancel   cancelling, then cancelled

Errors are OpenAI's shape, with the status of the error's branch (404, 400, 409).
"""

from __future__ import annotations

import contextlib
import os
from collections.abc import Awaitable, Callable

from aiohttp import BodyPartReader, web

from app.services.batch.context import BatchNode
from app.services.batch.service import BatchService
from app.services.errors import PairwiseError
from app.services.frontdoor.body import BodyError, parse_json_object, read_body
from app.services.frontdoor.http import shaped_error
from app.services.keys.auth import KEY, caller_for
from app.services.keys.store import KeyRecord

Handler = Callable[[web.Request], Awaitable[web.StreamResponse]]
DoorRoute = tuple[str, str, Handler]
MAX_FILE_BYTES = 200 * 1024 * 1024  # OpenAI's limit for a batch input file
CHUNK = 1 << 16


def _errors(handler: Handler) -> Handler:
    async def wrapper(request: web.Request) -> web.StreamResponse:
        try:
            return await handler(request)
        except PairwiseError as exc:
            return shaped_error("openai", exc.status, exc.message)

    return wrapper


def door_routes(node: BatchNode, service: BatchService) -> list[DoorRoute]:
    async def upload(request: web.Request) -> web.StreamResponse:
        if not request.content_type.startswith("multipart/"):
            return shaped_error("openai", 400, "upload a file as multipart/form-data with fields purpose and file")
        reader = await request.multipart()
        purpose: str | None = None
        file_id, path = service.new_upload_path()
        filename, size = "", -1
        try:
            while (part := await reader.next()) is not None:
                if not isinstance(part, BodyPartReader):
                    continue
                if part.name == "purpose":
                    purpose = (await part.text()).strip()
                elif part.name == "file":
                    filename = part.filename or "upload.jsonl"
                    size = await _save(part, path)
            if size < 0:
                return shaped_error("openai", 400, "the upload has no 'file' field")
            return web.json_response(service.add_upload(file_id, purpose or "", filename, path, size))
        finally:
            with contextlib.suppress(FileNotFoundError):
                path.unlink()

    async def list_files(request: web.Request) -> web.Response:
        return web.json_response({"object": "list", "data": service.files(request.query.get("purpose")),
                                  "has_more": False})

    async def get_file(request: web.Request) -> web.Response:
        return web.json_response(service.file(request.match_info["file_id"]))

    async def file_content(request: web.Request) -> web.Response:
        return web.Response(body=service.content(request.match_info["file_id"]), content_type="application/jsonl")

    async def delete_file(request: web.Request) -> web.Response:
        return web.json_response(service.delete_file(request.match_info["file_id"]))

    async def create(request: web.Request) -> web.StreamResponse:
        try:
            data = parse_json_object(await read_body(request, node.settings.max_body_bytes))
        except BodyError as exc:
            return shaped_error("openai", exc.status, exc.message)
        caller = caller_for(node, request)
        record: object = request.get(KEY)
        key_models = list(record.models) if isinstance(record, KeyRecord) else []
        batch = service.create(input_file_id=data.get("input_file_id"), endpoint=data.get("endpoint"),
                               completion_window=data.get("completion_window", "24h"), metadata=data.get("metadata"),
                               requester=caller.requester, allow_off_lan=caller.allow_off_lan,
                               off_lan_rule=caller.off_lan_rule, key_models=key_models)
        return web.json_response(batch)

    async def list_batches(request: web.Request) -> web.Response:
        try:
            limit = max(1, min(100, int(request.query.get("limit", "20"))))
        except ValueError:
            return shaped_error("openai", 400, "limit must be a whole number from 1 to 100")
        return web.json_response(service.page(after=request.query.get("after"), limit=limit))

    async def get_batch(request: web.Request) -> web.Response:
        return web.json_response(service.view(request.match_info["batch_id"]))

    async def cancel(request: web.Request) -> web.Response:
        return web.json_response(service.cancel(request.match_info["batch_id"]))

    routes: list[DoorRoute] = [
        ("POST", "/v1/files", upload), ("GET", "/v1/files", list_files),
        ("GET", "/v1/files/{file_id}", get_file), ("GET", "/v1/files/{file_id}/content", file_content),
        ("DELETE", "/v1/files/{file_id}", delete_file),
        ("POST", "/v1/batches", create), ("GET", "/v1/batches", list_batches),
        ("GET", "/v1/batches/{batch_id}", get_batch), ("POST", "/v1/batches/{batch_id}/cancel", cancel),
    ]
    return [(method, path, _errors(handler)) for method, path, handler in routes]


async def _save(part: BodyPartReader, path: os.PathLike[str]) -> int:
    """The part streamed to a private file, under MAX_FILE_BYTES."""
    size = 0
    fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
    with os.fdopen(fd, "wb") as out:
        while chunk := await part.read_chunk(CHUNK):
            size += len(chunk)
            if size > MAX_FILE_BYTES:
                raise BodyError(413, f"a batch input file may be {MAX_FILE_BYTES // (1024 * 1024)} MB at most")
            out.write(chunk)
        out.flush()
        os.fsync(out.fileno())
    return size
