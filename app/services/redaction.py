"""Credentials found by their shape, whatever their characters.

Known secrets (every value that passed through the keyring) are redacted by ``secrets.redact``;
this catches the ones the node never saw: what an engine, a rented endpoint or a peer wrote in an
error, and what a person pasted into a URL. By shape, not by example:

* a header or scheme value: ``Authorization: <anything>``, ``Basic <b64>``, ``Bearer <token>``;
* a key/value pair whose key names a credential (``key``, ``api_key``, ``x-api-key``, ``apiKey``,
  ``access_token``, ``password``, ``client_secret``, ``sig`` ...), joined by ``=`` or ``:``, the
  value quoted or not, letters only or not (a URL's query included: ``?key=abc&``);
* a URL's user info (``https://user:pass@host``).

A number is not a credential (``max_tokens=4096`` stays), and the words kept say what was there
(``Authorization: Bearer [redacted]``).
"""

from __future__ import annotations

import re

REDACTED = "[redacted]"

# Names that say "the value is a credential"; matched inside longer names (x-api-key, client_secret).
_CREDENTIAL_NAME = (r"[\w.-]*(?:api[_-]?key|apikey|key|token|secret|passw(?:or)?d|passphrase|pwd|auth\w*"
                    r"|credential|session[_-]?id|signature|sig|cookie)[\w.-]*")
_SCHEMES = r"(?:basic|bearer|digest|negotiate)"
_SCHEME_VALUE = re.compile(rf"(?i)\b({_SCHEMES})(\s+)(?!\[redacted\])[A-Za-z0-9+/=._~:-]{{4,}}")
# The schemes an Authorization header names (IANA's registry, and the API-key spellings in use).
_HEADER_SCHEMES = (r"basic|bearer|digest|negotiate|token|api-?key|key|hmac|aws4-hmac-sha256|ssws|dpop|mac|hoba"
                   r"|mutual|ntlm|vapid|scram-sha-\d+|gnap|privatetoken|concealed|oauth")
# An Authorization header keeps its scheme word (Token, ApiKey, ...) and loses what follows it.
_AUTHORIZATION = re.compile(r"""(?i)\b((?:proxy-)?authorization["']?\s*[:=]\s*["']?)"""
                            rf"""(?![A-Za-z-]*\s*\[redacted\])((?:{_HEADER_SCHEMES})\s+)?[^\s"',;]+""")
_USERINFO = re.compile(r"(?i)\b([a-z][a-z0-9+.-]*://)[^/\s@?#]+@")
_KEY_VALUE = re.compile(
    rf"""(?ix)
    (?P<name>["']?\b{_CREDENTIAL_NAME}["']?)
    (?P<sep>\s*[:=]\s*)
    (?!\[redacted\])(?!{_SCHEMES}\s)(?!\S+\s+\[redacted\])(?!(?:true|false|null|none)\b)(?![-+]?\d+(?:\.\d+)?(?![\w.~+/=-]))
    (?P<value>"(?:[^"\\]|\\.)*"|'[^']*'|[^\s&,;"'<>(){{}}\[\]]+)
    """)


def _value(match: re.Match[str]) -> str:
    value = match.group("value")
    quote = value[0] if value[:1] in ("'", '"') else ""
    return f"{match.group('name')}{match.group('sep')}{quote}{REDACTED}{quote}"


def redact_shapes(text: str) -> str:
    """``text`` with every credential-shaped value replaced by ``[redacted]``."""
    text = _SCHEME_VALUE.sub(lambda m: f"{m.group(1)}{m.group(2)}{REDACTED}", text)
    text = _AUTHORIZATION.sub(lambda m: f"{m.group(1)}{m.group(2) or ''}{REDACTED}", text)
    text = _USERINFO.sub(lambda m: f"{m.group(1)}{REDACTED}@", text)
    return _KEY_VALUE.sub(_value, text)
