"""When the cluster may use a rented node (its ``routing.use``), as the wizard's pages offer it."""

from __future__ import annotations

POLICIES = [
    ("when-no-local-node", "Only for models no machine on your LAN has"),
    ("overflow", "Also when every LAN machine with the model is busy"),
    ("prefer", "Before your LAN machines"),
    ("never", "Never (attached, not used)"),
]
