"""``attach_jobs(node, hf, manager)``: batch windows (Hugging Face Jobs) on a sponsor with rented nodes.

The controller (jobs_lifecycle.py) is the window provider's: the rented nodes' one loop starts, ticks
and stops it; reconcile by label runs at the node's start, and the manager's hooks are jobs_hooks.py. The operations are kept in
the rented manager's provider registry under ``WINDOW_OPS`` (providers.py), where the service API finds them (``RentedApi.window_*``, routes in
``app.services.hf.routes_jobs``)."""

from __future__ import annotations

from typing import TYPE_CHECKING

from app.services.hf.jobs_hooks import JobHooks
from app.services.hf.jobs_lifecycle import JobLifecycle
from app.services.hf.jobs_ops import HfJobs
from app.services.hf.jobs_records import FILE_NAME, JobRecords
from app.services.hf.providers import WINDOW_OPS, JobProvider
from app.services.hf.service import HfService
from app.services.rented.manager import RentedManager

if TYPE_CHECKING:
    from app.services.node import Node


def attach_jobs(node: Node, hf: HfService, manager: RentedManager) -> HfJobs:
    lifecycle = JobLifecycle(hf, manager, JobRecords(node.home.root / FILE_NAME), node.bus)
    JobHooks(lifecycle)
    ops = HfJobs(lifecycle)
    manager.providers.register(JobProvider(ops))
    node.start_hooks.append(lifecycle.reconcile)
    manager.providers.put(WINDOW_OPS, ops)
    return ops
