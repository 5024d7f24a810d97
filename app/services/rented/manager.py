"""``RentedManager``: the sponsor's rented nodes — declarations, credentials, live upstreams.

Public API (all names by rented-node name):

- ``await attach(data, token) -> dict``: validate (URL rules, fields), resolve an endpoint
  declared by ``endpoint`` (through ``hooks.resolvers``), probe it, refuse if it rejects the
  credential, then store the token in the keyring (``rented:<name>`` under the sponsor's
  namespace) and the declaration in ``rented.json``. Returns ``show(name)``.
- ``await apply(items, token) -> list[dict]``: attach new declarations, replace existing ones.
- ``await set(name, change, token=None) -> dict``: a ``change.RentedChange`` (spelt as the declaration
  nests it), applied whole or refused whole; a new token replaces the stored one.
- ``await merge(name, data, token=None) -> dict``: a provider's own update of its node (a new batch
  window's URL and price), nested declaration keys merged in.
- ``await detach(name, force=False)``: forget the node and delete its token from the keyring (the
  ``before_detach`` hooks first: a provider may pause a billing endpoint, or refuse without ``force``).
- ``list() -> list[dict]``, ``show(name) -> dict``: local rows (URL included; never the token).
- ``get(name) -> RentedUpstream`` and ``nodes``: the live nodes, whose state fields a lifecycle
  controller drives (``set_state_word``, ``block_reason``); ``changed(reason)`` tells everyone.
- ``shared_facts() -> list[dict]``: what peers may see (no URL, no token).
- ``node_rows() -> list[dict]``: rows for ``pairwise nodes`` on this node.
- ``hooks``: ``LifecycleHooks`` (before_route, on_workload_finished, on_budget_reached,
  on_sponsor_exit, before_detach, on_detach, resolvers, account_keys); ``meter``: the ``CostMeter``, whose
  day and month totals belong to the endpoint's spend account (``account_of(decl)``), not to the name;
  ``tokens``: the ``TokenProvider`` every node reads its token from when it sends a request.
- ``await start()``, ``await stop()``, ``await on_sponsor_exit()``.
"""

from __future__ import annotations

import asyncio
import builtins
import logging
import time
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from app.environment import environment
from app.services.errors import ConfigError, CredentialError, NotFound, PairwiseError, RefusedError
from app.services.events import (
    BudgetPaused,
    Event,
    EventBus,
    NodeChanged,
    Notice,
    OffLanPrompt,
    PausingOnExit,
    WorkloadFinished,
    WorkloadRunning,
    WorkloadUpdated,
)
from app.services.guard import FailureNotices
from app.services.jobs.records import Workload
from app.services.jobs.requester import requester_text
from app.services.jobs.store import JobStore
from app.services.node_ids import rented_node_id
from app.services.outbound import ca_files, outbound_ssl_context
from app.services.rented.credentials import TokenProvider
from app.services.rented.decl import RentedDecl, apply_changes, validate_decl
from app.services.rented.facts import local_row, shared_fact
from app.services.rented.hooks import LifecycleHooks
from app.services.rented.meter import CostMeter, Period
from app.services.rented.probe import PUBLIC_WARNING
from app.services.rented.provider import ProviderRegistry
from app.services.rented.spend import ACCOUNT_PREFIX, REPAIR_HINT, SpendRepair, url_identity
from app.services.rented.store import RentedStore, secret_key
from app.services.rented.upstream import RentedUpstream
from app.services.routing.registry import UpstreamRegistry
from app.services.secrets import SecretStore

if TYPE_CHECKING:
    from app.services.api.rows import RentedFact, RentedRow
    from app.services.rented.change import RentedChange

log = logging.getLogger(__name__)
def refresh_every_s() -> float:
    return environment().seconds("PAIRWISE_RENTED_REFRESH_S", 30.0)
START_PROBE_WAIT_S = 5.0
# Fields whose change needs a new HTTP client or a new probe.
_CONNECTION_FIELDS = ("url", "ca_file", "provider")


class RentedManager:
    def __init__(self, *, store: RentedStore, secrets: SecretStore, registry: UpstreamRegistry, bus: EventBus,
                 sponsor_name: str, sponsor_id: str, extra_ca: tuple[str, ...] = (), meter: CostMeter | None = None,
                 jobs: JobStore | None = None, replicators: list[Callable[[Workload], None]] | None = None) -> None:
        self.store, self.secrets, self.registry, self.bus = store, secrets, registry, bus
        self.sponsor_name, self.sponsor_id, self.extra_ca = sponsor_name, sponsor_id, extra_ca
        self.meter = meter or CostMeter()
        self.jobs = jobs
        self.replicators = replicators if replicators is not None else []
        self.hooks = LifecycleHooks()
        # Providers by the declaration's provider string (provider.py); features register theirs at attach.
        self.providers = ProviderRegistry()
        self.hooks.began = self._began
        self.hooks.abandoned = self._abandoned
        self.hooks.tell = FailureNotices(bus.publish, sponsor_name)
        self.exiting = False  # set when the sponsor stops: no wake-on-request any more
        # Every node reads its token here when it sends; a node without a token of its own borrows
        # one from the fallbacks (a provider's signed-in account, registered by its feature).
        self.tokens = TokenProvider(secrets)
        self.fallback_tokens = self.tokens.fallbacks
        self.nodes: dict[str, RentedUpstream] = {}
        self._task: asyncio.Task[None] | None = None
        self._pending: set[asyncio.Future[Any]] = set()
        # A cap reached on a node whose controller pauses it: told once the provider confirms (hooks).
        self._unconfirmed: dict[str, BudgetPaused] = {}
        self._account_told: str | None = None  # the spend-account problem last told
        self._estimated: set[str] = set()  # per-token nodes whose usage had to be estimated (told once)
        self._unsubscribe = bus.on(self._on_event)

    # -- lifecycle -------------------------------------------------------------------------------------------

    async def start(self) -> None:
        for decl in self.store.load(self.providers):
            token = self.secrets.get(secret_key(decl.name)) if decl.has_credential else None
            try:
                decl = await self._resolve(decl, token)
            except PairwiseError as exc:  # one declaration its provider cannot resolve now must not keep the node down
                log.warning("rented node %s not resolved: %s", decl.name, exc.message)
            self._install(self._make(decl))
        # Probe before the front door opens, but never hold the node's start for a slow endpoint.
        first = asyncio.ensure_future(self.refresh_all())
        self.track(first)
        await asyncio.wait({first}, timeout=START_PROBE_WAIT_S)
        self._task = asyncio.create_task(self._refresh_loop(), name="rented-refresh")

    async def stop(self) -> None:
        if self._task:
            self._task.cancel()
        self._unsubscribe()
        self.meter.flush()
        for node in self.nodes.values():
            await node.aclose()

    async def on_sponsor_exit(self) -> None:
        # From here on nothing wakes a rented node (a request still in the door must not resume
        # what we are pausing), and every node is paused at once, so one slow pause does not eat
        # the time of the others.
        self.exiting = True
        pausing = [node for node in self.nodes.values()
                   if node.decl.lifecycle.pause_on_sponsor_exit and node.decl.lifecycle.managed]
        for node in pausing:
            self.bus.publish(PausingOnExit(node=node.name))
        await asyncio.gather(*(self.hooks.run_each(self.hooks.on_sponsor_exit, node, "on_sponsor_exit")
                               for node in pausing), return_exceptions=True)

    async def _refresh_loop(self) -> None:
        while True:
            await asyncio.sleep(refresh_every_s())
            await self.refresh_all()

    async def refresh_all(self) -> None:
        before = [shared_fact(n) for n in self.nodes.values()]
        await asyncio.gather(*(n.probe() for n in list(self.nodes.values())), return_exceptions=True)
        for node in list(self.nodes.values()):
            self.check_budget(node)
        if before != [shared_fact(n) for n in self.nodes.values()]:
            self.changed("rented nodes refreshed")

    def changed(self, reason: str) -> None:
        self.bus.publish(NodeChanged(node=self.sponsor_name, reason=reason))

    def recheck(self) -> None:
        """Ask every provider about its nodes now (the machine woke from sleep: what they say may have changed)."""
        for hook in list(self.hooks.on_recheck):
            hook()

    # -- declarations ----------------------------------------------------------------------------------------

    def get(self, name: str) -> RentedUpstream:
        node = self.nodes.get(name)
        if node is None:
            raise NotFound(f"no rented node named {name!r}")
        return node

    def _make(self, decl: RentedDecl, token: str | None = None) -> RentedUpstream:
        """A node reading its token from ``tokens`` at send time; ``token``: one not yet in the keyring,
        used until ``_keep_token`` stores it (a refused token is never stored). A provider nobody
        registered is refused by name."""
        provider = self.providers.of(decl.provider)
        node = RentedUpstream(decl, sponsor_name=self.sponsor_name, sponsor_id=self.sponsor_id, token=token,
                              extra_ca=self.extra_ca, hooks=self.hooks, traits=provider.traits,
                              provider_name=provider.display_name)
        if not token:
            node.set_token(self.tokens.source(lambda: node.decl))
        self._bind(node)
        return node

    def _keep_token(self, node: RentedUpstream, token: str) -> None:
        self.secrets.set(secret_key(node.name), token)
        self.tokens.invalidate(node.name)
        node.set_token(self.tokens.source(lambda: node.decl))

    def account_of(self, decl: RentedDecl) -> str:
        """The spend account of what ``decl`` rents: the provider's identity of it (``account_keys``
        hooks, e.g. a managed endpoint's namespace/name), else its URL's, else the rented node's own identity
        (also for a provider whose URL is new each time, ``WireTraits.url_is_identity`` False)."""
        for key in self.hooks.account_keys:
            found = key(decl)
            if found:
                return found
        traits = self.providers.of(decl.provider).traits if self.providers.known(decl.provider) else None
        if decl.url and (traits is None or traits.url_is_identity):
            return url_identity(decl.url)
        return f"rented-node:{rented_node_id(self.sponsor_id, decl.name)}"

    def _bind(self, node: RentedUpstream) -> None:
        self.meter.bind(node.name, self.account_of(node.decl))
        self.meter.set_price(node.name, node.price_per_hour)

    def _install(self, node: RentedUpstream) -> None:
        self.nodes[node.name] = node
        self.registry.add(node)

    async def _resolve(self, decl: RentedDecl, token: str | None) -> RentedDecl:
        if decl.url or not decl.endpoint:
            return decl
        if not self.hooks.resolvers:
            raise ConfigError(f"rented node {decl.name}: finding the URL of endpoint {decl.endpoint} needs the "
                              "provider's resolver, and none is attached; give --url instead")
        for resolver in self.hooks.resolvers:
            decl = await resolver(decl, token)
        return validate_decl(decl.model_dump(mode="json"), self.providers)

    def _check_ca(self, decl: RentedDecl) -> None:
        outbound_ssl_context(ca_files(*self.extra_ca, decl.ca_file))  # raises ConfigError naming the file

    def _save(self) -> None:
        self.store.save([n.decl for n in self.nodes.values()])

    def keep_declarations(self) -> None:
        """Save the declarations after a controller updated one in place (e.g. the hardware its provider reports)."""
        self._save()

    async def attach(self, data: dict[str, Any], token: str | None) -> RentedRow:
        decl = validate_decl({**data, "has_credential": bool(token)}, self.providers)
        if decl.name in self.nodes:
            raise ConfigError(f"a rented node named {decl.name!r} is already attached; change it with "
                              f"'pairwise rented set {decl.name}' or detach it first")
        self._check_ca(decl)
        decl = await self._resolve(decl, token)
        node = self._make(decl, token)
        result = await node.probe()
        if result.tls_error:
            await node.aclose()
            raise RefusedError(f"refused to attach {decl.name}: rule 'https is verified': {result.error}; add the "
                               "certificate's CA with --ca-file (or the node's ca_file / PAIRWISE_CA_FILE)")
        if result.credential_error:
            await node.aclose()
            hint = "the token given" if token else "no token (give one with --token-stdin)"
            raise CredentialError(f"refused to attach {decl.name}: the endpoint refused {hint}: "
                                  f"{result.credential_error}", title="Credential refused")
        if token:
            self._keep_token(node, token)
        self._install(node)
        self._save()
        self._announce(node, "attached")
        return self.show(decl.name)

    async def apply(self, items: list[dict[str, Any]], token: str | None) -> list[RentedRow]:
        out: list[RentedRow] = []
        for data in items:
            name = data.get("name")
            if isinstance(name, str) and name in self.nodes:
                out.append(await self._replace(name, data, token))
            else:
                out.append(await self.attach(data, token))
        return out

    async def _replace(self, name: str, data: dict[str, Any], token: str | None) -> RentedRow:
        old = self.get(name)
        decl = validate_decl({**data, "has_credential": bool(token) or old.decl.has_credential}, self.providers)
        return await self._update(old, decl, token)

    async def set(self, name: str, change: RentedChange, token: str | None = None) -> RentedRow:
        old = self.get(name)
        data = change.merged(old.decl.model_dump(mode="json"))
        decl = validate_decl({**data, "has_credential": bool(token) or old.decl.has_credential}, self.providers)
        return await self._update(old, decl, token)

    async def merge(self, name: str, data: dict[str, Any], token: str | None = None) -> RentedRow:
        old = self.get(name)
        if data.get("name", name) != name:
            raise ConfigError("a rented node cannot be renamed; detach it and attach it again")
        decl = apply_changes(old.decl, {**data, "has_credential": bool(token) or old.decl.has_credential},
                             self.providers)
        return await self._update(old, decl, token)

    async def _update(self, old: RentedUpstream, decl: RentedDecl, token: str | None) -> RentedRow:
        self._check_ca(decl)
        reconnect = token is not None or any(getattr(decl, f) != getattr(old.decl, f) for f in _CONNECTION_FIELDS)
        if decl.endpoint != old.decl.endpoint or (decl.endpoint and not decl.url):
            decl = await self._resolve(decl, token or (self.secrets.get(secret_key(decl.name))
                                                        if decl.has_credential else None))
        if reconnect:
            node = self._make(decl, token)
            node.state_word, node.state_message, node.block_reason = old.state_word, old.state_message, old.block_reason
            node.provider_price, node.price_reason = old.provider_price, old.price_reason
            result = await node.probe()
            if result.credential_error:
                await node.aclose()
                raise CredentialError(f"refused to change {decl.name}: the endpoint refused the credential: "
                                      f"{result.credential_error}", title="Credential refused")
            if token:
                self._keep_token(node, token)
            self.registry.remove(old.key)
            await old.aclose()
            self._install(node)
        else:
            old.update_decl(decl)
            self._bind(old)
            node = old
        self.check_budget(node)
        self._save()
        self._announce(node, "changed")
        return self.show(decl.name)

    async def detach(self, name: str, *, force: bool = False) -> None:
        node = self.get(name)
        for guard in list(self.hooks.before_detach):
            await guard(node, force)  # may pause a billing endpoint first, or refuse
        await self.hooks.run_each(self.hooks.on_detach, node, "on_detach")
        self.nodes.pop(name)
        self.registry.remove(node.key)
        await node.aclose()
        if node.decl.has_credential:  # a node without a token never touches the keyring
            self.secrets.delete(secret_key(name))
        self.tokens.invalidate(name)
        self.meter.forget(name)  # the endpoint's spend account stays: a re-attach continues it
        self._save()
        self.changed(f"rented node {name} detached")

    def _announce(self, node: RentedUpstream, what: str) -> None:
        self.changed(f"rented node {node.name} {what}")
        if node.public:
            self.bus.publish(Notice(title=f"{node.name} is open to anyone",
                                    message=f"Rented node {node.name} {PUBLIC_WARNING}.", level="warning",
                                    node=node.name))

    # -- views -----------------------------------------------------------------------------------------------

    def show(self, name: str) -> RentedRow:
        node = self.get(name)
        row = local_row(node, self.meter.totals(name))
        for extra in self.hooks.row_extras:
            row.update(extra(node))
        return row

    def list(self) -> builtins.list[RentedRow]:
        return [self.show(name) for name in sorted(self.nodes)]

    def shared_facts(self) -> builtins.list[RentedFact]:
        return [shared_fact(self.nodes[name]) for name in sorted(self.nodes)]

    def node_rows(self) -> builtins.list[RentedFact]:
        return self.shared_facts()

    # -- cost, budget and off-LAN notices --------------------------------------------------------------------

    def _began(self, node: RentedUpstream, job_id: str) -> None:
        self.meter.begin(node.name, job_id, node.price_per_hour)

    def _abandoned(self, node: RentedUpstream, job_id: str) -> None:
        self.meter.end(job_id)
        self.check_budget(node)

    def _on_event(self, event: Event) -> None:
        if isinstance(event, WorkloadRunning):
            job = event.job
            if job.get("off_lan") and job.get("origin_node_id") == self.sponsor_id:
                self.bus.publish(OffLanPrompt(job_id=str(job.get("id")), model=str(job.get("model")),
                                              rented_node=str(job.get("rented_node")),
                                              requester=requester_text(job),
                                              serving_node=job.get("serving_node"), origin_node=job.get("origin_node")))
            return
        if not isinstance(event, WorkloadFinished):
            return
        job = event.job
        node = self.nodes.get(job.get("rented_node") or "")
        if node is None or job.get("serving_node_id") != node.node_id:
            return
        cost = self.meter.end(str(job.get("id")), self._token_cost(node, job))
        # After the tracker has stored and replicated the finished record, add its cost.
        asyncio.get_running_loop().call_soon(self._record_cost, str(job.get("id")), cost, node)

    def _token_cost(self, node: RentedUpstream, job: dict[str, Any]) -> float | None:
        """A per-token node's workload: its reported usage (estimated when none was reported) times the
        prices per token; None for an hourly node."""
        sent = node.sent_estimate(str(job.get("id")))
        if not node.per_token or sent is None:
            return None
        model, (guess_in, guess_out) = sent
        price = node.token_price(model)
        if price is None:
            return None  # eligible only without a cap (status): nothing to hold it to
        prompt, completion = job.get("prompt_tokens"), job.get("completion_tokens")
        if isinstance(prompt, int) and isinstance(completion, int):
            return price.cost(prompt, completion)
        cost = price.cost(prompt if isinstance(prompt, int) else guess_in,
                          completion if isinstance(completion, int) else guess_out)
        log.warning("rented node %s: the answer reported no usage; charged an estimate of $%.6f (%d prompt and %d "
                    "answer tokens at %s)", node.name, cost, guess_in, guess_out, price.text())
        if node.name not in self._estimated:
            self._estimated.add(node.name)
            self.bus.publish(Notice(title=f"{node.name}: usage estimated", level="warning", node=node.name,
                                    message=f"{node.name} answered without reporting its token usage, so its cost is "
                                            f"an estimate ({price.text()}); caps count the estimate."))
        return cost

    def _record_cost(self, job_id: str, cost: float | None, node: RentedUpstream) -> None:
        record: dict[str, Any] = {"id": job_id}
        if self.jobs is not None:
            job = self.jobs.get(job_id)
            if job is not None:
                job.cost_usd = cost
                self.jobs.save(job)
                record = job.to_json()
                self.bus.publish(WorkloadUpdated(job=record))
                for replicate in list(self.replicators):
                    replicate(job)
        self.hooks.workload_finished(node, record)
        self.check_budget(node)

    def charge(self, name: str, usd: float) -> None:
        """For a lifecycle controller: billed time (e.g. idle running minutes) for a node."""
        self.meter.charge(name, usd)
        self.check_budget(self.get(name))

    def check_budget(self, node: RentedUpstream) -> None:
        if self._check_account(node):
            return
        budget = node.decl.budget
        reason, reached = None, None
        caps: tuple[tuple[Period, float | None], ...] = (("day", budget.usd_per_day), ("month", budget.usd_per_month))
        for period, cap in caps:
            if cap is None:
                continue  # no cap for this period: its spend (a read of the account per answer) decides nothing
            spent = self.meter.spent(node.name, period)
            if spent >= cap:
                reason = f"budget reached: ${spent:.2f} of ${cap:.2f} per {period} (UTC)"
                reached = (spent, cap, period)
                break
        was = node.budget_reason
        node.budget_reason = reason
        if reason and reached and not was:
            log.info("rented node %s: %s", node.name, reason)
            # The one event of this fact: the lifecycle's pause that follows tells nothing more.
            provider_pause = node.decl.lifecycle.managed and bool(self.hooks.on_budget_reached)
            event = BudgetPaused(node=node.name, reason=reason, spent_usd=round(reached[0], 4),
                                 cap_usd=reached[1], period=reached[2], provider_pause=provider_pause)
            if provider_pause and any(confirms(node) for confirms in self.hooks.confirms_pause):
                self._unconfirmed[node.name] = event  # the controller tells "paused" once the provider says so
            else:
                self.bus.publish(event)
            self.changed(f"rented node {node.name} {reason}")
            task = asyncio.ensure_future(self.hooks.budget_reached(node, reason))
            self.track(task)
        elif was and not reason:
            self._unconfirmed.pop(node.name, None)
            self.changed(f"rented node {node.name} budget available again")

    def track(self, task: asyncio.Future[Any]) -> None:
        """Keep a controller's step (a pause) alive until it ends; stop cancels what is left."""
        self._pending.add(task)
        task.add_done_callback(self._pending.discard)

    def _check_account(self, node: RentedUpstream) -> bool:
        """A spend account that cannot be trusted never reads as zero: every rented node is ineligible
        and every managed endpoint is paused (the budget hooks), naming the file and the way out."""
        problem = self.meter.problem
        if problem is None:
            return False
        reason = f"{ACCOUNT_PREFIX}{problem}; {REPAIR_HINT}"
        was, node.budget_reason = node.budget_reason, reason
        if was == reason:
            return True
        self._unconfirmed.pop(node.name, None)
        if self._account_told != problem:
            self._account_told = problem
            self.bus.publish(Notice(title="Spend account unusable", level="error",
                                    message=f"{problem}. Rented nodes are not used and managed endpoints are paused "
                                            f"until it is repaired: {REPAIR_HINT}."))
        log.error("rented node %s: %s", node.name, reason)
        self.changed(f"rented node {node.name}: spend account unusable")
        task = asyncio.ensure_future(self.hooks.budget_reached(node, reason))
        self.track(task)
        return True

    def repair_spend(self, accept_usd: float | None = None, name: str | None = None) -> SpendRepair:
        """Start a new spend account (the damaged file moved aside): each account of this sponsor's rented
        nodes (or of ``name``) at ``accept_usd`` today if given, else at the most its job records and
        the last figures read show. Caps are checked again at once."""
        if accept_usd is not None and accept_usd < 0:
            raise ConfigError("--accept-usd must be zero or more")
        nodes = [self.get(name)] if name else list(self.nodes.values())
        last = self.meter.book.accounts()
        figures: dict[str, float] = {}
        for node in nodes:
            account = self.meter.account(node.name)
            if accept_usd is not None:
                figures[account] = accept_usd
                continue
            row = last.get(account, {})
            known = max(float(row.get("day_billed") or 0.0), float(row.get("day_workloads") or 0.0))
            figures[account] = max(figures.get(account, 0.0), known, self._recorded_today(node))
        problem = self.meter.problem
        moved = self.meter.book.repair(figures)
        self._account_told = None
        log.warning("spend account repaired (%s): %s", problem or "it was usable", figures)
        self.bus.publish(Notice(title="Spend account repaired", level="warning",
                                message=f"A new spend account was started at {self.meter.book.path}"
                                        + (f" (the old one kept as {moved})" if moved else "") + ": "
                                        + ", ".join(f"{k} ${v:.4f} today" for k, v in figures.items())))
        for node in self.nodes.values():
            if node.budget_reason and node.budget_reason.startswith(ACCOUNT_PREFIX):
                node.budget_reason = None
            self.check_budget(node)
        self.changed("spend account repaired")
        return {"file": str(self.meter.book.path), "moved_to": str(moved) if moved else None,
                "problem": problem, "accounts": figures, "accepted": accept_usd is not None}

    def _recorded_today(self, node: RentedUpstream) -> float:
        """What this sponsor's job records say the node's workloads cost since the UTC day began."""
        if self.jobs is None:
            return 0.0
        midnight = time.time() - time.time() % 86400
        return sum(job.cost_usd or 0.0 for job in self.jobs.charged_since(midnight) if job.rented_node == node.name)

    def budget_pause_confirmed(self, name: str) -> BudgetPaused | None:
        """The provider confirms the pause a cap asked for: the node's ``BudgetPaused``, to publish once."""
        return self._unconfirmed.pop(name, None)
