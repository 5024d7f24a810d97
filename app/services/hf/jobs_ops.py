"""Batch windows: rented nodes on Hugging Face Jobs with a hard stop (issue 19).

`HfJobs` adds to the RentedManager what needs the Jobs API:

- ``await plan(params)`` (a ``WindowOrder``'s JSON, orders.py): what ``create`` would do: the engine's image serving the model on one
  token-protected port, the window as HF's ``timeoutSeconds``, and the cost of the whole window
  (GPU per minute + the port's $0.01/h) against the day and month caps. A window the caps cannot
  pay for is refused, naming how long they can pay for.
- ``await create(params)``: run the job (labelled with this sponsor's node id and the rented node's
  name, so reconcile finds it) and attach its exposed port as a managed rented node; a name whose
  window has ended gets a new window on the same rented node (one spend account).
- ``await stop(name)``: cancel the window now. ``logs(name, follow)``: the job's log lines.
- ``flavors``, ``plan``, ``create``, ``extend``, ``logs`` are the ``WindowOperations`` of
  rented/operations.py, under which the service API and a batch's ``--rent`` find them.
- ``extra(node)``: ``hf_stage``, ``window_ends_at`` and friends for ``rented show``.
"""

from __future__ import annotations

import math
from collections.abc import AsyncIterator
from datetime import UTC, datetime
from typing import TYPE_CHECKING, Any

from app.services.errors import ConfigError, RefusedError
from app.services.hf.errors import HfError
from app.services.hf.jobs_lifecycle import JobLifecycle, is_hf_job
from app.services.hf.jobs_models import (
    EXIT_STOP,
    JOB_ENGINES,
    LABEL_RENTED,
    LABEL_SPONSOR,
    LABEL_VALUE,
    PORT_FEE_PER_HOUR,
    TERMINAL,
    JobFlavor,
    describe_duration,
    parse_window,
    run_body,
    window_cost,
)
from app.services.hf.jobs_records import JobRecord
from app.services.hf.orders import WindowOrder, window_order
from app.services.rented.upstream import RentedUpstream

if TYPE_CHECKING:
    from app.services.api.plans import WindowFlavor, WindowPlan
    from app.services.api.rows import RentedRow, WindowExtras

DEFAULT_ENGINE = "vllm"
DEFAULT_POLICY = "prefer"  # a batch window is rented to be used first
STOP_NOTE = ("idle stop and budget caps CANCEL the job (a window cannot pause): a later batch starts a new "
             "window and loads the model again")
EXTEND_REFUSAL = ("Hugging Face Jobs have no call to lengthen a running job's timeout; start a new window "
                  "instead ('pairwise rented create {name} --provider huggingface-job --model ... --gpu ... "
                  "--window 1h' once this one has ended, or stop it first with 'pairwise rented stop {name}')")

# A batch window has no pause and no resume on HF: what `rented pause|resume|delete` say instead.
WINDOW_REFUSALS = {
    "pause": ("A window cannot be paused",
              "a batch window (a Hugging Face Job) cannot be paused, only cancelled: 'pairwise rented stop {name}' "
              "ends it now and its billing stops (a later window starts anew and loads the model again)"),
    "resume": ("A window cannot be resumed",
               "a batch window (a Hugging Face Job) cannot be resumed: while it runs it needs nothing, and once it "
               "has ended (or been stopped) start a new window with 'pairwise rented create {name} --provider "
               "huggingface-job --model ... --gpu ... --window 1h'"),
    "delete": ("A window has no endpoint",
               "a batch window (a Hugging Face Job) has no endpoint to delete: 'pairwise rented stop {name}' "
               "cancels its job now, and 'pairwise rented detach {name}' also forgets the node"),
}


def window_refusal(name: str, verb: str) -> RefusedError:
    """The refusal of an endpoint's action (pause, resume, delete) on batch window ``name``, naming
    what to do instead."""
    title, text = WINDOW_REFUSALS[verb]
    return RefusedError(f"refused to {verb} {name}: " + text.format(name=name), title=title)


def iso(wall: float | None) -> str | None:
    return None if wall is None else datetime.fromtimestamp(wall, UTC).isoformat(timespec="seconds")


class HfJobs:
    def __init__(self, lifecycle: JobLifecycle) -> None:
        self.lifecycle = lifecycle
        self.hf, self.manager, self.records = lifecycle.hf, lifecycle.manager, lifecycle.records
        self.manager.hooks.row_extras.append(self.extra)

    # -- plan and create ---------------------------------------------------------------------------------------

    async def gpu_flavors(self) -> list[JobFlavor]:
        rows = await self.hf.client().jobs_hardware()
        return [f for r in rows if (f := JobFlavor.parse(r)) is not None]

    async def flavors(self) -> list[WindowFlavor]:
        return [f.to_json() for f in await self.gpu_flavors()]

    async def plan(self, params: dict[str, Any]) -> WindowPlan:
        """What ``create(params)`` would start (rented/operations.py ``WindowOperations``)."""
        draft = await self._draft(params)
        budget = draft["budget"]
        return {
            "name": draft["name"], "provider": draft["provider"], "namespace": draft["namespace"],
            "model": draft["model"], "engine": draft["engine"], "image": draft["image"], "gpu": draft["gpu"],
            "gpu_description": draft["gpu_description"], "hardware_per_hour": draft["hardware_per_hour"],
            "port_fee_per_hour": draft["port_fee_per_hour"], "price_per_hour": draft["price_per_hour"],
            "window_s": draft["window_s"], "window": draft["window"], "window_minutes": draft["window_minutes"],
            "window_cost_usd": draft["window_cost_usd"],
            "budget": {"usd_per_day": budget["usd_per_day"], "usd_per_month": budget["usd_per_month"],
                       "spent_day_usd": budget["spent_day_usd"], "spent_month_usd": budget["spent_month_usd"]},
            "idle_stop_min": draft["idle_stop_min"], "use": draft["use"], "pause_on_exit": draft["pause_on_exit"],
            "access": draft["access"], "notes": list(draft["notes"]),
            "new_window_on_existing_node": draft["new_window_on_existing_node"],
        }

    async def _draft(self, params: dict[str, Any]) -> dict[str, Any]:
        order = window_order(params)
        name = order.name
        if not LABEL_VALUE.match(name):
            raise ConfigError(f"{name!r} cannot name a batch window: it goes into the job's labels, which allow "
                              "1-100 letters, digits, '.', '_' or '-'")
        model = order.model
        if not isinstance(model, str) or "/" not in model:
            raise ConfigError("--model needs a Hugging Face repository id (OWNER/NAME)")
        if order.window in (None, ""):
            raise ConfigError("--window is required for a batch window (like 30m, 2h or 1d): it is the hard stop "
                              "Hugging Face enforces")
        window_s = parse_window(str(order.window))
        engine = order.engine or DEFAULT_ENGINE
        if engine not in JOB_ENGINES:
            raise ConfigError(f"engine {engine!r} cannot serve a batch window; use one of {', '.join(JOB_ENGINES)}")
        existing = self.manager.nodes.get(name)
        if existing is not None:
            self._check_reusable(existing)
        gpu = order.gpu
        flavors = await self.gpu_flavors()
        flavor = next((f for f in flavors if f.name == gpu), None)
        if flavor is None:
            gpus = ", ".join(f.name for f in flavors if f.gpu) or "none"
            raise ConfigError(f"--gpu {gpu!r} is not a Hugging Face Jobs flavor; GPU flavors: {gpus}"
                              if gpu else f"--gpu is required for a batch window; GPU flavors: {gpus}")
        namespace = await self.hf.namespace(order.namespace)
        if existing is None:  # what this node has spent before (a detached node, another home) counts too
            self.manager.meter.bind(name, self.lifecycle.account_of(namespace, name))
        price = flavor.window_price_per_hour
        cost = window_cost(price, window_s)
        budget = self._budget(order, existing)
        self._check_caps(name, price, window_s, cost, budget)
        idle = order.lifecycle_value("idle_pause_min")
        pause_on_exit = order.lifecycle_value("pause_on_sponsor_exit")
        return {
            "name": name, "provider": "huggingface-job", "namespace": namespace, "model": model, "engine": engine,
            "image": JOB_ENGINES[engine][0], "gpu": flavor.name, "gpu_description": flavor.gpu or flavor.pretty,
            "hardware_per_hour": flavor.price_per_hour, "port_fee_per_hour": PORT_FEE_PER_HOUR,
            "price_per_hour": price, "window_s": window_s, "window": describe_duration(window_s),
            "window_minutes": math.ceil(window_s / 60), "window_cost_usd": round(cost, 6),
            "budget": budget, "idle_stop_min": idle,
            "use": (order.routing.use if order.routing else None) or DEFAULT_POLICY,
            "pause_on_exit": True if pause_on_exit is None else pause_on_exit, "access": "token-protected port (never public)",
            "notes": [STOP_NOTE, "the window cannot be extended: HF has no such call; start a new window instead"],
            "new_window_on_existing_node": existing is not None,
        }

    def _check_reusable(self, node: RentedUpstream) -> None:
        record = self.records.get(node.name)
        if not is_hf_job(node) or record is None:
            raise ConfigError(f"a rented node named {node.name!r} already exists and is not a batch window")
        if record.stage not in TERMINAL:
            raise ConfigError(f"rented node {node.name} has a batch window still {record.stage}; "
                              f"stop it first with 'pairwise rented stop {node.name}'")

    def _budget(self, order: WindowOrder, existing: RentedUpstream | None) -> dict[str, Any]:
        """The caps of the new window: those given (``"off"``: none), else the node's own (a new window
        on an existing node keeps its caps)."""
        had = existing.decl.budget if existing is not None else None
        given, caps = order.budget, order.caps()
        day = caps["usd_per_day"] if given and given.usd_per_day is not None else (had.usd_per_day if had else None)
        month = (caps["usd_per_month"] if given and given.usd_per_month is not None
                 else (had.usd_per_month if had else None))
        name = order.name
        return {"usd_per_day": day, "usd_per_month": month,
                "spent_day_usd": round(self.manager.meter.spent(name, "day"), 6),
                "spent_month_usd": round(self.manager.meter.spent(name, "month"), 6)}

    @staticmethod
    def _check_caps(name: str, price: float, window_s: int, cost: float, budget: dict[str, Any]) -> None:
        for period in ("day", "month"):
            cap = budget[f"usd_per_{period}"]
            if cap is None:
                continue
            left = max(0.0, cap - budget[f"spent_{period}_usd"])
            budget[f"left_{period}_usd"] = round(left, 6)
            if cost <= left + 1e-9:
                continue
            minutes = math.floor(left / price * 60 + 1e-9) if price else 0
            can = f"it can pay for {describe_duration(minutes * 60)}" if minutes else "it cannot pay for a minute"
            raise RefusedError(
                f"refused: a {describe_duration(window_s)} window costs ${cost:.2f} (${price:.2f}/h with the "
                f"port's fee), but the budget of ${cap:.2f} per {period} has ${left:.2f} left for {name}: {can}; "
                + (f"give --window {minutes}m or less" if minutes else "wait for the next UTC " + period)
                + " or raise the cap", title="Window over budget")

    async def create(self, params: dict[str, Any]) -> RentedRow:
        plan = await self._draft(params)
        name, namespace = plan["name"], plan["namespace"]
        client = self.hf.client()
        token = self.hf.token()  # the port is called with the signed-in token (a keyring copy per node)
        labels = {LABEL_SPONSOR: self.manager.sponsor_id, LABEL_RENTED: name}
        body = run_body(repo=plan["model"], flavor=plan["gpu"], engine=plan["engine"], window_s=plan["window_s"],
                        labels=labels, token=token)
        try:
            info = await client.run_job(namespace, body)
        except HfError:
            await self.lifecycle.cancel_strays(client, namespace, name, keep=None)  # it may have started anyway
            raise
        self.lifecycle.drop_watch(name)  # a new window on an existing node is watched afresh
        self.records.put(name, JobRecord(
            namespace=info.namespace or namespace, job_id=info.id, model=plan["model"], flavor=plan["gpu"],
            engine=plan["engine"], window_s=plan["window_s"], price_per_hour=plan["price_per_hour"],
            created_at=info.created_at or self.lifecycle.wall(), stage=info.stage, message=info.message))
        try:
            if info.public_ports:
                raise RefusedError(f"job {info.id} came back with a public port; canceled")
            if not info.expose_url:
                raise HfError(f"job {info.id} has no exposed URL; canceled")
            decl = self._declaration(plan, window_order(params), info.expose_url)
            if plan["new_window_on_existing_node"]:
                await self.manager.merge(name, decl)
            else:
                await self.manager.attach(decl, token)
        except BaseException:
            # Never leave a window billing behind an error: cancel what nobody will watch.
            try:
                await client.cancel_job(info.namespace, info.id)
            except HfError as cleanup:
                raise HfError(f"started job {info.namespace}/{info.id} but could not attach it, and canceling it "
                              f"failed ({cleanup.message}): cancel it on Hugging Face now; it bills until its "
                              "window ends") from cleanup
            finally:
                if not plan["new_window_on_existing_node"]:
                    self.records.forget(name)
            raise
        await self.lifecycle.cancel_strays(client, info.namespace, name, keep=info.id)
        watch = self.lifecycle.watch_of(self.manager.get(name))
        if watch is not None:
            await self.lifecycle.observe(watch, info)
        self.lifecycle.kick()
        return self.manager.show(name)

    @staticmethod
    def _declaration(plan: dict[str, Any], order: WindowOrder, url: str) -> dict[str, Any]:
        lifecycle: dict[str, Any] = {"managed": True, "wake_on_request": False,
                                     "pause_on_sponsor_exit": bool(plan["pause_on_exit"])}
        if plan["idle_stop_min"] is not None:
            lifecycle["idle_pause_min"] = plan["idle_stop_min"]
        decl: dict[str, Any] = {
            "name": plan["name"], "provider": "huggingface-job", "url": url, "models": [plan["model"]],
            "gpu": f"{plan['gpu']} ({plan['gpu_description']})", "price_per_hour": plan["price_per_hour"],
            "share_with_cluster": bool(order.share_with_cluster), "routing": {"use": plan["use"]},
            "lifecycle": lifecycle,
            "budget": {k: plan["budget"][k] for k in ("usd_per_day", "usd_per_month")},
        }
        if order.timeouts is not None and order.timeouts.cold_start_s is not None:
            decl["timeouts"] = {"cold_start_s": order.timeouts.cold_start_s}
        return decl

    # -- actions -----------------------------------------------------------------------------------------------

    def _job_node(self, name: str) -> tuple[RentedUpstream, JobRecord]:
        node = self.manager.get(name)
        record = self.records.get(name)
        if not is_hf_job(node) or record is None:
            raise ConfigError(f"rented node {name} is not a batch window (a Job Pairwise started)")
        return node, record

    async def stop(self, name: str, *, on_exit: bool = False) -> RentedRow:
        """Cancel the window now: a user's stop, or (``on_exit``) what pause on exit does to a window."""
        node, _ = self._job_node(name)
        if on_exit:
            await self.lifecycle.stop_now(node, "exit", EXIT_STOP)
        else:
            await self.lifecycle.stop_now(node, "user", "stopped by the user")
        return self.manager.show(name)

    async def stop_with_reason(self, name: str, reason: str, detail: str) -> None:
        """Cancel the window now for ``reason`` (a batch's budget or end), told with ``detail``."""
        node, _ = self._job_node(name)
        await self.lifecycle.stop_now(node, reason, detail)

    def extend(self, name: str) -> None:
        self._job_node(name)
        raise RefusedError(f"refused to extend {name}: " + EXTEND_REFUSAL.format(name=name),
                           title="A window cannot be extended")

    async def logs(self, name: str, *, follow: bool, tail: int | None) -> AsyncIterator[tuple[str, str]]:
        _, record = self._job_node(name)
        async for item in self.hf.client().job_logs(record.namespace, record.job_id, tail=tail,
                                                    idle_s=None if follow else 2.0):
            yield item

    # -- rows --------------------------------------------------------------------------------------------------

    def extra(self, node: RentedUpstream) -> WindowExtras:
        record = self.records.get(node.name)
        if not is_hf_job(node) or record is None:
            return {}
        watch = self.lifecycle.watches.get(node.name)
        return {
            "window_stage": record.stage, "window_job": f"{record.namespace}/{record.job_id}",
            "window_s": record.window_s, "window_ends_at": iso(record.window_ends_at(self.lifecycle.tuning.billing_minute_s)),
            "window_cost_usd": round(window_cost(record.price_per_hour, record.window_s), 6),
            "window_charged_usd": round(record.charged_minutes * record.price_per_hour / 60, 6),
            "started_at": iso(record.started_at), "finished_at": iso(record.finished_at),
            "ended_by": record.ended_by, "last_log_lines": record.last_lines,
            "stop_owed": watch.stop_reason if watch is not None else None,
        }
