"""The service API: every action a person can take on a node, and the snapshots to read, in one place.

Both ways into a node stand on it: the control API routes (``routes_*.py`` here: what ``pairwise``
calls over loopback) and the tray (``app/ui/facade.py``, a thin async adapter). So the rules live
once (what is valid, what a missing feature refuses, which changes are announced on the bus),
anything the tray can change the CLI can change, and rows carry the facts a view needs (rented
rows: ``billing``, ``pausable``, ``resumable``; jobs: ``requester_text``) so no view copies a
service's state sets.

    NodeApi                 status, nodes, jobs, engines, settings (off-LAN), events, stop
    NodeApi.rented          RentedApi: rented nodes (attach, set, detach, probe), the actions their
                            provider offers (pause / resume / stop / delete), and a provider's plan /
                            create, batch windows
    NodeApi.part(cls)       a provider's own part (its account, look-ups and routes), registered from
                            its folder (parts.py)
    NodeApi.cluster         ClusterApi: pairing, peers
    NodeApi.keys            KeysApi: named keys, the LAN door, spend by requester
    NodeApi.first_run       FirstRunApi: engines found on loopback, the front door's port, the welcome

Every method returns JSON-ready shapes (what ``--json`` prints), ``TypedDict``s of ``rows.py`` (node
and rented rows), ``snapshots.py`` (status, jobs, engines, keys, peers, pairing...) and a provider's part;
takes each change as a pydantic model of ``changes.py`` (one spelling for routes, CLI and tray); and
raises ``PairwiseError`` subclasses (``FeatureMissing`` when the node has no such feature) whose
message a person reads.
"""

from __future__ import annotations

from app.services.api.core import NodeApi
from app.services.errors import FeatureMissing
from app.services.firstrun.discover import FoundEngine
from app.services.firstrun.explain import FRONT_DOOR
from app.services.node import Node

# The types the tray names (it imports from app/services only this API, events, errors, platform).
__all__ = ["FRONT_DOOR", "FeatureMissing", "FoundEngine", "Node", "NodeApi"]
