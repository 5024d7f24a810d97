"""Node settings: what the user chose, kept apart from runtime state.

Stored as JSON in the node's home. Credentials are never part of these models:
a declaration only says whether a credential exists; the secret itself lives in
the OS keyring (see ``app.services.secrets``).
"""

from __future__ import annotations

import json
import re
import socket
import unicodedata
from collections.abc import Callable
from pathlib import Path
from typing import Any, Literal
from urllib.parse import parse_qsl, urlsplit

from pydantic import BaseModel, ConfigDict, Field, field_validator

from app.environment import Environment, environment
from app.home import save_private
from app.services.errors import ConfigError

ApiKind = Literal["ollama", "openai"]
# How this node routes to a peer's shared rented node: this node's choice, never the sponsor's.
PeerRentedPolicy = Literal["prefer", "overflow", "when-no-local-node", "never"]
PEER_RENTED_POLICIES: tuple[PeerRentedPolicy, ...] = ("prefer", "overflow", "when-no-local-node", "never")
DEFAULT_PEER_RENTED_POLICY: PeerRentedPolicy = "when-no-local-node"

DEFAULT_LISTEN = "127.0.0.1:11434"
DEFAULT_CLUSTER_LISTEN = "0.0.0.0:14330"


class _Model(BaseModel):
    # Unknown keys are ignored so an older node can read a newer file.
    model_config = ConfigDict(extra="ignore")


class EngineDecl(_Model):
    name: str
    url: str
    api: ApiKind
    first_byte_timeout_s: float = Field(default=120.0, gt=0)
    idle_timeout_s: float = Field(default=20.0, gt=0)  # between chunks, once a stream has started
    capacity: int = Field(default=4, ge=1)
    has_credential: bool = False
    # The context window the engine serves, in tokens, when it does not say (``--context-window``).
    context_window: int | None = Field(default=None, ge=1)

    @field_validator("name")
    @classmethod
    def _name_ok(cls, value: str) -> str:
        if not value or any(c in value for c in " /\\:") or len(value) > 64:
            raise ValueError("engine name must be 1-64 characters without spaces, slashes or colons")
        return value

    @field_validator("url")
    @classmethod
    def _url_ok(cls, value: str) -> str:
        check_engine_url(value)
        # The base URL as OpenAI's SDK and most tools write it ends in /v1; request paths
        # (/v1/models, /api/tags) are appended to the server's root, as for rented nodes.
        return value.rstrip("/").removesuffix("/v1")


# Query parameters that carry a credential (any spelling: apiKey, api-key, X_API_KEY ...).
_CREDENTIAL_PARAM = re.compile(r"(?i)(key|token|secret|passw|auth|sig|credential|session)")


def check_engine_url(value: str) -> None:
    """Refuse, naming why, an engine URL that is not a plain http(s) base URL: control characters
    or whitespace (they would reach a request line), no host, a port outside 1-65535, a user name or
    password, a query or fragment (a credential there would be stored in settings.json and printed
    by ``engines list``; the credential goes to the keyring with --token-stdin)."""
    bad = next((c for c in value if c.isspace() or unicodedata.category(c) in ("Cc", "Cf")), None)
    if bad is not None:
        raise ValueError(f"engine URL must not contain whitespace or control characters (found {bad!r})")
    parts = urlsplit(value)
    if parts.scheme not in ("http", "https") or not parts.hostname:
        raise ValueError("engine URL must be http:// or https:// with a host")
    try:
        port = parts.port
    except ValueError:
        raise ValueError("engine URL's port must be a number from 1 to 65535") from None
    if port is not None and not 0 < port < 65536 or parts.netloc.endswith(":0"):
        raise ValueError("engine URL's port must be a number from 1 to 65535")
    if parts.username is not None or parts.password is not None:
        # settings.json is not a credential store, and `engines list` prints URLs.
        raise ValueError("engine URL must not carry a user name or password; give the engine's "
                         "credential with --token-stdin (it is kept in the OS keyring)")
    if parts.query or parts.fragment:
        names = [name for name, _ in parse_qsl(parts.query, keep_blank_values=True)]
        if any(_CREDENTIAL_PARAM.search(name) for name in names) or (parts.query and not names):
            raise ValueError("engine URL must not carry a credential in its query (it would be stored in "
                             "settings.json); give it with --token-stdin (it is kept in the OS keyring)")
        raise ValueError("engine URL must be a base URL without a query or fragment")


class HuggingFaceUrls(_Model):
    endpoints: str = "https://api.endpoints.huggingface.cloud/v2"
    hub: str = "https://huggingface.co"
    catalog: str = "https://endpoints.huggingface.co/api/catalog"
    router: str = "https://router.huggingface.co/v1"


# settings.hf field -> the variable that overrides it for the running node (environment.py)
HF_URL_VARIABLES = {
    "endpoints": "PAIRWISE_HF_ENDPOINTS_URL",
    "hub": "PAIRWISE_HF_HUB_URL",
    "catalog": "PAIRWISE_HF_CATALOG_URL",
    "router": "PAIRWISE_HF_ROUTER_URL",
}


class NodeSettings(_Model):
    name: str = Field(default_factory=socket.gethostname)
    listen: str = DEFAULT_LISTEN
    cluster_listen: str = DEFAULT_CLUSTER_LISTEN
    mdns: bool = True
    off_lan: Literal["allow", "deny"] = "allow"
    lan_listen: str | None = None  # the LAN door's HOST:PORT (HTTPS, keys required); None = off
    ca_file: str | None = None
    max_body_bytes: int = 8 * 1024 * 1024
    engines: list[EngineDecl] = Field(default_factory=list)
    # Names the user said are one model (``pairwise models same``): each list is one model's names.
    model_names: list[list[str]] = Field(default_factory=list)
    model_names_before: list[list[str]] | None = None  # the groups before the last change (``models undo``)
    # A peer's rented node id -> the policy this node routes to it under (default when-no-local-node:
    # a peer's claim, "prefer" or any other, never puts its rented GPU ahead of this node's own capacity).
    peer_rented: dict[str, PeerRentedPolicy] = Field(default_factory=dict)
    hf: HuggingFaceUrls = Field(default_factory=HuggingFaceUrls)
    # Set by ``pairwise demo`` in its own home: the tray then says it is the demo and how to leave it,
    # instead of offering to start the demo beside itself.
    demo: bool = False

    def engine(self, name: str) -> EngineDecl | None:
        return next((e for e in self.engines if e.name == name), None)

    def peer_rented_policy(self, node_id: str) -> PeerRentedPolicy:
        return self.peer_rented.get(node_id, DEFAULT_PEER_RENTED_POLICY)


def parse_host_port(value: str, *, default_port: int | None = None) -> tuple[str, int]:
    host, sep, port = value.rpartition(":")
    if not sep:
        if default_port is None:
            raise ConfigError(f"{value!r} is not HOST:PORT")
        return value, default_port
    try:
        return host.strip("[]"), int(port)
    except ValueError as exc:
        raise ConfigError(f"{value!r} is not HOST:PORT (port must be a number)") from exc


# A field the environment overrode: (path, value from the environment, value the user set).
Override = tuple[tuple[str, ...], Any, Any]


class SettingsStore:
    """Loads and saves NodeSettings.

    The environment overrides a few fields for the running node only: ``load`` remembers what
    the user had set under each override, and ``save`` writes that back, never the override
    (a node started once with PAIRWISE_HF_*_URL must not keep using those URLs without it)."""

    def __init__(self, path: Path, env: Environment | None = None) -> None:
        self.path = path
        self.env = env
        self.overrides: list[Override] = []

    def load(self) -> NodeSettings:
        if self.path.exists():
            try:
                settings = NodeSettings.model_validate_json(self.path.read_text(encoding="utf-8"))
            except ValueError as exc:
                raise ConfigError(f"{self.path} is not valid settings: {exc}") from exc
        else:
            settings = NodeSettings()
        self.overrides = apply_environment(settings, self.env or environment())
        return settings

    def change(self, settings: NodeSettings, mutate: Callable[[NodeSettings], None], what: str) -> None:
        """Make a change saved first, then applied: ``mutate`` runs on a copy that is written
        (``NotSaved`` naming the file and why if it cannot be), and only then on ``settings``, so a
        refused change leaves the running node as it was."""
        draft = settings.model_copy(deep=True)
        mutate(draft)
        self.save(draft, what)
        mutate(settings)

    def save(self, settings: NodeSettings, what: str = "the settings change") -> None:
        data = settings.model_dump(mode="json")
        for path, from_env, user_value in self.overrides:
            holder = data
            for key in path[:-1]:
                holder = holder[key]
            # Changed since start (the user set it in the running node): that is the user's now.
            if holder.get(path[-1]) == from_env:
                holder[path[-1]] = user_value
        save_private(self.path, json.dumps(data, indent=2).encode(), what)


def apply_environment(settings: NodeSettings, env: Environment) -> list[Override]:
    """Apply the environment's overrides to ``settings``; returns what each replaced."""
    overrides: list[Override] = []

    def override(path: tuple[str, ...], value: Any) -> None:
        holder: Any = settings
        for key in path[:-1]:
            holder = getattr(holder, key)
        overrides.append((path, value, getattr(holder, path[-1])))
        setattr(holder, path[-1], value)

    if env.ca_file:
        override(("ca_file",), env.ca_file)
    if env.mdns_off:
        override(("mdns",), False)
    for name, url in env.urls(HF_URL_VARIABLES).items():
        override(("hf", name), url)
    return overrides
