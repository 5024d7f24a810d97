"""``RentedUpstream``: a rented endpoint as one upstream of the sponsor (kind ``"rented"``).

What it enforces on every request it sends:

- the URL rules (https verified against the system store + the node's CA file + this
  node's ``ca_file``; http:// only to loopback), checked again here as a last line;
- the bearer token from the sponsor's keyring, added to this outbound request only;
- the request's ``model`` pinned to a model this endpoint serves (never another one);
- ``stream_options.include_usage`` on streams, so tokens are counted;
- pass-through streams (the caller speaks the endpoint's API) on the splice's connections
  (``rented/link.py``), the rest on aiohttp's: the same rules on both;
- first byte within ``cold_start_s``; a provider whose proxy can hold a request while a replica
  starts is told how long (its ``WireTraits.wait_header``);
- a 503 while the endpoint scales up is waited out (retried within ``cold_start_s``);
  any other failure is an ``UpstreamError`` so the plan fails over at once;
- a 401/403 marks the node ``credential refused`` with the upstream's own message.

Runtime state (driven by probes and by lifecycle controllers):
``state_word``/``state_message``, the provider's own word for its state and its message (set with
``set_state_word``; the provider's ``WireTraits.states`` say what the word means), ``reported`` (what a
polled provider last said, normalised), ``credential_error``, ``block_reason``
(a controller's veto, e.g. "drifted"), ``public`` (answers without a credential),
``last_error``. ``status() -> (state, reason)`` with state one of eligible | cold | paused |
starting | unhealthy | ended (a batch window is over) | ineligible; ``ineligible_reason()`` / ``ineligible_reason_for(caller)``
and ``policy()`` are what the planner reads.
"""

from __future__ import annotations

import asyncio
import math
import time
from collections.abc import Callable
from typing import TYPE_CHECKING, Any
from urllib.parse import urlsplit

from app.services.backends.base import Caller, ModelEntry, Opened, Upstream, UpstreamRequest
from app.services.backends.http_open import FAILOVER_STATUSES
from app.services.backends.splice_client import SpliceClient
from app.services.backends.stream_client import StreamClient
from app.services.errors import UpstreamError
from app.services.node_ids import rented_node_id
from app.services.outbound import ca_files
from app.services.rented.decl import LABEL, RentedDecl, check_url
from app.services.rented.link import probe_client, splice_client, stream_client
from app.services.rented.per_token import RouterPrices, TokenPrice, estimate, price_of
from app.services.rented.probe import PUBLIC_WARNING, ProbeResult, probe_endpoint
from app.services.rented.provider_state import SCHEDULER_STATE, ProviderState, State, WireTraits
from app.services.secrets import redact
from app.services.translate.shapes import PATHS, Api, canonical_model
from app.services.upstream_facts import RentedFacts

if TYPE_CHECKING:
    from app.services.rented.route_hooks import RouteHooks

WARMING_WORDS = ("starting", "loading", "initializ", "scale up", "scaling", "warming", "cold", "not ready")


class RentedUpstream(Upstream):
    kind = "rented"
    remote = False  # served from this node (a peer's rented node is reached through its sponsor)

    def __init__(self, decl: RentedDecl, *, sponsor_name: str, sponsor_id: str,
                 token: str | None | Callable[[], str | None],
                 extra_ca: tuple[str, ...] = (), hooks: RouteHooks[RentedUpstream] | None = None,
                 traits: WireTraits | None = None, provider_name: str = "its provider") -> None:
        self.decl = decl
        self.traits = traits or WireTraits()  # its provider's (rented/provider_state.py)
        self.provider_name = provider_name  # its provider's display_name: who listed a per-token price
        self.key = f"rented:{decl.name}"
        self.node_name = decl.name
        self.node_id = rented_node_id(sponsor_id, decl.name)
        self.sponsor_name, self.sponsor_id = sponsor_name, sponsor_id
        self.capacity = decl.capacity
        self.first_byte_timeout_s = decl.cold_start_s
        self.declared_window = decl.context_window
        self.in_flight = 0
        self.hooks = hooks
        # Read when each request is sent (credentials.TokenProvider), never copied at build time.
        self._token_of: Callable[[], str | None] = token if callable(token) else (lambda: token)
        self._extra_ca = ca_files(*extra_ca, decl.ca_file)
        self._client = probe_client(self._extra_ca)  # probes
        self._streams = stream_client(self._extra_ca)  # inference (the data plane)
        self._splice = splice_client(self._extra_ca)  # pass-through streams (None: PAIRWISE_SPLICE=off)
        self.probed: list[ModelEntry] | None = None
        self.probe_state: str | None = None
        self.state_word: str | None = None
        self.state_message: str | None = None
        # What a polled provider last reported (provider_loop.py), normalised; None: nothing polls it.
        self.reported: ProviderState | None = None
        self.credential_error: str | None = None
        self.block_reason: str | None = None
        self.budget_reason: str | None = None
        self.provider_price: float | None = None  # the provider's current price, as a lifecycle controller reads it
        self.price_reason: str | None = None  # why the price is unknown: ineligible until it is known
        self.router_prices: RouterPrices | None = None  # per-token prices the provider lists (per_token.py)
        self._sent: dict[str, tuple[str, tuple[int, int]]] = {}  # per-token job -> (model, estimated usage)
        # Why the provider's management API cannot be reached now (the state shown may be stale), or None.
        self.provider_unreachable: str | None = None
        # The user chose to quit although this node could not be paused (the tray asked): the sponsor's
        # stop does not try again for minutes; the next start pauses it (reconcile) and charges the gap.
        self.exit_pause_waived = False
        self.public = False
        self.simulated = False
        self.last_error: str | None = None
        self.waking = 0

    # -- declaration -----------------------------------------------------------------------------------------

    @property
    def name(self) -> str:
        return self.decl.name

    @property
    def has_token(self) -> bool:
        return bool(self._token_of())

    def set_token(self, token: str | None | Callable[[], str | None]) -> None:
        self._token_of = token if callable(token) else (lambda: token)
        self.credential_error = None

    def update_decl(self, decl: RentedDecl) -> None:
        self.decl, self.capacity, self.first_byte_timeout_s = decl, decl.capacity, decl.cold_start_s
        self.declared_window = decl.context_window

    @property
    def price_per_hour(self) -> float | None:
        """What an hour costs: the higher of the declared price and the provider's."""
        prices = [p for p in (self.decl.price_per_hour, self.provider_price) if p is not None]
        return max(prices) if prices else None

    @property
    def per_token(self) -> bool:
        """Billed per token (a router, or a provider declared with prices per token), not per hour."""
        return self.traits.per_token or (
            self.decl.price_per_mtok_in is not None and self.decl.price_per_mtok_out is not None)

    def token_price(self, model: str) -> TokenPrice | None:
        return price_of(model, self.router_prices, (self.decl.price_per_mtok_in, self.decl.price_per_mtok_out),
                        self.provider_name)

    def sent_estimate(self, job_id: str) -> tuple[str, tuple[int, int]] | None:
        """The model and estimated usage of a per-token request sent (taken once, at its end)."""
        return self._sent.pop(job_id, None)

    @property
    def shared_with_cluster(self) -> bool:
        """Read by the cluster: only shared rented nodes are offered to peers."""
        return self.decl.share_with_cluster

    def policy(self) -> str | None:
        return self.decl.policy

    def api_for(self, client_api: Api) -> Api:
        return "openai"  # every provider speaks the OpenAI API

    # -- models ----------------------------------------------------------------------------------------------

    def served_names(self) -> list[str]:
        use_declared = self.probed is None or not self.probed or (
            self.traits.declared_models and self.decl.models)
        names = list(self.decl.models) if use_declared else [m.name for m in self.probed or []]
        if self.decl.allow_models:
            allowed = {canonical_model(m) for m in self.decl.allow_models}
            names = [n for n in names if canonical_model(n) in allowed]
        return names

    def models(self) -> list[ModelEntry]:
        probed = {m.name: m for m in self.probed or []}
        return [probed.get(n) or ModelEntry(n, {"owned_by": self.decl.provider}) for n in self.served_names()]

    # -- state -----------------------------------------------------------------------------------------------

    def set_state_word(self, word: str | None, message: str | None = None) -> None:
        """For a lifecycle controller: the provider's own word for its state, and its message."""
        self.state_word, self.state_message = word, message

    def word_state(self) -> State | None:
        """What the provider's word means (None: no word reported)."""
        if not self.state_word:
            return None
        return self.traits.states.get(self.state_word, State.UNKNOWN)

    def can_wake(self) -> bool:
        life = self.decl.lifecycle
        return life.managed and life.wake_on_request and bool(self.hooks and self.hooks.before_route)

    def status(self) -> tuple[str, str | None]:
        if self.credential_error:
            return "ineligible", f"credential refused: {self.scrub(self.credential_error)}"
        if self.block_reason:
            return "ineligible", self.block_reason
        if self.price_reason:
            return "ineligible", self.price_reason
        if self.budget_reason:
            return "ineligible", self.budget_reason
        budget = self.decl.budget
        capped = budget.usd_per_day is not None or budget.usd_per_month is not None
        if self.per_token:
            unpriced = [m for m in self.served_names() if self.token_price(m) is None]
            if capped and unpriced:
                return "ineligible", (f"a budget is set but the price per token of {', '.join(unpriced)} is unknown "
                                      "(the provider lists none); set it with 'pairwise rented set "
                                      f"{self.name} --price-per-mtok-in USD --price-per-mtok-out USD'")
        elif self.price_per_hour is None and capped:
            # A cap that cannot be counted is no cap: refuse rather than bill blind.
            return "ineligible", ("a budget is set but the price per hour is unknown; "
                                  f"set it with 'pairwise rented set {self.name} --price-per-hour USD'")
        word = self.word_state()
        base: str | None
        if word is not None:
            base = SCHEDULER_STATE[word]
        elif self.reported is not None:
            base = SCHEDULER_STATE[self.reported.state]
            if base == "eligible" and self.probe_state not in (None, "eligible"):
                base = self.probe_state
        else:
            base = self.probe_state
        if base == "paused":
            wake = "it wakes on request" if self.can_wake() else "wake on request is off"
            return "paused", f"paused on the provider; {wake}"
        if base == "starting":
            return "starting", f"starting on the provider ({self.state_word or self._reported_word()}); not ready yet"
        if base == "unhealthy":
            return "unhealthy", self.scrub(self.state_message or self._reported_message() or self.last_error
                                           or "the provider reports a failure")
        if base == "cold":
            return "cold", "scaled to zero: the next request waits for a cold start"
        if base == "ended":
            return "ended", self.scrub(self.state_message or "its window has ended")
        return "eligible", None

    def _reported_word(self) -> str | None:
        return None if self.reported is None else (self.reported.raw or self.reported.state.value)

    def _reported_message(self) -> str | None:
        return None if self.reported is None else self.reported.message

    def scrub(self, text: str) -> str:
        """Error text without the endpoint's URL or host: reasons travel to peers and callers."""
        url = self.decl.url or ""
        host = urlsplit(url).hostname if url else None
        for secret in (url, host):
            if secret:
                text = text.replace(secret, "[endpoint]")
        return redact(text)

    def ineligible_reason(self) -> str | None:
        state, reason = self.status()
        if state in ("eligible", "cold"):
            return None
        if state in ("paused", "starting") and (self.waking or self.can_wake()):
            return None
        if state in ("ineligible", "paused"):
            return reason  # already says what it is
        return f"{state}: {reason}"

    def ineligible_reason_for(self, caller: Caller) -> str | None:
        """As ``ineligible_reason``, for one caller: sharing and off-LAN rules."""
        if caller.from_peer and not self.decl.share_with_cluster:
            return (f"rented node {self.name} is not shared: sharing with the cluster is off on its sponsor "
                    f"{self.sponsor_name}, so only callers on {self.sponsor_name} may use it")
        if not caller.allow_off_lan:
            return f"off-LAN routing is denied for this caller ({caller.off_lan_rule}), and {self.name} is off-LAN"
        return self.ineligible_reason()

    def describe(self) -> RentedFacts:
        state, reason = self.status()
        return {"key": self.key, "kind": self.kind, "node": self.name, "label": LABEL, "state": state,
                "reason": reason, "in_flight": self.in_flight}

    # -- probing ---------------------------------------------------------------------------------------------

    def _base(self) -> str:
        if not self.decl.url:
            raise UpstreamError(f"rented node {self.name} has no URL yet (its provider has not reported one)")
        return check_url(self.decl.url)

    async def probe(self) -> ProbeResult:
        """Refresh models, credential and public-endpoint flags without an inference call."""
        if not self.decl.url:
            return ProbeResult(error="no URL yet")
        if self.traits.state_polled and self.probed is not None and self.state_word is not None:
            # Its state comes from the management API. Another call to its routes would count as
            # traffic: it would keep the provider's scale-to-zero (the backstop) from ever starting, and
            # wake the endpoint if it scaled to zero since the last poll.
            return ProbeResult()
        result = await probe_endpoint(self._client, self._base(), self.traits, self._token_of(), self.state_word,
                                      f"rented node {self.name}")
        self.simulated = self.simulated or result.simulated
        self.last_error = result.error
        if result.credential_error:
            self.credential_error = result.credential_error
            return result
        if result.error:
            return result
        self.credential_error = None
        if result.state:
            self.probe_state = result.state
            if result.state == "unhealthy":
                self.last_error = result.message
        if result.models is not None:
            self.probed = result.models
        if result.token_prices is not None:
            self.router_prices = result.token_prices
        if result.state == "eligible":
            self.public = result.public
        return result

    @property
    def warning(self) -> str | None:
        return PUBLIC_WARNING if self.public else None

    # -- requests --------------------------------------------------------------------------------------------

    async def open(self, request: UpstreamRequest) -> Opened:
        body = dict(request.body)
        served = self.served_names()
        if body.get("model") not in served:
            raise UpstreamError(f"rented node {self.name} serves only {', '.join(served) or 'no model'}; "
                                f"refused to send it model {body.get('model')!r}")
        if request.stream:
            body["stream_options"] = {**dict(body.get("stream_options") or {}), "include_usage": True}
        deadline = time.monotonic() + self.decl.cold_start_s
        self.waking += 1
        metered = False
        try:
            if self.hooks is not None and self.hooks.before_route:
                await self.hooks.run_before_route(self, deadline - time.monotonic())
            # Charged to whoever sent it from the moment it leaves (after any wake, which is the
            # endpoint's): prefill, queueing and a non-streamed answer all cost while we wait for the
            # first byte, and per-peer and per-key caps must see that.
            if self.hooks is not None and request.job_id:
                if self.per_token:
                    self._sent[request.job_id] = (str(body.get("model")), estimate(body))
                self.hooks.began(self, request.job_id)
                metered = True
            # Read after the hooks: a provider gives a new endpoint its URL only once it is scheduled.
            spliced = self._splice is not None and request.stream and request.api == request.client_api
            client = self._splice if spliced and self._splice is not None else self._streams
            opened = await self._send(client, self._base() + PATHS["openai"][request.operation], body, deadline)
        except BaseException:
            if metered and self.hooks is not None and request.job_id:
                self.hooks.abandoned(self, request.job_id)  # its time so far still counts on the account
            raise
        finally:
            self.waking -= 1
        opened.serving_node, opened.serving_node_id, opened.engine = self.name, self.node_id, self.decl.provider
        return opened

    def _headers(self, remaining: float) -> dict[str, str]:
        token = self._token_of()
        headers = {"authorization": f"Bearer {token}"} if token else {}
        if self.traits.wait_header:
            headers[self.traits.wait_header] = str(max(1, math.ceil(remaining)))
        return headers

    async def _send(self, client: StreamClient | SpliceClient, url: str, body: dict[str, Any],
                    deadline: float) -> Opened:
        label = f"rented node {self.name}"
        pause = 0.25
        while True:
            remaining = deadline - time.monotonic()
            if remaining <= 0:
                raise UpstreamError(f"{label} was not ready within its cold-start budget of "
                                    f"{self.decl.cold_start_s:g} s")
            try:
                opened = await client.open(url, json_body=body, headers=self._headers(remaining),
                                           first_byte_timeout_s=remaining, idle_timeout_s=self.idle_timeout_s,
                                           label=label, retry_statuses=FAILOVER_STATUSES | {401, 403})
            except UpstreamError as exc:
                message = self.scrub(exc.message)
                if exc.upstream_status in (401, 403):
                    self.credential_error = message
                    raise UpstreamError(f"{label}: credential refused: {message}", status=exc.upstream_status) from None
                if exc.upstream_status == 503 and self._warming(message) and deadline - time.monotonic() > pause:
                    await asyncio.sleep(pause)  # the endpoint is scaling up: wait it out, within the budget
                    pause = min(pause * 2, 5.0)
                    continue
                if exc.upstream_status == 503 and "paused" in message.lower():
                    self.probe_state = "paused"
                self.last_error = message
                raise UpstreamError(message, status=exc.upstream_status) from None
            self.last_error = None
            if self.probe_state in ("cold", "paused"):
                self.probe_state = "eligible"
            return opened

    def _warming(self, message: str) -> bool:
        text = message.lower()
        if "paused" in text or "failed" in text:
            return False
        if self.traits.warms_on_503 or self.probe_state in ("cold", "starting"):
            return True
        starting = self.reported is not None and self.reported.state in (State.COLD, State.STARTING)
        return starting or any(
            word in text for word in WARMING_WORDS)

    async def aclose(self) -> None:
        await self._client.aclose()
        await self._streams.aclose()
        if self._splice is not None:
            await self._splice.aclose()
