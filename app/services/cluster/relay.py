"""The serving side of a relayed request: a peer asks us to serve its caller.

The request runs the same way as a local one, with ``local_only`` so it is
served from this node's own engines (or its shared rented nodes) and never
relayed onward. Who is asking comes from the TLS pin, never from a header;
headers only add the display name, the job id and the API.

The job keeps the origin's id, so the Jobs list shows one job on both nodes:
here with requester = the origin node, there with serving node = us.
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable
from typing import TYPE_CHECKING, cast, get_args

from aiohttp import web

from app.services.backends.base import Caller
from app.services.cluster.facts import LoadBook, shareable_upstreams
from app.services.cluster.tls import PEER_PIN_KEY
from app.services.frontdoor.http import read_json_body, shaped_error, write_result
from app.services.jobs.requester import relayed_requester
from app.services.json_types import JsonValue
from app.services.text_safety import scrub_for_peer
from app.services.translate.shapes import Api, Operation, canonical_model

if TYPE_CHECKING:
    from app.services.cluster.context import RelayNode

JOB_ID = re.compile(r"^[A-Za-z0-9_-]{1,64}$")
APIS: tuple[str, ...] = get_args(Api)
OPERATIONS: tuple[str, ...] = get_args(Operation)


class Relay:
    def __init__(self, node: RelayNode, book: LoadBook, name_of: Callable[[str], str | None]) -> None:
        self.node, self.book = node, book
        self._name_of = name_of  # node id -> its current display name (from its facts)

    def origin_name(self, node_id: str, fallback: str) -> str:
        return self._name_of(node_id) or fallback

    async def handle(self, request: web.Request) -> web.StreamResponse:
        pin = request[PEER_PIN_KEY]
        api_header = request.headers.get("X-Pairwise-Api", "")
        op_header = request.headers.get("X-Pairwise-Op", "")
        if api_header not in APIS or op_header not in OPERATIONS:
            return web.json_response(
                {"error": f"relay refused: unknown API {api_header[:20]!r} or operation {op_header[:20]!r}"},
                status=400)
        api, operation = cast(Api, api_header), cast(Operation, op_header)
        body = await read_json_body(request, api, self.node.settings.max_body_bytes)
        if isinstance(body, web.Response):
            return body
        model = body.get("model")
        if isinstance(model, str) and not await self._serves(model):
            # 404 makes the origin try its next owner; a model offered only by an
            # upstream peers may not use is refused the same way.
            return shaped_error(api, 404, f"model '{model[:200]}' is not served to peers by {self.node.name}",
                                headers={"X-Pairwise-Node": self.node.name})
        origin = self.origin_name(pin.node_id, pin.name)
        requester = relayed_requester(pin.node_id, origin, request.headers)
        caller = Caller(requester=requester, origin_node=origin, origin_node_id=pin.node_id,
                        job_id=self._job_id(request.headers.get("X-Pairwise-Job", ""), pin.node_id),
                        local_only=True, from_peer=True,
                        allow_off_lan=request.headers.get("X-Pairwise-Allow-Off-Lan", "1") != "0")
        self.book.enter(pin.node_id)
        try:
            result = await self.node.inference.run(api, operation, body, caller)
            job = result.job
            if job is not None:
                result.headers["X-Pairwise-Node-Id"] = job.serving_node_id or self.node.node_id
                if job.engine:
                    result.headers["X-Pairwise-Engine"] = job.engine
            if result.status >= 400 and result.body:
                result.body = scrubbed_error_body(result.body)
            return await write_result(request, result)
        finally:
            self.book.leave(pin.node_id)

    async def _serves(self, model: str) -> bool:
        wanted = canonical_model(model.strip())

        def offered() -> bool:
            return any(e.canonical == wanted for u in shareable_upstreams(self.node) for e in u.models())

        if offered():
            return True
        await self.node.refresh_stale()  # an engine may have gained the model since its last refresh
        return offered()

    def _job_id(self, given: str, origin_id: str) -> str | None:
        """The origin's job id, unless it is malformed or names a job someone else started."""
        if not JOB_ID.match(given):
            return None
        # Only open jobs are looked at (in memory, no SQLite per request); a finished job of
        # another origin is protected by the store, which never changes a record's origin.
        existing = self.node.jobs.open_job(given)
        if existing is not None and existing.origin_node_id != origin_id:
            return None
        return given


def scrubbed_error_body(body: bytes) -> bytes:
    """An error answer fit for a peer: the text of every message without URLs, hosts or token-like
    strings (an engine's error may name its host:port; the local log and Jobs keep the detail)."""
    try:
        data = json.loads(body)
    except ValueError:
        return json.dumps({"error": scrub_for_peer(body.decode("utf-8", "replace"))}).encode()

    def clean(value: JsonValue) -> JsonValue:
        if isinstance(value, str):
            return scrub_for_peer(value, 1000)
        if isinstance(value, dict):
            return {k: clean(v) for k, v in value.items()}
        if isinstance(value, list):
            return [clean(v) for v in value]
        return value

    return json.dumps(clean(data)).encode()
