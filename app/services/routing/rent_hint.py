"""What to say when no copy's window holds a request: the command that rents one that does.

Only words: nothing is rented here. ``pairwise rented create`` shows the GPU, the price and the
window and asks before anything bills, so the user's word is still needed. The repository is the
model's repository name where one of its linked names is one (``Qwen/Qwen2.5-7B-Instruct``), and
``--same-as`` links the new copy with the name the caller used, so the same request then routes there.
"""

from __future__ import annotations

import re

from app.services.translate.shapes import canonical_model

FIRST_WINDOW = 4096  # the windows offered are powers of two from here, as engines are usually started
LARGEST_WINDOW = 1 << 20
_REPO = re.compile(r"^[A-Za-z0-9][\w.-]*/[\w.-]+$")
ENDPOINT_NAME_LENGTH = 32  # the longest endpoint name the rented create path accepts


def window_to_rent(tokens: int) -> int | None:
    """The smallest usual window that holds ``tokens`` (None beyond any engine's window)."""
    window = FIRST_WINDOW
    while window < tokens:
        window *= 2
    return window if window <= LARGEST_WINDOW else None


def repo_of(names: list[str]) -> str | None:
    """The model's repository among its names: an ``owner/name`` that is not a GGUF file's repo."""
    repos = [n for n in names if _REPO.match(n) and ":" not in n]
    return next((r for r in repos if "gguf" not in r.lower()), None)


def node_name(repo: str | None, window: int) -> str:
    """A rented node (and endpoint) name: the repository's name and the window, e.g. qwen2-5-7b-instruct-32k."""
    suffix = f"-{window // 1024}k"
    base = re.sub(r"[^a-z0-9]+", "-", (repo or "bigger-copy").rsplit("/", 1)[-1].lower()).strip("-")
    return (base[:ENDPOINT_NAME_LENGTH - len(suffix)].strip("-") or "copy") + suffix


def rent_hint(requested: str, names: list[str], tokens: int) -> str:
    """The sentence that ends the 400: how to rent a copy whose window holds the request."""
    window = window_to_rent(tokens)
    if window is None:
        return ""
    repo = repo_of(names)
    command = f"pairwise rented create {node_name(repo, window)} --model {repo or 'OWNER/NAME'} --context-window {window}"
    if repo is None or canonical_model(repo) != canonical_model(requested):
        command += f" --same-as {requested}"
    return (f"; to serve it, rent a copy with a bigger window: '{command}' (it shows the GPU and its price and "
            "asks before anything is billed)")
