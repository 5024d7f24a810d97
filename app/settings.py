"""Node settings: what the user chose, kept apart from runtime state.

Stored as JSON in the node's home. Credentials are never part of these models:
a declaration only says whether a credential exists; the secret itself lives in
the OS keyring (see ``app.services.secrets``).
"""

from __future__ import annotations

import json
import os
import socket
from pathlib import Path
from typing import Literal
from urllib.parse import urlsplit

from pydantic import BaseModel, ConfigDict, Field, field_validator

from app.home import write_private
from app.services.errors import ConfigError

ApiKind = Literal["ollama", "openai"]

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
    capacity: int = Field(default=4, ge=1)
    has_credential: bool = False

    @field_validator("name")
    @classmethod
    def _name_ok(cls, value: str) -> str:
        if not value or any(c in value for c in " /\\:") or len(value) > 64:
            raise ValueError("engine name must be 1-64 characters without spaces, slashes or colons")
        return value

    @field_validator("url")
    @classmethod
    def _url_ok(cls, value: str) -> str:
        parts = urlsplit(value)
        if parts.scheme not in ("http", "https") or not parts.hostname:
            raise ValueError("engine URL must be http:// or https:// with a host")
        return value.rstrip("/")


class HuggingFaceUrls(_Model):
    endpoints: str = "https://api.endpoints.huggingface.cloud/v2"
    hub: str = "https://huggingface.co"
    catalog: str = "https://endpoints.huggingface.co/api/catalog"
    router: str = "https://router.huggingface.co/v1"


class NodeSettings(_Model):
    name: str = Field(default_factory=socket.gethostname)
    listen: str = DEFAULT_LISTEN
    cluster_listen: str = DEFAULT_CLUSTER_LISTEN
    mdns: bool = True
    off_lan: Literal["allow", "deny"] = "allow"
    ca_file: str | None = None
    max_body_bytes: int = 8 * 1024 * 1024
    engines: list[EngineDecl] = Field(default_factory=list)
    hf: HuggingFaceUrls = Field(default_factory=HuggingFaceUrls)

    def engine(self, name: str) -> EngineDecl | None:
        return next((e for e in self.engines if e.name == name), None)


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


class SettingsStore:
    """Loads and saves NodeSettings; the environment overrides a few fields."""

    def __init__(self, path: Path) -> None:
        self.path = path

    def load(self) -> NodeSettings:
        if self.path.exists():
            try:
                settings = NodeSettings.model_validate_json(self.path.read_text())
            except ValueError as exc:
                raise ConfigError(f"{self.path} is not valid settings: {exc}") from exc
        else:
            settings = NodeSettings()
        return apply_environment(settings)

    def save(self, settings: NodeSettings) -> None:
        data = settings.model_dump(mode="json")
        write_private(self.path, json.dumps(data, indent=2).encode())


def apply_environment(settings: NodeSettings) -> NodeSettings:
    env = os.environ
    if env.get("PAIRWISE_CA_FILE"):
        settings.ca_file = env["PAIRWISE_CA_FILE"]
    if env.get("PAIRWISE_MDNS", "").lower() in ("off", "0", "false", "no"):
        settings.mdns = False
    for field, var in (
        ("endpoints", "PAIRWISE_HF_ENDPOINTS_URL"),
        ("hub", "PAIRWISE_HF_HUB_URL"),
        ("catalog", "PAIRWISE_HF_CATALOG_URL"),
        ("router", "PAIRWISE_HF_ROUTER_URL"),
    ):
        if env.get(var):
            setattr(settings.hf, field, env[var].rstrip("/"))
    return settings
