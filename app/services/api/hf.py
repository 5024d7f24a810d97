"""``HfApi``: the node's Hugging Face account (token in the keyring) and look-ups."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from app.services.errors import FeatureMissing

if TYPE_CHECKING:
    from app.services.hf.service import HfService
    from app.services.node import Node


class HfApi:
    def __init__(self, node: Node) -> None:
        self.node = node

    def _service(self) -> HfService:
        if self.node.hf is None:
            raise FeatureMissing("this node has no Hugging Face adapter attached")
        return self.node.hf

    @property
    def available(self) -> bool:
        return self.node.hf is not None

    @property
    def signed_in(self) -> bool:
        return self.node.hf is not None and self.node.hf.signed_in

    async def status(self) -> dict[str, Any]:
        return await self._service().status()

    async def login(self, token: str) -> dict[str, Any]:
        """Check the token's permissions, then keep it in the OS keyring (never sent back)."""
        return await self._service().login(token)

    async def logout(self, *, force: bool = False) -> dict[str, Any]:
        """Forget the token; refused while a managed endpoint bills (it could no longer be paused), unless ``force``."""
        await self._service().logout(force=force)
        return {"signed_in": False}

    async def catalog(self, search: str | None = None) -> list[dict[str, Any]]:
        return [m.to_json() for m in await self._service().catalog(search)]

    async def hardware(self, namespace: str | None = None) -> list[dict[str, Any]]:
        return [r.to_json() for r in await self._service().hardware(namespace)]

    async def endpoints(self, namespace: str | None = None) -> list[dict[str, Any]]:
        service = self._service()
        found = await service.client().list_endpoints(await service.namespace(namespace))
        return [e.summary() for e in found]
