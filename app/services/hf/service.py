"""The node's Hugging Face account: the token in the keyring, one client, sign-in and look-ups.

The tray wizard and the control API (`/hf/...`, see routes.py) both call these methods; the token
stays in this process and in the OS keyring.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Awaitable, Callable
from typing import Any

from app.services.errors import CredentialError, RefusedError
from app.services.events import EventBus
from app.services.hf.catalog import CatalogModel
from app.services.hf.client import HuggingFaceClient
from app.services.hf.errors import HfAuthError
from app.services.hf.events import HfSignedIn, HfSignedOut
from app.services.hf.models import HardwareRow
from app.services.hf.settings_section import HuggingFaceUrls
from app.services.hf.tokens import CALL, MANAGE, TOKEN_KEY, TokenReport, analyse, missing_message
from app.services.hf.tuning import HfTuning
from app.services.secrets import SecretStore

log = logging.getLogger(__name__)

NOT_SIGNED_IN = "not signed in to Hugging Face: run 'pairwise hf login --token-stdin'"


class HfService:
    def __init__(self, urls: HuggingFaceUrls, secrets: SecretStore, bus: EventBus, *,
                 extra_ca: tuple[str, ...] = (), tuning: HfTuning | None = None) -> None:
        self.urls, self.secrets, self.bus = urls, secrets, bus
        self.extra_ca = extra_ca
        self.tuning = tuning or HfTuning.from_env()
        self._client: HuggingFaceClient | None = None
        self._report: TokenReport | None = None
        # Awaited before the token is forgotten (``force``: sign out even if they cannot do their part);
        # the lifecycle pauses billing endpoints here, while a pause can still be sent.
        self.before_logout: list[Callable[[bool], Awaitable[None]]] = []

    def _make_client(self, token: str) -> HuggingFaceClient:
        return HuggingFaceClient(self.urls, token, extra_ca=self.extra_ca, tuning=self.tuning)

    @property
    def signed_in(self) -> bool:
        return self._client is not None or bool(self.secrets.get(TOKEN_KEY))

    def token(self) -> str:
        """The signed-in token: the one the client already holds, else the keyring's."""
        if self._client is not None:
            return self._client.token
        return self.client().token

    def client(self) -> HuggingFaceClient:
        """The signed-in client; CredentialError when there is no token in the keyring."""
        if self._client is None:
            token = self.secrets.get(TOKEN_KEY)
            if not token:
                raise CredentialError(NOT_SIGNED_IN, title="Not signed in to Hugging Face")
            self._client = self._make_client(token)
        return self._client

    async def aclose(self) -> None:
        if self._client is not None:
            await self._client.aclose()
            self._client = None

    # -- sign-in -----------------------------------------------------------------------------------------------

    async def check_token(self, client: HuggingFaceClient) -> TokenReport:
        """whoami-v2, then HF's auth-check for manage and call in every namespace (HF has the last word)."""
        try:
            whoami = await client.whoami(force=True)
        except HfAuthError as exc:
            raise HfAuthError(f"Hugging Face refused the token: {exc.hf_message}", hf_status=exc.hf_status,
                              hf_message=exc.hf_message) from None
        report = analyse(whoami)

        async def confirm(ns: str) -> tuple[bool, bool]:
            (manage, _), (call, _) = await asyncio.gather(client.auth_check(ns, "write"),
                                                          client.auth_check(ns, "infer"))
            return manage, call

        results = await asyncio.gather(*(confirm(n.name) for n in report.namespaces))
        for access, (manage, call) in zip(report.namespaces, results, strict=True):
            access.can_manage, access.can_call = manage, call
            access.missing = [p for p, ok in ((MANAGE, manage), (CALL, call)) if not ok]
        return report

    async def login(self, token: str) -> dict[str, Any]:
        token = token.strip()
        if not token:
            raise CredentialError("no token given")
        candidate = self._make_client(token)
        try:
            report = await self.check_token(candidate)
        except BaseException:
            await candidate.aclose()
            raise
        if not report.usable:
            await candidate.aclose()
            lacks = ", ".join(sorted({p for n in report.namespaces for p in n.missing}))
            raise RefusedError(f"the token of {report.user} can neither manage nor call endpoints in any namespace: "
                               f"it lacks {lacks}", title="Hugging Face token lacks a permission")
        self.secrets.set(TOKEN_KEY, token)
        await self.aclose()
        self._client, self._report = candidate, report
        for warning in report.warnings():
            log.info("hf login: %s", warning)
        self.bus.publish(HfSignedIn(user=report.user, namespaces=[n.name for n in report.namespaces]))
        return report.to_json()

    async def logout(self, *, force: bool = False) -> None:
        for guard in list(self.before_logout):
            await guard(force)
        self.secrets.delete(TOKEN_KEY)
        self._report = None
        await self.aclose()
        self.bus.publish(HfSignedOut())

    async def report(self) -> TokenReport:
        if self._report is None:
            self._report = await self.check_token(self.client())
        return self._report

    async def status(self) -> dict[str, Any]:
        if not self.signed_in:
            return {"signed_in": False, "message": NOT_SIGNED_IN}
        report = (await self.report()).to_json()
        return {"signed_in": True, **report, "simulated": self.client().simulated}

    async def require(self, namespace: str, permission: str) -> None:
        """Refuses, naming the missing permission, before a call HF would refuse with a bare 403."""
        access = (await self.report()).access(namespace)
        if access is not None and permission in access.missing:
            raise RefusedError(missing_message(namespace, permission), title="Hugging Face token lacks a permission")

    async def namespace(self, given: str | None = None) -> str:
        return given or await self.client().default_namespace()

    # -- look-ups ----------------------------------------------------------------------------------------------

    async def catalog(self, search: str | None = None) -> list[CatalogModel]:
        return await self.client().catalog(search)

    async def hardware(self, namespace: str | None = None) -> list[HardwareRow]:
        return await self.client().hardware(await self.namespace(namespace))
