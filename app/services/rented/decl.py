"""A rented node's declaration, in the shape of the feature request's YAML.

    rented_node:
      name: l40s
      provider: openai-compatible      # or any provider registered on the node (rented/provider.py)
      url: https://gpu-1.example.com   # or endpoint: ns/name, for a provider that finds the URL by name
      endpoint: <namespace>/<endpoint-name>
      credential: os-credential-store:pair/gpu   # a reference only; the token itself is never declared
      share_with_cluster: false
      routing: {use: when-no-local-node}        # overflow | prefer | never
      timeouts: {cold_start_s: 600}             # the provider's default (DeclRules), 120 unless it says
      lifecycle: {managed: true, wake_on_request: true, idle_pause_min: 15, pause_on_sponsor_exit: true}
      budget: {usd_per_day: 10, usd_per_month: 100}
      requesters: {usd_per_day: {laptop-b: 2, "*": 5}, requests_per_min: {"*": 30}}   # per peer node (name or id)
      models: [OWNER/SmolLM2-135M-Instruct]   # used when the endpoint has no /v1/models
      allow_models: []                          # optional allowlist; empty = whatever it serves
      gpu: "1x L40S 48 GB"
      price_per_hour: 1.8
      ca_file: /path/to/extra-ca.pem            # extra trust root for this node only

Every number accepts fractions. Public API:

- ``RentedDecl`` (pydantic; unknown keys ignored, but an older spelling of a setting (``use``,
  ``usd_per_day`` at the top, a dotted key) is refused naming the nested one, and so is an unknown key
  in ``budget``) and its parts ``Routing``, ``Timeouts``,
  ``Lifecycle``, ``Budget``.
- ``validate_decl(data, book=None) -> RentedDecl``: pydantic validation plus the URL rules, raising
  ``ConfigError`` (a field is wrong) or ``RefusedError`` (a URL rule; the message names the rule). What
  differs by provider (its cold-start default, whether it finds a URL by ``endpoint: NS/NAME``) is its
  ``DeclRules``, read from ``book`` (the manager's provider registry): this module names no provider.
- ``check_url(url) -> str``: the URL rules alone, returns the normalised base URL (no trailing
  ``/`` or ``/v1``: request paths such as ``/v1/chat/completions`` are appended to it).
- ``declarations_from(obj) -> list[dict]``: the declarations in a parsed YAML/JSON document
  (``rented_node: {...}``, ``rented_nodes: [...]``, a list, or one bare declaration).
- ``apply_changes(decl, changes, book=None) -> RentedDecl``: a validated copy with nested changes
  (``{"routing": {"use": "prefer"}}``), for what a provider's controller learns (its URL, its GPU); a
  person's change is a ``change.RentedChange``, whose fields are checked first.
"""

from __future__ import annotations

import ipaddress
from dataclasses import dataclass
from typing import Any, Literal, Protocol
from urllib.parse import urlsplit

from pydantic import (
    BaseModel,
    ConfigDict,
    Field,
    ValidationError,
    ValidationInfo,
    field_validator,
    model_validator,
)

from app.services.errors import ConfigError, RefusedError

Policy = Literal["when-no-local-node", "overflow", "prefer", "never"]
POLICIES: tuple[str, ...] = ("when-no-local-node", "overflow", "prefer", "never")
LABEL = "Rented · off-LAN"
DEFAULT_COLD_START_S = 120.0
# A reference to where the credential lives is fine in a declaration; a credential is not.
CREDENTIAL_REFERENCE_PREFIXES = ("os-credential-store:", "keyring:")


# Where each older spelling of a setting went: a body or declaration still using one is told the new one.
OLDER_SPELLINGS = {
    "usd_per_day": "budget.usd_per_day", "usd_per_month": "budget.usd_per_month",
    "budget_usd_per_day": "budget.usd_per_day", "budget_usd_per_month": "budget.usd_per_month",
    "idle_pause_min": "lifecycle.idle_pause_min", "wake_on_request": "lifecycle.wake_on_request",
    "pause_on_sponsor_exit": "lifecycle.pause_on_sponsor_exit", "managed": "lifecycle.managed",
    "use": "routing.use", "cold_start_s": "timeouts.cold_start_s",
}


def nested_spelling(dotted: str) -> str:
    """``budget.usd_per_day`` as a body spells it: ``{"budget": {"usd_per_day": ...}}``."""
    head, _, rest = dotted.partition(".")
    return f'{{"{head}": {{"{rest}": ...}}}}' if rest else f'"{head}"'


@dataclass(frozen=True)
class DeclRules:
    """What a provider's declarations default to and allow (``Provider.decl_rules``)."""

    cold_start_s: float = DEFAULT_COLD_START_S  # its default cold-start budget
    by_endpoint: bool = False  # it finds the URL of ``endpoint: NS/NAME`` itself (a resolver hook)


class RuleBook(Protocol):
    """Where ``validate_decl`` reads each provider's rules (``ProviderRegistry``)."""

    def decl_rules(self, provider: str) -> DeclRules | None: ...  # None: not registered (refused by name later)

    def by_endpoint(self) -> list[str]: ...


class _Part(BaseModel):
    # Validators built at the first declaration read, not at import: a node with no rented node reads
    # none, and building these seven models was about 17 ms of every start (issue 31).
    model_config = ConfigDict(extra="ignore", defer_build=True)


class Routing(_Part):
    use: Policy = "when-no-local-node"


class Timeouts(_Part):
    cold_start_s: float = Field(default=DEFAULT_COLD_START_S, gt=0)


class Lifecycle(_Part):
    managed: bool = False
    wake_on_request: bool = False
    idle_pause_min: float | None = Field(default=None, gt=0)
    pause_on_sponsor_exit: bool = True


class Budget(_Part):
    model_config = ConfigDict(extra="forbid")  # a misspelt cap is refused, never read as no cap

    usd_per_day: float | None = Field(default=None, ge=0)
    usd_per_month: float | None = Field(default=None, ge=0)


class RequesterLimits(_Part):
    """Limits the sponsor enforces per requesting peer node on this rented node, by the peer's
    name or id; ``*`` for peers not named. A value of None removes that peer's entry."""

    usd_per_day: dict[str, float] = Field(default_factory=dict)
    requests_per_min: dict[str, int] = Field(default_factory=dict)

    @field_validator("usd_per_day", "requests_per_min", mode="before")
    @classmethod
    def _drop_removed(cls, value: Any) -> Any:
        return {k: v for k, v in value.items() if v is not None} if isinstance(value, dict) else value

    @field_validator("usd_per_day")
    @classmethod
    def _dollars(cls, value: dict[str, float]) -> dict[str, float]:
        if any(v < 0 for v in value.values()):
            raise ValueError("a per-peer daily cap is 0 dollars or more")
        return value

    @field_validator("requests_per_min")
    @classmethod
    def _rate(cls, value: dict[str, int]) -> dict[str, int]:
        if any(v < 1 for v in value.values()):
            raise ValueError("a per-peer rate is 1 request per minute or more")
        return value


class RentedDecl(_Part):
    name: str
    # A provider registered on the node (rented/provider.py); the manager refuses an unknown one by name.
    provider: str = "openai-compatible"
    url: str | None = None
    endpoint: str | None = None
    credential: str | None = None  # reference only (validated below); never the token
    share_with_cluster: bool = False
    routing: Routing = Field(default_factory=Routing)
    timeouts: Timeouts = Field(default_factory=Timeouts)
    lifecycle: Lifecycle = Field(default_factory=Lifecycle)
    budget: Budget = Field(default_factory=Budget)
    requesters: RequesterLimits = Field(default_factory=RequesterLimits)
    models: list[str] = Field(default_factory=list)
    allow_models: list[str] = Field(default_factory=list)
    gpu: str | None = None
    price_per_hour: float | None = Field(default=None, ge=0)
    # USD per 1M input / output tokens, for a provider billed per token that publishes no price.
    price_per_mtok_in: float | None = Field(default=None, ge=0)
    price_per_mtok_out: float | None = Field(default=None, ge=0)
    ca_file: str | None = None
    capacity: int = Field(default=4, ge=1)
    # The context window it serves, in tokens, when the endpoint does not say (``--context-window``).
    context_window: int | None = Field(default=None, ge=1)
    has_credential: bool = False  # whether the keyring holds a token for it (set by the manager)

    @model_validator(mode="before")
    @classmethod
    def _defaults(cls, data: Any, info: ValidationInfo) -> Any:
        if not isinstance(data, dict):
            return data
        data = dict(data)
        for key in data:
            if key in OLDER_SPELLINGS or "." in str(key):  # a cap spelt so would be silently no cap
                raise ValueError(f"{key}: spelt {nested_spelling(OLDER_SPELLINGS.get(key, key))} now")
        timeouts = dict(data.get("timeouts") or {})
        if timeouts.get("cold_start_s") is None:
            book = (info.context or {}).get("book")
            provider = str(data.get("provider") or "openai-compatible")
            rules = book.decl_rules(provider) if book is not None else None
            timeouts["cold_start_s"] = (rules or DeclRules()).cold_start_s
        data["timeouts"] = timeouts
        return data

    @field_validator("provider")
    @classmethod
    def _provider_ok(cls, value: str) -> str:
        if not value or len(value) > 64 or not all(c.isalnum() or c in "-_." for c in value):
            raise ValueError("provider must be 1-64 letters, digits, '-', '_' or '.'")
        return value

    @field_validator("name")
    @classmethod
    def _name_ok(cls, value: str) -> str:
        if not value or any(c in value for c in " /\\:") or len(value) > 64:
            raise ValueError("rented node name must be 1-64 characters without spaces, slashes or colons")
        return value

    @field_validator("endpoint")
    @classmethod
    def _endpoint_ok(cls, value: str | None) -> str | None:
        if value is not None and (value.count("/") != 1 or not all(value.split("/"))):
            raise ValueError("endpoint must be NAMESPACE/NAME")
        return value

    @field_validator("credential")
    @classmethod
    def _credential_is_reference(cls, value: str | None) -> str | None:
        if value is not None and not value.startswith(CREDENTIAL_REFERENCE_PREFIXES):
            # Never echo the value: it may be a token pasted by mistake.
            raise ValueError("a declaration may only name where the credential lives "
                             "(os-credential-store:...); give the token with --token-stdin")
        return value

    @field_validator("models", "allow_models")
    @classmethod
    def _clean_names(cls, value: list[str]) -> list[str]:
        return [m.strip() for m in value if m and m.strip()]

    @property
    def policy(self) -> str:
        return self.routing.use

    @property
    def cold_start_s(self) -> float:
        return self.timeouts.cold_start_s

    def public_json(self) -> dict[str, Any]:
        """The declaration as stored and shown locally (it never holds a token)."""
        return self.model_dump(mode="json")


def check_url(url: str) -> str:
    """Apply the URL rules; return the normalised base URL or raise RefusedError naming the rule."""
    parts = urlsplit(url.strip())
    if parts.scheme not in ("https", "http"):
        raise RefusedError(f"refused URL {url!r}: rule 'https only': a rented node is reached over https://")
    if not parts.hostname:
        raise RefusedError(f"refused URL {url!r}: rule 'a URL has a host': no host in it")
    if parts.username or parts.password:
        raise RefusedError("refused URL: rule 'no credential in a URL': give the token with --token-stdin; "
                           "it goes to the OS keyring")
    if parts.query or parts.fragment:
        raise RefusedError(f"refused URL {parts.scheme}://{parts.netloc}{parts.path}: rule 'a base URL has no "
                           "query or fragment'")
    if parts.scheme == "http" and not is_loopback_host(parts.hostname):
        raise RefusedError(f"refused URL {url!r}: rule 'http:// only for loopback hosts': {parts.hostname} is not "
                           "loopback, so use https:// (verified against the system trust store and your CA file)")
    path = parts.path.rstrip("/")
    if path.endswith("/v1"):
        path = path[: -len("/v1")]
    return f"{parts.scheme}://{parts.netloc}{path}"


def is_loopback_host(host: str) -> bool:
    if host.lower() == "localhost":
        return True
    try:
        return ipaddress.ip_address(host.strip("[]")).is_loopback
    except ValueError:
        return False


def validate_decl(data: dict[str, Any], book: RuleBook | None = None) -> RentedDecl:
    """``book``: each provider's rules (the manager passes its registry); without it, every provider's
    defaults are the generic ones and ``endpoint`` without a url is not checked against its provider
    (a declaration already validated, changed in place)."""
    try:
        decl = RentedDecl.model_validate(data, context={"book": book})
    except ValidationError as exc:
        problems = "; ".join(f"{'.'.join(map(str, e['loc'])) or 'declaration'}: {e['msg']}" for e in exc.errors())
        name = data.get("name") if isinstance(data, dict) else None
        raise ConfigError(f"invalid rented node {name or ''}: {problems}".replace("  ", " ")) from exc
    if decl.url is not None:
        decl.url = check_url(decl.url)
    elif not decl.endpoint:
        finders = ", ".join(book.by_endpoint()) if book is not None else ""
        raise ConfigError(f"rented node {decl.name}: give a url"
                          + (f" (or, for provider {finders}, endpoint: NS/NAME)" if finders else ""))
    elif book is not None and not (book.decl_rules(decl.provider) or DeclRules(by_endpoint=True)).by_endpoint:
        finders = ", ".join(book.by_endpoint()) or "(none on this node)"
        raise ConfigError(f"rented node {decl.name}: 'endpoint' without a url works only for provider "
                          f"{finders}; give a url")
    return decl


def declarations_from(obj: Any) -> list[dict[str, Any]]:
    if isinstance(obj, dict) and "rented_node" in obj:
        obj = obj["rented_node"]
    elif isinstance(obj, dict) and "rented_nodes" in obj:
        obj = obj["rented_nodes"]
    items = obj if isinstance(obj, list) else [obj]
    if not items or not all(isinstance(i, dict) for i in items):
        raise ConfigError("the file holds no rented node declaration (expected rented_node: {...}, "
                          "rented_nodes: [...], or a list of declarations)")
    return [dict(i) for i in items]


def apply_changes(decl: RentedDecl, changes: dict[str, Any], book: RuleBook | None = None) -> RentedDecl:
    data = decl.model_dump(mode="json")
    for key, value in changes.items():
        data[key] = {**data[key], **value} if isinstance(value, dict) and isinstance(data.get(key), dict) else value
    return validate_decl(data, book)
