"""``attach_jobs(node, hf, manager)``: batch windows (Hugging Face Jobs) on a sponsor with rented nodes.

Wires the controller (jobs_lifecycle.py) into the node's start (after the rented manager's, then
reconcile by label) and stop, and the manager's hooks (jobs_hooks.py). The operations are kept in
``node.hf_jobs``, where the service API finds them (``RentedApi.window_*``, routes in
``app.services.hf.routes_jobs``)."""

from __future__ import annotations

from typing import TYPE_CHECKING

from app.services.hf.jobs_hooks import JobHooks
from app.services.hf.jobs_lifecycle import JobLifecycle
from app.services.hf.jobs_ops import HfJobs
from app.services.hf.jobs_records import FILE_NAME, JobRecords
from app.services.hf.providers import JobProvider
from app.services.hf.service import HfService
from app.services.rented.manager import RentedManager

if TYPE_CHECKING:
    from app.services.node import Node


def attach_jobs(node: Node, hf: HfService, manager: RentedManager) -> HfJobs:
    lifecycle = JobLifecycle(hf, manager, JobRecords(node.home.root / FILE_NAME), node.bus)
    JobHooks(lifecycle)
    ops = HfJobs(lifecycle)
    manager.providers.register(JobProvider(ops))
    node.start_hooks.append(lifecycle.start)
    node.start_hooks.append(lifecycle.reconcile)
    node.stop_last.append(lifecycle.stop)
    node.hf_jobs = ops
    return ops
