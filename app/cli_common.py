"""Small helpers shared by the CLI's command modules."""

from __future__ import annotations

import json
import sys
from collections.abc import Sequence
from typing import TYPE_CHECKING

from app.home import Home, resolve_home
from app.services.text_safety import printable

if TYPE_CHECKING:
    import argparse

    # What ``add_subparsers`` returns: each command module adds its commands to it.
    Commands = argparse._SubParsersAction[argparse.ArgumentParser]


def home_of(args: argparse.Namespace) -> Home:
    return Home(resolve_home(getattr(args, "home", None)))


def print_json(data: object) -> None:
    print(json.dumps(data, indent=2, default=str))


def read_token_stdin() -> str:
    token = sys.stdin.readline().strip()
    if not token:
        raise SystemExit("error: --token-stdin was given but stdin had no token")
    return token


def table(rows: Sequence[Sequence[object]], headers: list[str]) -> str:
    """Rows as aligned columns; every cell made printable (rows carry what peers and engines wrote)."""
    rows = [[printable(c) for c in row] for row in rows]
    widths = [max(len(str(c)) for c in col) for col in zip(headers, *rows, strict=False)]
    lines = ["  ".join(str(h).ljust(w) for h, w in zip(headers, widths, strict=False))]
    lines += ["  ".join(str(c).ljust(w) for c, w in zip(row, widths, strict=False)) for row in rows]
    return "\n".join(lines)


def on_off(value: str | None) -> bool | None:
    if value is None:
        return None
    return value.lower() in ("on", "true", "yes", "1")
