"""One batch's run: validate its input, spread its lines over every copy of their models, finalize.

The run is resumable from any point, because everything it knows is in the store: a batch found
``validating`` validates again (the rows of a first pass stay), ``in_progress`` runs its pending
lines, ``finalizing`` and ``cancelling`` write their files again. Each line goes through the node's
own inference path (``InferenceService.run``), pinned to one copy, so routing rules, rented-node
policies, caps and the workload record apply to it as to any request.

What a line's answer means for it:

- 200: its answer, to the output file.
- 408, 409, 429, 500, 502, 503, 504, or no answer at all: transient; again after a backoff
  (``BACKOFF_S`` doubling up to ``MAX_BACKOFF_S``), at most ``MAX_ATTEMPTS`` times, then to the
  error file with the last answer.
- 403 from the copy it was pinned to (the copy became ineligible: paused, at its cap, off-LAN
  denied): the line goes back to the queue for another copy, and that copy is left.
- any other status (400, 404, 413, ...): permanent, to the error file at once.

Lines whose model no copy may serve (every copy refused the batch) wait ``NO_COPY_GRACE_S`` for one
to come back, then end in the error file with the refusals; at once when the batch left its rented
copies at its budget and no other copy serves the model.
"""

from __future__ import annotations

import asyncio
import json
import logging
import time
from collections import deque
from typing import TYPE_CHECKING

from app.services.backends.base import Caller, Upstream
from app.services.batch.copies import CopyRate, has_room, share
from app.services.batch.lines import Request
from app.services.batch.shapes import LineError, OutputLine, new_id
from app.services.guard import guarded
from app.services.inference import PIN_GONE_HEADER, InferenceResult
from app.services.translate.shapes import canonical_model

if TYPE_CHECKING:
    from app.services.batch.context import RunService

log = logging.getLogger(__name__)

TRANSIENT = frozenset({408, 409, 429, 500, 502, 503, 504})
MAX_ATTEMPTS = 5
BACKOFF_S = 0.5
MAX_BACKOFF_S = 30.0
REPLAN_S = 1.0  # how often the run looks again for copies (a peer that joined, a rented window up)
ROOM_POLL_S = 0.02  # a copy without room for the batch is looked at again this soon
NO_COPY_GRACE_S = 300.0  # lines of a model no copy may serve wait this long for one, then end in the error file


def error_line(custom_id: str | None, code: str, message: str) -> OutputLine:
    error: LineError = {"code": code, "message": message}
    return {"id": new_id("batch_req"), "custom_id": custom_id, "response": None, "error": error}


def answer_line(custom_id: str, result: InferenceResult) -> OutputLine:
    try:
        body: object = json.loads(result.body or b"null")
    except ValueError:
        body = {"error": {"message": "the answer was not JSON", "type": "server_error"}}
    request_id = result.headers.get("X-Pairwise-Job") or (result.job.id if result.job else new_id("req"))
    return {"id": new_id("batch_req"), "custom_id": custom_id,
            "response": {"status_code": result.status, "request_id": request_id, "body": body}, "error": None}


class BatchRun:
    """The task that carries one batch to its end (or until the node stops)."""

    def __init__(self, service: RunService, batch_id: str, caller: Caller) -> None:
        self.service, self.batch_id, self.caller = service, batch_id, caller
        self.queues: dict[str, deque[Request]] = {}
        self.busy = 0  # lines taken and not yet ended or queued again (running, or waiting out a backoff)
        self.attempts: dict[int, int] = {}
        self.workers: dict[tuple[str, str], list[asyncio.Task[None]]] = {}  # (model, copy key) -> its workers
        self.left: set[str] = set()  # copies this run stopped using (ineligible, or rented after the budget)
        self.rates: dict[str, CopyRate] = {}
        self.copies: dict[str, Upstream] = {}
        self.without_copy: dict[str, float] = {}  # model -> since when no copy may serve it
        self.wake = asyncio.Event()
        self.stop_taking = False

    # -- the run ---------------------------------------------------------------------------------------------

    async def run(self) -> None:
        service = self.service
        if service.status(self.batch_id) == "validating":
            service.validate(self.batch_id)
        if service.status(self.batch_id) in ("in_progress", "cancelling"):
            await self.dispatch()
        status = service.status(self.batch_id)
        if status in ("in_progress", "finalizing", "cancelling"):
            service.finalize(self.batch_id)

    async def dispatch(self) -> None:
        for request in self.service.store.pending(self.batch_id):
            self.queues.setdefault(request.model, deque()).append(request)
        try:
            while True:
                ending = self.service.ending_reason(self.batch_id)
                if ending is not None:
                    self.stop_taking = True
                if self.stop_taking or not any(self.queues.values()):
                    if self.busy == 0 and not self._workers_running():
                        break
                if not self.stop_taking:
                    await self._staff()
                self.wake.clear()
                try:
                    async with asyncio.timeout(REPLAN_S):  # in this task: no inner one left at the loop's close
                        await self.wake.wait()
                except TimeoutError:
                    pass
            ending = self.service.ending_reason(self.batch_id)
            if ending is not None:
                self.service.end_pending(self.batch_id, ending)
        finally:
            for tasks in self.workers.values():
                for task in tasks:
                    task.cancel()

    def _workers_running(self) -> bool:
        return any(not t.done() for tasks in self.workers.values() for t in tasks)

    async def _staff(self) -> None:
        """Workers for every eligible copy of every model with lines waiting."""
        for model, queue in self.queues.items():
            if not queue:
                continue
            plan = await self.service.node.inference.plan_for(canonical_model(model), self.caller)
            copies = [u for u in plan.candidates if u.key not in self.left and self.service.may_use(self.batch_id, u)]
            if not copies:
                if not plan.candidates and not plan.refused:
                    # No node serves it: the node's own answer (404, listing the models) for each line.
                    self._spawn(model, None, 1)
                elif not self._workers_for(model):
                    # A copy may come back (a window loading, an endpoint waking): wait a while first,
                    # unless the batch itself left the rented ones at its budget.
                    first = self.without_copy.setdefault(model, time.monotonic())
                    if self.service.internal(self.batch_id).get("rented_stopped") or \
                            time.monotonic() - first >= NO_COPY_GRACE_S:
                        self.service.no_copy(self.batch_id, model, plan.refusal_text(), self)
                continue
            self.without_copy.pop(model, None)
            for upstream in copies:
                self.copies[upstream.key] = upstream
                self._spawn(model, upstream, share(upstream))

    def _workers_for(self, model: str) -> bool:
        return any(not t.done() for (m, _), tasks in self.workers.items() if m == model for t in tasks)

    def _spawn(self, model: str, upstream: Upstream | None, count: int) -> None:
        key = (model, upstream.key if upstream else "")
        alive = [t for t in self.workers.get(key, []) if not t.done()]
        while len(alive) < count:
            alive.append(asyncio.create_task(self._worker(model, upstream), name=f"batch {self.batch_id} worker"))
        self.workers[key] = alive

    async def _worker(self, model: str, upstream: Upstream | None) -> None:
        queue = self.queues[model]
        with guarded(f"batch {self.batch_id}", log):
            while queue and not self.stop_taking:
                if upstream is not None:
                    if upstream.key in self.left or not self.service.may_use(self.batch_id, upstream):
                        self.left.add(upstream.key)
                        return
                    if not has_room(upstream):
                        await asyncio.sleep(ROOM_POLL_S)  # interactive requests hold the copy's headroom
                        continue
                request = queue.popleft()
                self.busy += 1
                try:
                    pause = await self._one(request, upstream)
                finally:
                    self.busy -= 1
                    self.wake.set()
                if pause is None:
                    return  # this copy is gone for the batch
                if pause:
                    await asyncio.sleep(pause)

    async def _one(self, request: Request, upstream: Upstream | None) -> float | None:
        """Serve one line on ``upstream``; how long this worker should wait before its next line
        (0 at once, a backoff after a transient failure), or None when the copy is gone."""
        inference = self.service.node.inference
        began = time.monotonic()
        result = await inference.run(request.api, request.operation, request.body, self.caller,
                                     pin=upstream.key if upstream else None)
        status = result.status
        if status == 200:
            job = result.job
            prompt = (job.prompt_tokens or 0) if job else 0
            completion = (job.completion_tokens or 0) if job else 0
            label = upstream.display_name() if upstream else (job.serving_node or "?") if job else "?"
            if self.service.store.finish_line(self.batch_id, request.index, "done",
                                              answer_line(request.custom_id, result), label, prompt, completion,
                                              upstream.kind if upstream else "engine"):
                if upstream is not None:
                    self._rate(upstream).finish(prompt + completion)
                    self.service.served(self.batch_id, upstream, job, time.monotonic() - began)
            return 0.0
        gone = PIN_GONE_HEADER in result.headers or (status == 403 and upstream is not None)
        if gone and upstream is not None:
            self.left.add(upstream.key)
            self.queues[request.model].appendleft(request)
            return None
        if status in TRANSIENT:
            attempt = self.attempts.get(request.index, 0) + 1
            self.attempts[request.index] = attempt
            self.service.store.count_attempt(self.batch_id, request.index)
            if attempt < MAX_ATTEMPTS:
                delay = min(MAX_BACKOFF_S, BACKOFF_S * 2 ** (attempt - 1))
                self.busy += 1
                asyncio.get_running_loop().call_later(delay, self._requeue, request)
                return delay
        self.service.store.finish_line(self.batch_id, request.index, "error", answer_line(request.custom_id, result),
                                       upstream.display_name() if upstream else None)
        return 0.0

    def _requeue(self, request: Request) -> None:
        self.busy -= 1
        self.queues[request.model].appendleft(request)
        self.wake.set()

    def _rate(self, upstream: Upstream) -> CopyRate:
        rate = self.rates.get(upstream.key)
        if rate is None:
            rate = self.rates[upstream.key] = CopyRate(upstream.display_name(), upstream.kind)
        return rate

    def take_all(self, model: str) -> list[Request]:
        """The lines of ``model`` still queued, taken out (they end in the error file)."""
        queue = self.queues.get(model, deque())
        taken = list(queue)
        queue.clear()
        return taken

    def leave(self, upstream_key: str) -> None:
        self.left.add(upstream_key)
        self.wake.set()

    def poke(self) -> None:
        self.wake.set()

    # -- what the batch object shows -------------------------------------------------------------------------

    def copy_rows(self) -> list[tuple[CopyRate, int]]:
        return [(rate, self.copies[key].in_flight if key in self.copies else 0) for key, rate in self.rates.items()]

    def lines_per_s(self) -> float:
        return sum(rate.rates()[0] for rate in self.rates.values() if rate.label)

    def uses(self, kind: str) -> list[Upstream]:
        """The copies of that kind the run is using."""
        return [u for key, u in self.copies.items() if key not in self.left and u.kind == kind]
