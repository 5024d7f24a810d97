"""Builds a node with every feature attached (the cluster, rented nodes), filling its typed feature
fields, and gives it its front door: the composition root, the one module that names them all. The
providers are not named: each one's plugin is found in its package (``provider_plugins.py``)."""

from __future__ import annotations

import argparse

from app.environment import reread_environment
from app.home import Home, resolve_home
from app.services.api import NodeApi
from app.services.api.models import ModelsApi, models_routes
from app.services.api.routes import control_routes
from app.services.batch import attach_batch
from app.services.cluster.attach import attach_cluster
from app.services.frontdoor.server import build_frontdoor
from app.services.keys.attach import attach_requesters
from app.services.metrics import attach_metrics
from app.services.node import Node
from app.services.provider_plugins import provider_plugins
from app.services.rented import attach_rented


def build_node(home: Home, *, listen: str | None = None, cluster_listen: str | None = None,
               name: str | None = None, mdns: bool | None = None) -> Node:
    # A node's snapshot of the environment is taken when it is built, so a process that builds
    # nodes one after another (the tray's tests, the demo) gives each the environment of its time.
    reread_environment()
    plugins = provider_plugins()  # first: importing them registers their settings sections
    node = Node(home, listen=listen, cluster_listen=cluster_listen, name=name, mdns=mdns)
    node.rented = attach_rented(node)
    for plugin in plugins:  # after rented: their providers and services are kept in its registry
        plugin.attach(node)
    node.requesters = attach_requesters(node)
    node.cluster = attach_cluster(node)
    node.batches = attach_batch(node)
    node.metrics = attach_metrics(node)
    for plugin in plugins:  # each provider's part of the service API and its routes (api/parts.py)
        plugin.register_api()
    node.extra_control_routes.extend(control_routes(NodeApi(node)))  # every action, as the tray has them
    node.extra_control_routes.extend(models_routes(ModelsApi(node)))  # names and windows (`pairwise models`)
    node.frontdoor_app = lambda: build_frontdoor(node)
    return node


def make_node(args: argparse.Namespace) -> Node:
    """The node ``pairwise serve`` and the tray run, from their common options."""
    return build_node(Home(resolve_home(getattr(args, "home", None))), listen=args.listen,
                      cluster_listen=args.cluster_listen, name=args.name, mdns=False if args.no_mdns else None)
