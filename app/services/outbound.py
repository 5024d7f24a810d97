"""Outbound HTTPS trust: the system store plus an optional extra CA file.

There is deliberately no way to turn verification off: an extra trust root is
the only knob (for a self-hosted endpoint or a simulated provider).
"""

from __future__ import annotations

import ssl
from functools import lru_cache
from pathlib import Path

import httpx

from app.services.errors import ConfigError


@lru_cache(maxsize=16)
def outbound_ssl_context(extra_ca_files: tuple[str, ...] = ()) -> ssl.SSLContext:
    context = ssl.create_default_context()
    for ca_file in extra_ca_files:
        if not Path(ca_file).is_file():
            raise ConfigError(f"extra CA file {ca_file} does not exist")
        try:
            context.load_verify_locations(cafile=ca_file)
        except ssl.SSLError as exc:
            raise ConfigError(f"extra CA file {ca_file} is not a PEM certificate: {exc}") from exc
    return context


def ca_files(*files: str | None) -> tuple[str, ...]:
    return tuple(sorted({f for f in files if f}))


def make_client(*, extra_ca: tuple[str, ...] = (), read_timeout_s: float | None = None,
                keepalive_s: float = 5.0) -> httpx.AsyncClient:
    """The control plane's client (a provider's API, probes, model lists). Inference streams
    go through ``backends.stream_client`` instead, with the same ``outbound_ssl_context``."""
    return httpx.AsyncClient(
        verify=outbound_ssl_context(extra_ca),
        timeout=httpx.Timeout(connect=10.0, read=read_timeout_s, write=30.0, pool=30.0),
        limits=httpx.Limits(max_connections=64, max_keepalive_connections=16, keepalive_expiry=keepalive_s),
        trust_env=False,
    )
