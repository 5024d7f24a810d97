"""The environment, read once: every ``PAIRWISE_*`` knob a node honours, in one place.

A node takes one snapshot of its environment at start (``environment()`` the first time it is
asked) and every module reads its knobs from that snapshot, so a variable changed later in the
process changes nothing, and there is one list of what a node reads:

PAIRWISE_HOME                 the node's home (``--home`` wins)
PAIRWISE_CA_FILE              an extra CA for HTTPS upstreams (running node only; never saved)
PAIRWISE_MDNS                 off/0/false/no turns mDNS off (running node only)
PAIRWISE_<PROVIDER>_*_URL     a provider's API bases (the simulator's, in tests and demos; running
                              node only, never saved to settings.json): the ``variables`` of its
                              settings section (``app.settings.register_section``, in its folder),
                              read with ``urls``
PAIRWISE_BILLING_MINUTE_S     and a provider's own timing knobs: see its folder's ``tuning``
PAIRWISE_PEER_POLL_S          how often a paired peer is polled (2)
PAIRWISE_PEER_SILENT_S        silence after which a peer is reported silent (60)
PAIRWISE_RENTED_REFRESH_S     how often rented nodes are refreshed (30)
PAIRWISE_RENTED_KEEPALIVE_S   how long an idle connection to a rented node is kept (55; bench.wan's short runs)
PAIRWISE_AFFINITY             off turns conversation affinity off (to measure what it saves: bench.affinity)
PAIRWISE_METRICS              off: the node counts nothing for /metrics (the bench's metrics-off side)
PAIRWISE_SPEND_DIR            where rented endpoints' spend accounts live, shared by every home of the
                              user (default: the platform's user data dir for pairwise-spend)

Overrides apply to the running node only: ``app.settings`` keeps them apart from what the user
set, and ``SettingsStore.save`` never writes them.
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from dataclasses import dataclass, field

from app.services.errors import ConfigError

PREFIX = "PAIRWISE_"


@dataclass(frozen=True)
class Environment:
    """A snapshot of the ``PAIRWISE_*`` variables, with typed readers."""

    values: Mapping[str, str] = field(default_factory=dict)

    @classmethod
    def read(cls, env: Mapping[str, str] | None = None) -> Environment:
        source = os.environ if env is None else env
        return cls({k: v for k, v in source.items() if k.startswith(PREFIX)})

    def text(self, name: str) -> str | None:
        value = self.values.get(name, "").strip()
        return value or None

    def number(self, name: str, default: float, *, minimum: float = 0.0) -> float:
        """A number knob; a value that is not a number, or is below ``minimum``, is refused."""
        raw = self.text(name)
        if raw is None:
            return default
        try:
            value = float(raw)
        except ValueError as exc:
            raise ConfigError(f"{name}={raw!r} is not a number") from exc
        if value < minimum or value != value:
            raise ConfigError(f"{name} must be at least {minimum:g}")
        return value

    def seconds(self, name: str, default: float) -> float:
        """A positive duration; anything else falls back to ``default`` (timing knobs of tests)."""
        try:
            value = float(self.text(name) or default)
        except ValueError:
            return default
        return value if value > 0 else default

    @property
    def home(self) -> str | None:
        return self.text("PAIRWISE_HOME")

    @property
    def ca_file(self) -> str | None:
        return self.text("PAIRWISE_CA_FILE")

    @property
    def affinity_off(self) -> bool:
        return (self.text("PAIRWISE_AFFINITY") or "").lower() in ("off", "0", "false", "no")

    @property
    def metrics_off(self) -> bool:
        return (self.text("PAIRWISE_METRICS") or "").lower() in ("off", "0", "false", "no")

    @property
    def splice_off(self) -> bool:
        """PAIRWISE_SPLICE=off: pass-through streams take the aiohttp path like translated ones."""
        return (self.text("PAIRWISE_SPLICE") or "").lower() in ("off", "0", "false", "no")

    @property
    def mdns_off(self) -> bool:
        return (self.text("PAIRWISE_MDNS") or "").lower() in ("off", "0", "false", "no")

    def urls(self, variables: Mapping[str, str]) -> dict[str, str]:
        """Of ``variables`` (a settings field -> its variable), the fields the environment overrides,
        and their URLs (without a trailing slash)."""
        found = {f: self.text(var) for f, var in variables.items()}
        return {f: v.rstrip("/") for f, v in found.items() if v}


_current: Environment | None = None


def environment() -> Environment:
    """The process's snapshot, taken the first time it is asked for (at start)."""
    global _current
    if _current is None:
        _current = Environment.read()
    return _current


def reread_environment() -> Environment:
    """Take the snapshot again (a test that changes the environment in-process)."""
    global _current
    _current = Environment.read()
    return _current
