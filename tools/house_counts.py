"""The house's counts, as docs/architecture.md ("Counts") writes them: run ``python -m tools.house_counts``
from the repository's root (``--list`` names the files and methods behind each count).

- files outside a provider's folder that name Hugging Face: files of ``app/`` outside Hugging Face's
  folders (``PROVIDER_FOLDERS``: its service side ``app/services/hf/`` with its part of the service API,
  routes, events and errors; its tray pages ``app/ui/hf/``; its commands ``app/cli_hf/``; the simulated
  Hugging Face ``app/simulator/``) whose text says "Hugging Face"/"huggingface", the word ``hf``
  (``hf_rented``, ``/hf/jobs``) or an ``Hf...`` name; a line of ``NOT_THE_PROVIDER`` (the word ``hf`` where
  it is not the provider, each with why) is passed over, the rest of its file still counts, and one
  that no longer is in its file is reported as stale;
- import circles: groups of modules of ``app/`` that import each other, however far round, type-only
  and lazy imports included (the walk of ``tests/unit/test_import_rules.py``);
- methods returning ``dict[str, Any]``: methods of the service API (``app/services/api/``) and of the
  tray's facade (``app/ui/facade.py``) whose return type has a ``dict[str, Any]`` in it, or an alias of one;
- ``Any`` per thousand lines: each ``Any`` in the code of ``app/`` (annotations, casts) over its lines;
- broad catches: ``except Exception`` and ``suppress(Exception)`` in ``app/`` (the simulator aside).
"""

from __future__ import annotations

import argparse
import ast
import re
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))

from tests.unit.test_import_rules import circles, dependencies  # noqa: E402

APP = REPO / "app"
PROVIDER_FOLDERS = (APP / "services" / "hf", APP / "ui" / "hf", APP / "cli_hf", APP / "simulator")
HF_WORDS = (re.compile(r"hugging\s*face", re.I), re.compile(r"(?<![a-z0-9])hf(?![a-z0-9])", re.I),
            re.compile(r"\bHf[A-Z]"))
LOOSE = "dict[str, Any]"
# The word hf where it is not the provider: (file, the exact line, why). Only that line is passed over.
NOT_THE_PROVIDER = (
    ("app/services/routing/suggest.py",
     '"hf": "converted to the transformers format, a tag of the name, not where it runs (Llama-2-7b-chat-hf)",',
     "the -hf tag of model names (weights converted to the transformers format) is dropped when names are "
     "compared; it is a model-name tag, not the provider"),
)


def app_files() -> list[Path]:
    return sorted(APP.rglob("*.py"))


def naming_hugging_face() -> list[str]:
    found = []
    for path in app_files():
        if any(path.is_relative_to(folder) for folder in PROVIDER_FOLDERS):
            continue
        name = str(path.relative_to(REPO))
        passed = {line for file, line, _why in NOT_THE_PROVIDER if file == name}
        text = "\n".join(line for line in path.read_text().splitlines() if line.strip() not in passed)
        if any(word.search(text) for word in HF_WORDS):
            found.append(name)
    return found


def not_the_provider() -> list[str]:
    """Each line passed over, with why (or that it is stale: no longer in its file)."""
    rows = []
    for file, line, why in NOT_THE_PROVIDER:
        path = REPO / file
        here = path.exists() and line in (text.strip() for text in path.read_text().splitlines())
        rows.append(f"{file}: {why}" if here else f"{file}: STALE, the line is gone: {line}")
    return rows


def loose_aliases() -> set[str]:
    """Module-level names that stand for a dict[str, Any] (``JobJson = dict[str, Any]``)."""
    names = set()
    for path in app_files():
        for node in ast.parse(path.read_text()).body:
            if (isinstance(node, ast.Assign) and len(node.targets) == 1 and isinstance(node.targets[0], ast.Name)
                    and LOOSE in ast.unparse(node.value)):
                names.add(node.targets[0].id)
    return names


def loose_returns() -> dict[str, list[str]]:
    aliases = loose_aliases()
    pattern = re.compile(r"dict\[str, Any\]|\b(" + "|".join(map(re.escape, sorted(aliases))) + r")\b") \
        if aliases else re.compile(r"dict\[str, Any\]")
    groups = {"service API": sorted((APP / "services" / "api").glob("*.py")), "tray facade": [APP / "ui" / "facade.py"]}
    found: dict[str, list[str]] = {}
    for group, paths in groups.items():
        found[group] = []
        for path in paths:
            for cls in ast.parse(path.read_text()).body:
                if not isinstance(cls, ast.ClassDef):
                    continue
                for method in cls.body:
                    if (isinstance(method, ast.FunctionDef | ast.AsyncFunctionDef) and method.returns is not None
                            and pattern.search(ast.unparse(method.returns))):
                        found[group].append(f"{path.relative_to(REPO)}::{cls.name}.{method.name}")
    return found


def any_count() -> tuple[int, int]:
    """(each ``Any`` named in app/'s code, app/'s lines)."""
    count = lines = 0
    for path in app_files():
        text = path.read_text()
        lines += text.count("\n")
        for node in ast.walk(ast.parse(text)):
            if isinstance(node, ast.Name) and node.id == "Any":
                count += 1
            elif isinstance(node, ast.Attribute) and node.attr == "Any":
                count += 1
            elif isinstance(node, ast.Constant) and isinstance(node.value, str) and node.value.startswith(("Any", "dict[str, Any")):
                count += len(re.findall(r"\bAny\b", node.value))  # a quoted annotation
    return count, lines


def broad_catches() -> list[str]:
    found = []
    for path in app_files():
        if path.is_relative_to(APP / "simulator"):
            continue
        for number, line in enumerate(path.read_text().splitlines(), 1):
            if re.search(r"except Exception\b|suppress\(Exception\)", line):
                found.append(f"{path.relative_to(REPO)}:{number}")
    return found


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--list", action="store_true", help="name what each count counts")
    listing = parser.parse_args().list
    hf = naming_hugging_face()
    groups = circles(dependencies())
    loose = loose_returns()
    anys, lines = any_count()
    catches = broad_catches()
    rows = [
        ("files outside a provider's folder that name Hugging Face", str(len(hf)), hf),
        ("lines passed over that say hf but not of the provider", str(len(NOT_THE_PROVIDER)), not_the_provider()),
        ("import circles", str(len(groups)), [", ".join(group) for group in groups]),
        *((f"{group} methods returning dict[str, Any]", str(len(methods)), methods) for group, methods in loose.items()),
        ("Any per thousand lines", f"{1000 * anys / lines:.1f} ({anys} in {lines} lines)", []),
        ("broad catches (except Exception, suppress(Exception))", str(len(catches)), catches),
    ]
    for what, value, items in rows:
        print(f"{what}: {value}")
        if listing:
            for item in items:
                print(f"    {item}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
