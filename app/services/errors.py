"""Pairwise's one exception tree: every error a module raises to its callers joins it here.

Every error carries a short ``title`` and a ``message`` that a notification, a CLI line or an HTTP
error body can show as is (the Maestral lesson), and the HTTP ``status`` the control API answers
with. Catch the branch you mean (``NotFound``, not a provider's own kind of it, when any missing thing
will do). A module's own errors are defined in that module and derive from the branch below that fits;
the tree lists them all, but a provider's, which its folder's ``errors.py`` lists in a tree of its own
(``tests/unit/test_error_tree.py`` fails when one is missing from either list):

    PairwiseError
    ├── ConfigError                   a setting, declaration or argument is invalid (names the rule)
    │   ├── NodeAlreadyRunning        node.py: another node holds this home
    │   ├── HomeTooOpen               home.py: the home is readable by other users
    │   ├── DatabaseDamaged           jobs/store.py: state.db cannot be read (set it aside to start afresh)
    │   ├── AccountUnusable           rented/spend.py: the spend account is missing, damaged or unwritable
    │   │                               (never read as zero: `pairwise spend repair`)
    │   ├── DatabaseUnwritable        jobs/store.py: state.db cannot be written (read-only home, full disk)
    │   ├── PortTaken                 a listener's address is held by another program (names it and the way on)
    │   └── BatchInvalid              batch/service.py: a batch or file the Batch API refuses (400)
    ├── InvalidRequest                translate/checks.py: a request field of the wrong type or range (400)
    ├── Untranslatable                translate/refusal.py: a field that cannot cross to the upstream's API (400)
    ├── Unsupported                   translate/refusal.py: a Responses/Anthropic field that cannot be honoured (400)
    ├── BodyError                     frontdoor/body.py: a request body refused (413, 400), with its status
    ├── CredentialError               the keyring is unavailable or a credential is missing
    │   └── NoCredentialStore         secrets.py: no OS credential store on this machine (headless)
    ├── NotFound                      an engine, node, model or endpoint that does not exist
    │   └── BatchNotFound             batch/service.py: no such batch (or input file)
    ├── FeatureMissing                a feature (cluster, rented nodes, a provider's) is not attached here
    │   └── NoProviderOffers          rented/operations.py: no provider here creates endpoints (or batch windows)
    ├── RefusedError                  refused by policy (loopback rule, sharing off, budget...)
    │   ├── KeyRefused                keys/store.py: a key that is unknown, revoked or not for this model
    │   ├── RecordRefused             cluster/record_check.py: a peer's job record with a field not plain
    │   ├── NotOffered                rented/provider.py: an action this node's provider does not offer
    │   └── BatchConflict             batch/service.py: not in this batch's state (cancel a completed one) (409)
    ├── UpstreamError                 an upstream failed before its answer was committed: fail over
    │   ├── UpstreamTimeout           no first byte within the upstream's first-byte timeout
    │   ├── UpstreamCut               the upstream's connection broke mid-stream (after its first byte)
    │   ├── RequesterLimitError       a requester over its spend cap or rate on a rented node (429)
    │   ├── UpstreamRefused           a peer refused it by its policy (a budget cap reached...) (403)
    │   ├── LineTooLong               translate/lines.py: an upstream line over the cap
    │   └── MalformedResponse         backends/h1_response.py: the upstream's bytes are not HTTP/1.1 (the splice)
    ├── (a provider's errors)         its folder's errors.py: its API answered an error; each kind also
    │                                   joins the branch above that fits (a refused token is a
    │                                   CredentialError, a missing endpoint a NotFound)
    ├── NotSaved                      home.py: a change could not be written (disk full, read-only,
    │                                   permission), so it was not made
    ├── PeerError                     cluster/peer_client.py: a peer unreachable or refusing
    ├── PairingError                  cluster/pairing_protocol.py: pairing failed, and why (WrongPin,
    │                                   InvalidPin, PinVoid, PinExpired, PinAlreadyUsed, AlreadyMember,
    │                                   PairingUnavailable, PairingBusy, PairingProtocolError)
    ├── TrustStoreError               cluster/trust.py: the pinned-peer store is unreadable or refused
    ├── IdentityError                 cluster/identity.py: this node's certificate is unreadable or invalid
    └── ControlError                  the CLI could not talk to a running node

Exceptions that never leave their module (a client's ``_RetriedThen``, a retry signal) are not errors
and stay out of the tree.
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

    def __init__(self, message: str, *, status: int | None = None) -> None:
        super().__init__(message)
        self.upstream_status = status


class UpstreamTimeout(UpstreamError):
    title = "Upstream timed out"
    status = 504


class UpstreamCut(UpstreamError):
    """The upstream's connection broke after its first byte. After the stream's final chunk it is
    harmless (an engine that closes without ending its chunked body); before it, the answer is cut."""


class RequesterLimitError(UpstreamError):
    """A requester over a limit on a rented node. An ``UpstreamError`` so the plan moves on to the
    next candidate (LAN capacity is never limited); when no candidate is left, the caller gets 429.
    ``retry_after_s`` is set for rates (and sent as ``Retry-After``); a daily cap resets at 00:00 UTC."""

    title = "Requester limit reached"
    status = 429

    def __init__(self, message: str, *, retry_after_s: int | None = None) -> None:
        super().__init__(message, status=429)
        self.retry_after_s = retry_after_s


class UpstreamRefused(UpstreamError):
    """A peer refused the request by its own policy (its rented node's budget cap reached, sharing
    off): an ``UpstreamError`` so another candidate may still serve; when none does, the caller
    gets the peer's 403 and words, as a caller on that peer would."""

    title = "Refused by policy"
    status = 403

    def __init__(self, message: str) -> None:
        super().__init__(message, status=403)


class ControlError(PairwiseError):
    title = "Cannot reach the node"
    status = 503
