"""The Hugging Face adapter: sign-in, catalog, hardware and the Inference Endpoints API over httpx.

    errors.py    HfError hierarchy, and how HF's error bodies are read
    client.py    HuggingFaceClient: every REST call, with retries and backoff
    models.py    EndpointInfo, HardwareRow, the create body
    catalog.py   catalog models and recipes (v1, legacy fallback)
    tokens.py    what a token may do per namespace
    tuning.py    timing knobs (billing minute, timeouts, polls) from the environment
    settings_section.py  the "hf" section of settings.json (its API bases), registered with app.settings
    provider_plugin.py   what the composition root finds: attach, register_api (bootstrap.py)
    service.py   HfService: the node's account (token in the keyring) and look-ups
    records.py   hf_endpoints.json: each watched endpoint as recorded (drift baseline, last activity)
    billing.py   billed minutes from observed states
    watch.py     one watched endpoint
    pricing.py   HF's current price of an endpoint's compute (the provider list, cached)
    lifecycle.py HfLifecycle: state polling, drift, price, billed minutes, the cap, idle pause, owed pauses
    hooks.py     HfHooks: wake on request, budget pause, pause on exit, detach and logout guards, reconcile
    providers.py the endpoint, the batch window and the router behind the provider seam (rented/provider.py)
    rented_ops.py HfRented: rented create / pause / resume / delete, attach by NS/NAME (resolver)
    jobs_*.py    batch windows on Hugging Face Jobs: models, records, lifecycle, hooks, ops, attach

``attach_hf(node)`` gives a node with rented nodes (attach_rented runs first) Hugging Face's three
providers, its account (HfService), the lifecycle controllers and the rented operations (plan, create,
pause, resume, delete). They are kept in the rented manager's provider registry, under the keys of
providers.py: ``node.rented.providers.get(ACCOUNT)``; the create operations under the generic offers'
keys (``ENDPOINT_OPS``, ``WINDOW_OPS``: rented/operations.py), where the service API finds them.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from app.services.hf.events import HfSignedIn, HfSignedOut
from app.services.hf.hooks import HfHooks
from app.services.hf.jobs_attach import attach_jobs
from app.services.hf.lifecycle import HfLifecycle
from app.services.hf.providers import ACCOUNT, ENDPOINT_OPS, EndpointProvider, RouterProvider
from app.services.hf.records import EndpointRecords
from app.services.hf.rented_ops import HfRented
from app.services.hf.service import HfService
from app.services.hf.settings_section import HF_URLS
from app.services.hf.tokens import TOKEN_KEY

if TYPE_CHECKING:
    from app.services.node import Node


def attach_hf(node: Node) -> HfService | None:
    """Hugging Face on a node with rented nodes (None without them: there is nothing to rent into)."""
    manager = node.rented
    if manager is None:
        return None
    service = HfService(HF_URLS.of(node.settings), node.secrets, node.bus, extra_ca=node.extra_ca)
    manager.providers.put(ACCOUNT, service)
    records = EndpointRecords(node.home.provider_file("hf_endpoints"))
    lifecycle = HfLifecycle(service, manager, records, node.bus)
    hooks = HfHooks(lifecycle)
    ops = HfRented(service, manager, lifecycle, records)
    manager.providers.put(ENDPOINT_OPS, ops)
    manager.providers.register(EndpointProvider(ops))
    manager.providers.register(RouterProvider())
    # A sign-in or sign-out changes the token every node without its own reads, at its next request.
    node.bus.on(lambda event: manager.tokens.invalidate() if isinstance(event, HfSignedIn | HfSignedOut) else None)
    manager.fallback_tokens.append(
        lambda decl: node.secrets.get(TOKEN_KEY) if decl.provider.startswith("huggingface") else None)
    node.start_hooks.append(hooks.reconcile_at_start)  # after the loop has taken the nodes in
    # Pause on exit keeps trying up to exit_give_up_s before the node stops anyway.
    node.stop_first_timeout_s = max(node.stop_first_timeout_s, service.tuning.exit_give_up_s + 5.0)
    attach_jobs(node, service, manager)  # batch windows (jobs_*.py)
    node.stop_last.append(service.aclose)  # after pause-on-exit (stop_first), which needs the client
    return service


__all__ = ["HfRented", "HfService", "attach_hf"]
