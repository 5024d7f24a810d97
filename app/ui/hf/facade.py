"""Hugging Face's part of the tray's window onto a node: the account and the look-ups the rent pages
make, forwarded to the service API's ``HfApi`` as ``NodeFacade`` forwards the rest."""

from __future__ import annotations

from app.services.api import NodeApi
from app.services.hf.api import CatalogRow, HardwareOffer, HfAccount, HfApi


class HfFacade:
    def __init__(self, api: NodeApi) -> None:
        self.api = api

    def available(self) -> bool:
        return self.api.part(HfApi).available

    def signed_in(self) -> bool:
        return self.api.part(HfApi).signed_in

    async def status(self) -> HfAccount:
        return await self.api.part(HfApi).status()

    async def login(self, token: str) -> HfAccount:
        return await self.api.part(HfApi).login(token)

    async def logout(self) -> None:
        await self.api.part(HfApi).logout()

    async def catalog(self, search: str | None = None) -> list[CatalogRow]:
        return await self.api.part(HfApi).catalog(search)

    async def hardware(self, namespace: str | None = None) -> list[HardwareOffer]:
        return await self.api.part(HfApi).hardware(namespace)
