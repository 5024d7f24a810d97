"""A job's route reason (``routing/why.py``'s one line: ``fit: … | policy: … | failover: …``) in the
words the tray uses: what the request needed, which copy held it and why that one."""

from __future__ import annotations

import re

from app.services.api import glossary

FIT = re.compile(r"fit: ~(?P<total>\d+) tokens(?: \(\d+ prompt \+ \d+ for the answer\))?, (?P<name>.+?) "
                 r"(?:window (?P<window>\d+)|window unknown)(?:; too small: (?P<small>.*))?$")
SMALL = re.compile(r"(?P<name>[^,]+?) \(window (?P<window>\d+)\)")
POLICY = re.compile(r"policy: (?P<policy>[\w-]+|\?)(?: \((?P<because>.*)\))?$")
LOAD = re.compile(r"load: (?P<n>\d+) of (?P<cap>\d+) in flight on (?P<name>.+)$")


def plain_route(route: object) -> str:
    """``fit: ~40 tokens, local window 4096 | only copy: local`` → "needs about 40 tokens, local holds
    4096; the only copy of the model: local". Parts it does not know pass through as they are."""
    if not isinstance(route, str) or not route.strip():
        return ""
    return "; ".join(_part(part.strip()) for part in route.split(" | ") if part.strip())


def _part(part: str) -> str:
    if m := FIT.match(part):
        held = f"{m['name']} holds {m['window']}" if m["window"] else f"{m['name']}'s window is not known"
        text = f"needs about {m['total']} tokens, {held}"
        if m["small"]:
            small = ", ".join(f"{s['name'].strip()} holds only {s['window']}" for s in SMALL.finditer(m["small"]))
            text += f" (too small: {small})"
        return text
    if part.startswith("affinity: "):
        return "same conversation: kept on the copy that served its last turn (its cache is there)"
    if m := POLICY.match(part):
        words = glossary.policy(m["policy"]) if m["policy"] != "?" else "By its routing policy"
        words = words[:1].lower() + words[1:]  # mid-sentence; "LAN" stays as it is
        return f"rented GPU, {words}" + (f": {m['because']}" if m["because"] else "")
    if m := LOAD.match(part):
        return f"least busy copy: {m['name']} had {m['n']} of {m['cap']} requests running"
    if part.startswith("only copy: "):
        return f"the only copy of the model: {part.removeprefix('only copy: ')}"
    if part.startswith("failover: "):
        return f"after another copy failed: {part.removeprefix('failover: ')}"
    return glossary.plain(part)
