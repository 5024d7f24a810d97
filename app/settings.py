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
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import Any, Generic, Literal, TypeVar, cast
from urllib.parse import parse_qsl, urlsplit

from pydantic import (
    BaseModel,
    ConfigDict,
    Field,
    ValidationError,
    ValidatorFunctionWrapHandler,
    field_validator,
    model_validator,
)
from pydantic_core import InitErrorDetails

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


M = TypeVar("M", bound=BaseModel, covariant=True)  # a section of one model is a section of BaseModel


class SettingsSection(Generic[M]):
    """A provider's own part of settings.json, kept under ``key`` at the file's top level and checked by
    ``model``; ``variables`` (a field -> the ``PAIRWISE_*`` variable that overrides it for the running
    node) are read with ``Environment.urls``. Made by ``register_section`` in the provider's folder, so
    this module names no provider; read with ``section.of(settings)``."""

    def __init__(self, key: str, model: type[M], variables: Mapping[str, str]) -> None:
        self.key, self.model, self.variables = key, model, dict(variables)

    def of(self, settings: NodeSettings) -> M:
        """This section of ``settings`` (checked when the file was read, or now if it was registered since)."""
        extra = settings.__pydantic_extra__
        assert extra is not None  # NodeSettings keeps its sections among its extra keys
        held = extra.get(self.key, {})
        if not isinstance(held, self.model):
            try:
                held = self.model.model_validate(held)
            except ValueError as exc:
                raise ConfigError(f"settings section {self.key!r} is not valid: {exc}") from exc
            extra[self.key] = held
        return held

    def __repr__(self) -> str:
        return f"SettingsSection({self.key!r}, {self.model.__name__})"


_SECTIONS: dict[str, SettingsSection[BaseModel]] = {}


def register_section(key: str, model: type[M], variables: Mapping[str, str] | None = None) -> SettingsSection[M]:
    """Register a provider's settings section (at its module's import: before settings are read, so the
    file's section is checked when it is). Registering a key again replaces it (a reloaded module)."""
    if key in NodeSettings.model_fields:
        raise ValueError(f"settings section {key!r} would hide the setting of that name")
    section = SettingsSection(key, model, variables or {})
    _SECTIONS[key] = section
    return section


def settings_sections() -> list[SettingsSection[BaseModel]]:
    return [_SECTIONS[key] for key in sorted(_SECTIONS)]


class NodeSettings(_Model):
    """What the user chose. A provider's own section (its API bases...) is registered from its folder
    (``register_section``) and kept under its key; a key this process does not know (a section of a
    provider not loaded here, a setting of a newer version) is kept as read and written back, so a
    command that saves the settings without loading every provider loses nothing."""

    model_config = ConfigDict(extra="allow")

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
    # Set by ``pairwise demo`` in its own home: the tray then says it is the demo and how to leave it,
    # instead of offering to start the demo beside itself.
    demo: bool = False

    @model_validator(mode="wrap")
    @classmethod
    def _check_sections(cls, data: object, handler: ValidatorFunctionWrapHandler) -> NodeSettings:
        """Each registered section checked by its model, its errors named by its key (``my-cloud.api``) with
        the file's others, so a bad value is refused as if the section were a field."""
        if isinstance(data, NodeSettings):
            return cast("NodeSettings", handler(data))
        given = data if isinstance(data, Mapping) else {}
        sections: dict[str, BaseModel] = {}
        errors: list[InitErrorDetails] = []
        for section in settings_sections():
            try:
                sections[section.key] = section.model.model_validate(given.get(section.key, {}))
            except ValidationError as exc:
                errors.extend(cast("InitErrorDetails", {**e, "loc": (section.key, *e["loc"])}) for e in exc.errors())
        try:
            settings = cast("NodeSettings", handler(data))
        except ValidationError as exc:
            if not errors:
                raise
            raise ValidationError.from_exception_data(
                cls.__name__, [*cast("list[InitErrorDetails]", exc.errors()), *errors]) from None
        if errors:
            raise ValidationError.from_exception_data(cls.__name__, errors)
        assert settings.__pydantic_extra__ is not None
        settings.__pydantic_extra__.update(sections)
        return settings

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
    (a node started once with a provider's PAIRWISE_*_URL must not keep using those URLs without it)."""

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

    def override(holder: BaseModel, path: tuple[str, ...], value: Any) -> None:
        overrides.append((path, value, getattr(holder, path[-1])))
        setattr(holder, path[-1], value)

    if env.ca_file:
        override(settings, ("ca_file",), env.ca_file)
    if env.mdns_off:
        override(settings, ("mdns",), False)
    for section in settings_sections():
        urls = env.urls(section.variables)
        if not urls:
            continue
        held = section.of(settings)
        try:  # checked as the file's values are: a bad one is refused by its variable's name
            section.model.model_validate({**held.model_dump(), **urls})
        except ValidationError as exc:
            names = ", ".join(f"{section.variables[str(e['loc'][0])]}={e['input']!r}" for e in exc.errors()
                              if e["loc"] and str(e["loc"][0]) in section.variables)
            raise ConfigError(f"{names or 'the environment'} is not valid: "
                              f"{'; '.join(e['msg'] for e in exc.errors())}") from exc
        for name, url in urls.items():
            override(held, (section.key, name), url)
    return overrides
