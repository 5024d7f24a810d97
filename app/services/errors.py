"""Pairwise's error hierarchy.

Every error carries a short ``title`` and a ``message`` that a notification,
a CLI line or an HTTP error body can show as is (the Maestral lesson).

    PairwiseError
    ├── ConfigError            a setting or declaration is invalid (names the rule)
    │   └── PortTaken          a listener's address is held by another program (names it and the way on)
    ├── CredentialError        the keyring is unavailable or a credential is missing
    ├── NotFound               an engine, node or model that does not exist
    ├── FeatureMissing         a feature (cluster, rented nodes, Hugging Face) is not attached to this node
    ├── RefusedError           a request refused by policy (loopback rule, sharing off, budget...)
    ├── UpstreamError          an upstream failed; ``before_first_byte`` decides failover
    │   ├── UpstreamTimeout    no first byte within the upstream's first-byte timeout
    │   └── RequesterLimitError  a requester over its spend cap or rate on a rented node (429)
    └── ControlError           the CLI could not talk to a running node
"""

from __future__ import annotations


class PairwiseError(Exception):
    title = "Pairwise error"
    status = 500

    def __init__(self, message: str, *, title: str | None = None) -> None:
        super().__init__(message)
        self.message = message
        if title is not None:
            self.title = title


class ConfigError(PairwiseError):
    title = "Invalid setting"
    status = 400


class PortTaken(ConfigError):
    """A listener could not bind: ``message`` is the whole explanation (who holds it, what to do)."""

    title = "Address in use"
    status = 409

    def __init__(self, message: str, *, role: str, address: str, holder_kind: str = "unknown",
                 steps: list[str] | None = None, moved_to: str | None = None) -> None:
        super().__init__(message)
        self.role, self.address, self.holder_kind = role, address, holder_kind
        self.steps = steps or []  # for Ollama on the front door: how to move it, on this OS
        self.moved_to = moved_to  # and where to


class CredentialError(PairwiseError):
    title = "Credential problem"
    status = 500


class NotFound(PairwiseError):
    title = "Not found"
    status = 404


class FeatureMissing(PairwiseError):
    title = "Not available"
    status = 409


class RefusedError(PairwiseError):
    title = "Refused"
    status = 403


class UpstreamError(PairwiseError):
    title = "Upstream failed"
    status = 502

    def __init__(self, message: str, *, status: int | None = None, before_first_byte: bool = True) -> None:
        super().__init__(message)
        self.upstream_status = status
        self.before_first_byte = before_first_byte


class UpstreamTimeout(UpstreamError):
    title = "Upstream timed out"
    status = 504


class RequesterLimitError(UpstreamError):
    """A requester over a limit on a rented node. An ``UpstreamError`` so the plan moves on to the
    next candidate (LAN capacity is never limited); when no candidate is left, the caller gets 429.
    ``retry_after_s`` is set for rates (and sent as ``Retry-After``); a daily cap resets at 00:00 UTC."""

    title = "Requester limit reached"
    status = 429

    def __init__(self, message: str, *, retry_after_s: int | None = None) -> None:
        super().__init__(message, status=429)
        self.retry_after_s = retry_after_s


class ControlError(PairwiseError):
    title = "Cannot reach the node"
    status = 503
