"""Rented nodes on Hugging Face endpoints: create, pause, resume, delete, and attach by NS/NAME.

`HfRented` stands on the RentedManager (issue 5) for everything a rented node is once it exists; it
adds what needs Hugging Face's management API:

- ``await plan(params)`` (an ``EndpointOrder``'s JSON, orders.py: the new node's settings nested as
  in its declaration): what ``create`` would do, with the price and what the budget allows (the
  CLI shows it before asking; the wizard too); with ``create``, the ``EndpointOperations`` of
  rented/operations.py, under which the service API finds them;
- ``await create(params)``: create an endpoint that is never public (type ``authenticated``), with
  HF's scale-to-zero on as a backstop (min replica 0, ``scaleToZeroTimeout`` 15 min unless set),
  then attach it as a managed rented node using the signed-in token;
- ``await pause(name)``, ``await resume(name)``, ``await delete(name)`` (HF delete, then detach);
- ``resolve(decl, token)``: the manager's resolver for ``endpoint: NS/NAME`` declarations: URL,
  GPU and price from HF; a ``public`` endpoint is refused (anyone with its URL could use it).
"""

from __future__ import annotations

import logging
import re
from typing import TYPE_CHECKING, Any

from app.services.errors import ConfigError, CredentialError, RefusedError
from app.services.hf.client import HuggingFaceClient
from app.services.hf.errors import HfError, HfNotFound
from app.services.hf.jobs_lifecycle import is_hf_job
from app.services.hf.jobs_ops import window_refusal
from app.services.hf.lifecycle import HfLifecycle
from app.services.hf.models import ENGINES, EndpointInfo, HardwareRow, create_body, pick_hardware
from app.services.hf.orders import EndpointOrder, endpoint_order
from app.services.hf.records import EndpointRecord, EndpointRecords
from app.services.hf.service import HfService
from app.services.hf.tokens import CALL, MANAGE
from app.services.hf.watch import split_endpoint
from app.services.hf.window_image import sized_image, window_param
from app.services.rented.caps import minute_refusal
from app.services.rented.decl import RentedDecl
from app.services.rented.manager import RentedManager
from app.services.rented.upstream import RentedUpstream

if TYPE_CHECKING:
    from app.services.api.plans import EndpointPlan
    from app.services.api.rows import RentedRow

log = logging.getLogger(__name__)

HF_NAME = re.compile(r"^[a-z0-9]([a-z0-9-]{0,30}[a-z0-9])?$")
DEFAULT_SCALE_TO_ZERO_MIN = 15.0
PUBLIC_REFUSAL = ("its type is public, so anyone with its URL could use it; Pairwise attaches only "
                  "authenticated endpoints (change its type on Hugging Face first)")


def _hours(cap: float | None, price: float | None) -> float | None:
    return round(cap / price, 2) if cap is not None and price else None


class HfRented:
    def __init__(self, hf: HfService, manager: RentedManager, lifecycle: HfLifecycle,
                 records: EndpointRecords) -> None:
        self.hf, self.manager, self.lifecycle, self.records = hf, manager, lifecycle, records
        manager.hooks.resolvers.append(self.resolve)

    # -- create ------------------------------------------------------------------------------------------------

    async def plan(self, params: dict[str, Any]) -> EndpointPlan:
        """What ``create(params)`` would do (rented/operations.py ``EndpointOperations``): the creation
        request itself in ``body``, no names linked (the service API adds ``same_as``)."""
        draft = await self._draft(params)
        budget = draft["budget"]
        return {
            "name": draft["name"], "namespace": draft["namespace"], "endpoint": draft["endpoint"],
            "model": draft["model"], "engine": draft["engine"], "gpu": draft["gpu"],
            "accelerator": draft["accelerator"], "vendor": draft["vendor"], "region": draft["region"],
            "gpu_memory_gb": draft["gpu_memory_gb"], "price_per_hour": draft["price_per_hour"], "type": draft["type"],
            "scale_to_zero_timeout_min": draft["scale_to_zero_timeout_min"], "context_window": draft["context_window"],
            "budget": {"usd_per_day": budget["usd_per_day"], "usd_per_month": budget["usd_per_month"],
                       "hours_per_day": budget["hours_per_day"], "hours_per_month": budget["hours_per_month"]},
            "same_as": [], "body": draft["body"],
        }

    async def _draft(self, params: dict[str, Any]) -> dict[str, Any]:
        order = endpoint_order(params)
        name = order.name
        model = order.model
        if not isinstance(model, str) or "/" not in model:
            raise ConfigError("--model needs a Hugging Face repository id (OWNER/NAME)")
        if name in self.manager.nodes:
            raise ConfigError(f"a rented node named {name!r} already exists")
        endpoint = order.endpoint_name or name
        if not HF_NAME.match(endpoint):
            raise ConfigError(f"{endpoint!r} cannot be a Hugging Face endpoint name (1-32 lowercase letters, digits "
                              "or dashes, starting and ending with a letter or digit); give --endpoint-name")
        engine = order.engine
        if engine is not None and engine not in ENGINES:
            raise ConfigError(f"engine {engine!r} is not one of {', '.join(ENGINES)}")
        namespace = await self.hf.namespace(order.namespace)
        await self.hf.require(namespace, MANAGE)
        await self.hf.require(namespace, CALL)
        # Checked before anything bills, so the user can rename instead of meeting a 409 after "Create".
        try:
            taken = {info.name for info in await self.hf.client().list_endpoints(namespace)}
        except HfError as exc:  # a look-ahead only: HF's answer to the create itself stays the authority
            log.info("could not list the endpoints of %s before creating %s: %s", namespace, endpoint, exc.message)
            taken = set()
        if endpoint in taken:
            raise ConfigError(f"an endpoint named {endpoint!r} already exists in {namespace} on Hugging Face; "
                              "pick another name")
        row = pick_hardware(await self.hf.hardware(namespace), instance=order.gpu,
                            region=order.region, vendor=order.vendor)
        timeout = order.scale_to_zero_min
        if timeout is None:
            timeout = DEFAULT_SCALE_TO_ZERO_MIN
        elif timeout <= 0:
            raise ConfigError("the scale-to-zero time must be a positive number of minutes")
        body = create_body(name=endpoint, repository=model, hardware=row, engine=engine,
                           task=order.task or "text-generation", revision=order.revision,
                           scale_to_zero_timeout_min=timeout)
        window = window_param(order.context_window)
        body["model"]["image"] = sized_image(body["model"]["image"], window)
        price = row.pricePerHour
        caps = order.caps()
        day, month = caps["usd_per_day"], caps["usd_per_month"]
        refusal = minute_refusal(name, caps, price, creating=True)
        if refusal:
            raise RefusedError(f"refused to create {name}: {refusal}", title="Cap below one billed minute")
        return {
            "name": name, "namespace": namespace, "endpoint": endpoint, "model": model, "engine": engine,
            "gpu": f"{row.instanceType} {row.instanceSize}", "accelerator": row.accelerator, "vendor": row.vendor,
            "region": row.region, "gpu_memory_gb": row.gpuMemoryGb, "price_per_hour": price, "type": body["type"],
            "scale_to_zero_timeout_min": body["compute"]["scaling"]["scaleToZeroTimeout"], "context_window": window,
            "budget": {"usd_per_day": day, "usd_per_month": month, "hours_per_day": _hours(day, price),
                       "hours_per_month": _hours(month, price)},
            "body": body,
        }

    async def create(self, params: dict[str, Any]) -> RentedRow:
        plan = await self._draft(params)
        client = self.hf.client()
        sent = self.lifecycle.clock()
        self.lifecycle.asking(f"{plan['namespace']}/{plan['endpoint']}")
        info = await client.create_endpoint(plan["namespace"], plan["body"])
        self.records.put(plan["name"], EndpointRecord.of(info, created=True))
        try:
            # No token of its own: the node reads the signed-in account's token when it sends, so a
            # later login or logout reaches it.
            await self.manager.attach(self._declaration(plan, endpoint_order(params)), None)
        except BaseException:
            # Never leave a GPU we just rented behind an error: delete what nobody will manage.
            self.records.forget(plan["name"])
            try:
                await client.delete_endpoint(plan["namespace"], plan["endpoint"])
            except HfError as cleanup:
                # Say so loudly: a GPU nobody manages may be billing.
                raise HfError(f"created endpoint {plan['namespace']}/{plan['endpoint']} but could not attach it, "
                              f"and deleting it failed ({cleanup.message}): delete or pause it on Hugging Face "
                              "now, it may be billing") from cleanup
            raise
        node = self.manager.get(plan["name"])
        watch = self.lifecycle.watch_of(node)
        if watch is not None:
            await self.lifecycle.observe(watch, info, sent)
        self.lifecycle.kick()
        return self.manager.show(plan["name"])

    @staticmethod
    def _declaration(plan: dict[str, Any], order: EndpointOrder) -> dict[str, Any]:
        """The new node's declaration: the order's settings as given (nested as there), managed."""
        settings = order.declared()
        decl: dict[str, Any] = {
            **settings, "name": plan["name"], "provider": "huggingface-endpoint",
            "endpoint": f"{plan['namespace']}/{plan['endpoint']}", "models": [plan["model"]], "gpu": plan["gpu"],
            "price_per_hour": plan["price_per_hour"], "budget": order.caps(),
            "lifecycle": {**settings.get("lifecycle", {}), "managed": True},
        }
        if plan.get("context_window"):
            decl["context_window"] = plan["context_window"]
        return decl

    # -- actions -----------------------------------------------------------------------------------------------

    async def pause(self, name: str) -> RentedRow:
        await self.lifecycle.pause_now(self._endpoint_node(name, "pause"), "user")
        return self.manager.show(name)

    async def resume(self, name: str) -> RentedRow:
        await self.lifecycle.resume_now(self._endpoint_node(name, "resume"))
        return self.manager.show(name)

    def _endpoint_node(self, name: str, verb: str) -> RentedUpstream:
        """The rented node ``name`` for an endpoint's action; a batch window's refusal names its own way."""
        node = self.manager.get(name)
        if is_hf_job(node):
            raise window_refusal(name, verb)
        return node

    async def delete(self, name: str) -> dict[str, Any]:
        node = self._endpoint_node(name, "delete")
        if not node.decl.endpoint or node.decl.provider != "huggingface-endpoint":
            raise ConfigError(f"rented node {name} is not a Hugging Face endpoint; use 'pairwise rented detach'")
        namespace, endpoint = split_endpoint(node.decl.endpoint)
        try:
            await self.hf.client().delete_endpoint(namespace, endpoint)
        except HfNotFound:
            pass  # already gone on HF: forgetting the node is all that is left
        await self.manager.detach(name)
        return {"deleted": f"{namespace}/{endpoint}", "detached": name}

    # -- attach by NS/NAME -------------------------------------------------------------------------------------

    async def resolve(self, decl: RentedDecl, token: str | None) -> RentedDecl:
        if decl.provider != "huggingface-endpoint" or not decl.endpoint:
            return decl
        namespace, endpoint = split_endpoint(decl.endpoint)
        temporary: HuggingFaceClient | None = None
        if self.hf.signed_in:
            client = self.hf.client()
        elif token:
            client = temporary = HuggingFaceClient(self.hf.urls, token, extra_ca=self.hf.extra_ca, tuning=self.hf.tuning)
        else:
            raise CredentialError(f"attaching endpoint {decl.endpoint} needs Hugging Face's API: sign in with "
                                  "'pairwise hf login --token-stdin' or give the endpoint's token with --token-stdin")
        try:
            info = await client.get_endpoint(namespace, endpoint)
            if info.is_public:
                raise RefusedError(f"refused to attach endpoint {decl.endpoint}: {PUBLIC_REFUSAL}",
                                   title="Public endpoint refused")
            row = await self._hardware_row(client, info)
        finally:
            if temporary is not None:
                await temporary.aclose()
        record = self.records.get(decl.name)
        if record is None or (record.namespace, record.endpoint) != (namespace, endpoint):
            self.records.put(decl.name, EndpointRecord.of(info, created=False))
        return self._filled(decl, info, row)

    async def _hardware_row(self, client: HuggingFaceClient, info: EndpointInfo) -> HardwareRow | None:
        try:
            rows = await client.hardware(info.namespace)
        except HfError:
            return None  # the price is then unknown (the user can give --price-per-hour)
        return next((r for r in rows if (r.vendor, r.region, r.instanceType, r.instanceSize)
                     == (info.vendor, info.region, info.instance_type, info.instance_size)), None)

    @staticmethod
    def _filled(decl: RentedDecl, info: EndpointInfo, row: HardwareRow | None) -> RentedDecl:
        data = decl.model_dump(mode="json")
        if info.url and not data.get("url"):
            data["url"] = info.url
        if not data.get("gpu"):
            data["gpu"] = info.gpu
        if data.get("price_per_hour") is None and row is not None:
            data["price_per_hour"] = row.pricePerHour
        if not data.get("models") and info.repository:
            data["models"] = [info.repository]
        return RentedDecl.model_validate(data)
