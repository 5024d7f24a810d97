"""``BatchApi``: batches as the CLI (and later the tray) sees them: plan, run (renting a batch window
when asked), list, show, cancel, results, delete. The front door's ``/v1/batches`` is the same
service in OpenAI's shape."""

from __future__ import annotations

import builtins
from typing import TypedDict

from app.services.api.changes import BatchOrder
from app.services.api.snapshots import DeletedBatch
from app.services.backends.base import Caller
from app.services.batch.money import parse_budget
from app.services.batch.plan import BatchPlan, endpoint_of, plan_batch
from app.services.batch.service import BatchInvalid, BatchService
from app.services.batch.shapes import BatchObject, duration_s
from app.services.errors import ConfigError, FeatureMissing
from app.services.jobs.requester import local_app
from app.services.node import Node
from app.services.rented.operations import WINDOWS, NoProviderOffers

__all__ = ["BatchApi", "BatchObject", "BatchOrder", "BatchStarted"]  # BatchObject: the row the tray's Batches view reads

MAX_INLINE_BYTES = 200 * 1024 * 1024




class BatchStarted(TypedDict):
    batch: BatchObject
    plan: BatchPlan | None  # with ``rent``: the plan that decided whether to rent
    rented_window: str | None  # the batch window rented for it


class BatchApi:
    def __init__(self, node: Node) -> None:
        self.node = node

    def _service(self) -> BatchService:
        if self.node.batches is None:
            raise FeatureMissing("batches are not attached on this node")
        return self.node.batches

    def _caller(self) -> Caller:
        return Caller(requester=local_app(self.node.node_id, self.node.name, "pairwise CLI"),
                      allow_off_lan=self.node.settings.off_lan == "allow")

    def list(self, limit: int = 50) -> builtins.list[BatchObject]:
        return self._service().page(limit=limit)["data"]  # type: ignore[no-any-return]

    def show(self, batch_id: str) -> BatchObject:
        return self._service().view(batch_id)

    def cancel(self, batch_id: str) -> BatchObject:
        return self._service().cancel(batch_id)

    def delete(self, batch_id: str) -> DeletedBatch:
        return self._service().delete(batch_id)

    def results(self, batch_id: str, *, errors: bool = False) -> bytes:
        batch = self.show(batch_id)
        file_id = batch["error_file_id"] if errors else batch["output_file_id"]
        if file_id is None:
            return b""
        return self._service().content(file_id)

    async def plan(self, order: BatchOrder) -> BatchPlan:
        content = _content(order)
        return await plan_batch(self._service(), content, deadline_s=_deadline_s(order.deadline),
                                budget_usd=parse_budget(_text(order.budget_usd)), caller=self._caller())

    async def run(self, order: BatchOrder) -> BatchStarted:
        """Upload the file's lines and start the batch; with ``rent``, first the batch window the
        plan proposes (when the deadline cannot be met here). Returns the batch and the plan."""
        service = self._service()
        content = _content(order)
        metadata: dict[str, str] = {}
        if order.deadline is not None:
            metadata["deadline"] = order.deadline
        if order.budget_usd is not None:
            metadata["budget_usd"] = str(order.budget_usd)
        plan: BatchPlan | None = None
        window: str | None = None
        if order.rent:
            registry = self.node.rented.providers if self.node.rented is not None else None
            if not WINDOWS.among(registry):
                raise NoProviderOffers("--rent needs a provider of batch windows, set up and signed in")
            plan = await self.plan(order)
            if plan["meets_deadline"] is not False:
                pass  # the cluster meets it as it is: nothing is rented
            elif plan["rent"] is None:
                raise ConfigError(plan["rent_note"] or "no rented window can meet the deadline")
            else:
                rent = plan["rent"]  # from the provider the plan chose (the cheapest GPU of all that offer windows)
                await WINDOWS.of(registry, rent["provider"]).create({
                    "name": rent["name"], "model": rent["model"], "gpu": rent["gpu"],
                    "window": f"{rent['window_minutes']}m"})
                window = rent["name"]
        file_id, path = service.new_upload_path()
        path.write_bytes(content)
        service.add_upload(file_id, "batch", order.filename or "batch.jsonl", path, len(content))
        caller = self._caller()
        batch = service.create(input_file_id=file_id, endpoint=order.endpoint or endpoint_of(content),
                               completion_window=order.completion_window or "24h", metadata=metadata or None,
                               requester=caller.requester, allow_off_lan=caller.allow_off_lan, rented_window=window)
        return {"batch": batch, "plan": plan, "rented_window": window}


def _text(value: str | float | None) -> str | None:
    return None if value is None else str(value)


def _content(order: BatchOrder) -> bytes:
    content = order.content
    if not content.strip():
        raise BatchInvalid("the batch needs its lines: 'content', the JSONL text")
    data = content.encode()
    if len(data) > MAX_INLINE_BYTES:
        raise BatchInvalid("a batch input file may be 200 MB at most")
    return data


def _deadline_s(value: str | None) -> float | None:
    if value is None:
        return None
    seconds = duration_s(str(value))
    if seconds is None:
        raise ConfigError(f"--deadline must be a duration such as 2h or 90m, not {str(value)[:40]!r}")
    return seconds
