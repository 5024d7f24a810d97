"""The Hugging Face adapter: sign-in, catalog, hardware and the Inference Endpoints API over httpx.

    errors.py    HfError hierarchy, and how HF's error bodies are read
    client.py    HuggingFaceClient: every REST call, with retries and backoff
    models.py    EndpointInfo, HardwareRow, the create body
    catalog.py   catalog models and recipes (v1, legacy fallback)
    tokens.py    what a token may do per namespace
    tuning.py    timing knobs (billing minute, timeouts, polls) from the environment
    service.py   HfService: the node's account (token in the keyring) and look-ups
    routes.py    control routes under /_pairwise/v1/hf

``attach_hf(node)`` gives a node its HfService (``hf_of(node)`` finds it again).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from app.services.hf.routes import hf_routes
from app.services.hf.service import HfService

if TYPE_CHECKING:
    from app.services.node import Node

_ATTR = "hf_service"


def attach_hf(node: Node) -> HfService:
    service = HfService(node.settings.hf, node.secrets, node.bus, extra_ca=node.extra_ca)
    node.extra_control_routes.extend(hf_routes(service))
    node.stop_last.append(service.aclose)  # after pause-on-exit (stop_first), which needs the client
    setattr(node, _ATTR, service)
    return service


def hf_of(node: Node) -> HfService | None:
    service = getattr(node, _ATTR, None)
    return service if isinstance(service, HfService) else None


__all__ = ["HfService", "attach_hf", "hf_of"]
