"""``HfApi``: Hugging Face's part of the service API (``api/parts.py``; its routes in ``routes.py``):
the node's account (token in the keyring) and look-ups. Each answer is a ``TypedDict`` made here from
the adapter's own records, so the CLI, the routes and the wizard read the same keys; the tray finds it
as ``api.part(HfApi)``."""

from __future__ import annotations

from typing import TYPE_CHECKING, Literal, NotRequired, TypedDict

from app.services.errors import FeatureMissing
from app.services.hf.providers import ACCOUNT
from app.services.hf.service import NOT_SIGNED_IN

if TYPE_CHECKING:
    from app.services.hf.catalog import CatalogModel
    from app.services.hf.models import EndpointInfo, HardwareRow
    from app.services.hf.service import HfService
    from app.services.hf.tokens import TokenReport
    from app.services.node import Node


class NamespaceRow(TypedDict):
    name: str
    kind: str  # user | org
    can_manage: bool
    can_call: bool
    missing: list[str]  # the permissions the token lacks there


class HfAccount(TypedDict):
    """``pairwise hf status``: who the token is and what it may do where (never the token)."""

    signed_in: bool
    message: NotRequired[str]  # when not signed in: how to sign in
    user: NotRequired[str]
    role: NotRequired[str]
    token_name: NotRequired[str | None]
    namespaces: NotRequired[list[NamespaceRow]]
    warnings: NotRequired[list[str]]
    simulated: NotRequired[bool]  # the simulated Hugging Face answers (pairwise demo, tests)


class RecipeRow(TypedDict):
    id: str
    accelerator: str | None
    engine: str | None
    gguf_file: str | None


class CatalogRow(TypedDict):
    repo_id: str
    task: str | None
    license: str | None
    recipes: list[RecipeRow]


class HardwareOffer(TypedDict):
    """One machine type in one region; camelCase keys are Hugging Face's own."""

    vendor: str
    region: str
    regionLabel: str
    id: str
    accelerator: str
    numAccelerators: int
    instanceType: str
    instanceSize: str
    architecture: str
    gpuMemoryGb: float | None
    memoryGb: float | None
    numCpus: int | None
    pricePerHour: float | None
    status: str
    quotaMax: int | None
    quotaUsed: int | None
    quotaFree: int | None
    unavailable_reason: str | None  # why it cannot be used (shown, never hidden)


class EndpointSummary(TypedDict):
    namespace: str
    name: str
    type: str
    state: str
    message: str
    url: str | None
    repository: str
    revision: str | None
    task: str | None
    vendor: str | None
    region: str | None
    accelerator: str | None
    instance_type: str | None
    instance_size: str | None
    min_replica: int | None
    max_replica: int | None
    scale_to_zero_timeout: float | None
    engine: str | None
    gpu: str


class SignedOut(TypedDict):
    signed_in: Literal[False]


def account(report: TokenReport) -> HfAccount:
    return {"signed_in": True, "user": report.user, "role": report.role, "token_name": report.token_name,
            "namespaces": [{"name": n.name, "kind": n.kind, "can_manage": n.can_manage, "can_call": n.can_call,
                            "missing": list(n.missing)} for n in report.namespaces],
            "warnings": report.warnings()}


def catalog_row(model: CatalogModel) -> CatalogRow:
    return {"repo_id": model.repo_id, "task": model.task, "license": model.license,
            "recipes": [{"id": r.id, "accelerator": r.accelerator, "engine": r.engine, "gguf_file": r.gguf_file}
                        for r in model.recipes]}


def hardware_offer(r: HardwareRow) -> HardwareOffer:
    return {"vendor": r.vendor, "region": r.region, "regionLabel": r.regionLabel, "id": r.id,
            "accelerator": r.accelerator, "numAccelerators": r.numAccelerators, "instanceType": r.instanceType,
            "instanceSize": r.instanceSize, "architecture": r.architecture, "gpuMemoryGb": r.gpuMemoryGb,
            "memoryGb": r.memoryGb, "numCpus": r.numCpus, "pricePerHour": r.pricePerHour, "status": r.status,
            "quotaMax": r.quotaMax, "quotaUsed": r.quotaUsed, "quotaFree": r.quotaFree,
            "unavailable_reason": r.unavailable_reason}


def endpoint_summary(e: EndpointInfo) -> EndpointSummary:
    return {"namespace": e.namespace, "name": e.name, "type": e.type, "state": e.state, "message": e.message,
            "url": e.url, "repository": e.repository, "revision": e.revision, "task": e.task, "vendor": e.vendor,
            "region": e.region, "accelerator": e.accelerator, "instance_type": e.instance_type,
            "instance_size": e.instance_size, "min_replica": e.min_replica, "max_replica": e.max_replica,
            "scale_to_zero_timeout": e.scale_to_zero_timeout, "engine": e.engine, "gpu": e.gpu}


class HfApi:
    def __init__(self, node: Node) -> None:
        self.node = node

    def _service(self) -> HfService:
        service = self._account()
        if service is None:
            raise FeatureMissing("this node has no Hugging Face adapter attached")
        return service

    def _account(self) -> HfService | None:
        return self.node.rented.providers.get(ACCOUNT) if self.node.rented is not None else None

    @property
    def available(self) -> bool:
        return self._account() is not None

    @property
    def signed_in(self) -> bool:
        service = self._account()
        return service is not None and service.signed_in

    async def status(self) -> HfAccount:
        service = self._service()
        if not service.signed_in:
            return {"signed_in": False, "message": NOT_SIGNED_IN}
        return {**account(await service.report()), "simulated": service.client().simulated}

    async def login(self, token: str) -> HfAccount:
        """Check the token's permissions, then keep it in the OS keyring (never sent back)."""
        await self._service().login(token)
        return account(await self._service().report())

    async def logout(self, *, force: bool = False) -> SignedOut:
        """Forget the token; refused while a managed endpoint bills (it could no longer be paused), unless ``force``."""
        await self._service().logout(force=force)
        return {"signed_in": False}

    async def catalog(self, search: str | None = None) -> list[CatalogRow]:
        return [catalog_row(m) for m in await self._service().catalog(search)]

    async def hardware(self, namespace: str | None = None) -> list[HardwareOffer]:
        return [hardware_offer(r) for r in await self._service().hardware(namespace)]

    async def endpoints(self, namespace: str | None = None) -> list[EndpointSummary]:
        service = self._service()
        found = await service.client().list_endpoints(await service.namespace(namespace))
        return [endpoint_summary(e) for e in found]
