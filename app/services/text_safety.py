"""Text from elsewhere is data, not terminal input, and error text leaving this node says no more
than it must.

* ``printable``: what a peer, an engine or a rented endpoint wrote, made safe to print: escape
  sequences and control characters (C0, C1, bidirectional overrides) go, line breaks become spaces.
  Every place that prints such text (CLI tables, the tray) passes it through here.
* ``scrub_for_peer``: error text that crosses to a peer, or into a replicated record, loses URLs,
  host:port pairs, IP addresses and token-like strings (the detail stays in the local log), and
  known secrets are redacted.
"""

from __future__ import annotations

import re

from app.services.secrets import redact

# ESC-introduced sequences first (CSI ... final byte, OSC ... BEL/ST, two-byte escapes), so their
# printable tails do not survive the control-character pass.
_ESCAPES = re.compile(r"\x1b\[[0-?]*[ -/]*[@-~]|\x1b\][^\x07\x1b]*(?:\x07|\x1b\\)?|\x1b[@-Z\\-_]|\x9b[0-?]*[ -/]*[@-~]")
_LINE_BREAKS = re.compile(r"[\r\n\t\v\f\u2028\u2029]+")
_CONTROLS = re.compile(r"[\x00-\x1f\x7f-\x9f\u200b-\u200f\u202a-\u202e\u2066-\u2069\ufeff]")

_URL = re.compile(r"\b[a-zA-Z][a-zA-Z0-9+.-]*://\S+")
_IPV6 = re.compile(r"\[?(?:(?:[0-9a-fA-F]{1,4}:){4,7}[0-9a-fA-F]{1,4}|[0-9a-fA-F:]*::[0-9a-fA-F]{1,4}(?::[0-9a-fA-F]{1,4})*)\]?(?::\d{1,5})?")
_IPV4 = re.compile(r"\b(?:\d{1,3}\.){3}\d{1,3}(?::\d{1,5})?\b")
_HOST_PORT = re.compile(r"\b(?:localhost|(?:[a-zA-Z0-9-]+\.)+[a-zA-Z0-9-]+):\d{2,5}\b")
_DOMAIN = re.compile(r"\b(?:[a-zA-Z0-9-]+\.)+(?:local|lan|internal|home|corp|com|net|org|io|cloud|ai|dev)\b")
_BEARER = re.compile(r"(?i)\b(bearer|token|api[_-]?key|authorization|password|secret)(\s*[:=]\s*|\s+)\S+")
# Long runs mixing letters and digits (API keys, provider tokens, sk-..., JWTs); plain words do not match.
_TOKENISH = re.compile(r"\b(?=[A-Za-z0-9_\-.]*\d)(?=[A-Za-z0-9_\-.]*[A-Za-z])[A-Za-z0-9_\-.]{20,}\b")


def printable(text: object, limit: int | None = None) -> str:
    """``text`` without escape sequences or control characters, on one line."""
    value = _CONTROLS.sub("", _LINE_BREAKS.sub(" ", _ESCAPES.sub("", str(text))))
    if limit is not None and len(value) > limit:
        value = value[: limit - 1] + "…"
    return value


def scrub_for_peer(text: str, limit: int = 500) -> str:
    """Error text fit to leave this node: no URLs, hosts, addresses or token-like strings."""
    value = redact(text)
    value = _URL.sub("[url]", value)
    value = _BEARER.sub(lambda m: f"{m.group(1)}{m.group(2)}[redacted]", value)
    value = _IPV4.sub("[address]", value)
    value = _IPV6.sub("[address]", value)
    value = _HOST_PORT.sub("[host]", value)
    value = _DOMAIN.sub("[host]", value)
    value = _TOKENISH.sub("[redacted]", value)
    return printable(value, limit)
