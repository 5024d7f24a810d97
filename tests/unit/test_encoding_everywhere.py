"""Every text file the node reads or writes names its encoding (UTF-8), whatever the code page.

Without ``encoding=`` Python uses the locale's: cp1252 or cp932 on Windows, so a settings file or a
rented node's YAML with "Á" in a comment fails to load there (``UnicodeDecodeError``), and a name
written in one code page is read back wrong in another. This walks the source of ``app/`` and
names each text-mode open, read or write that leaves the encoding to the locale.
"""

from __future__ import annotations

import ast
from pathlib import Path

APP = Path(__file__).resolve().parents[2] / "app"
NOT_YET: set[str] = set()  # files the scan may skip (none: every text file names its encoding)
TEXT_MODES = {m + plus for m in "rwax" for plus in ("", "+", "t", "t+")}
TEXT_APIS = {"read_text", "write_text"}
HANDLERS = {"FileHandler", "RotatingFileHandler", "TimedRotatingFileHandler", "TextIOWrapper"}
SUBPROCESS = {"run", "Popen", "check_output", "create_subprocess_exec", "create_subprocess_shell"}


def _keywords(call: ast.Call) -> dict[str, ast.expr]:
    return {k.arg: k.value for k in call.keywords if k.arg}


def _text_mode(mode: ast.expr | None) -> bool:
    if mode is None:
        return True  # "r"
    return isinstance(mode, ast.Constant) and isinstance(mode.value, str) and "b" not in mode.value


def _true(node: ast.expr | None) -> bool:
    return isinstance(node, ast.Constant) and node.value is True


def locale_dependent(call: ast.Call) -> bool:
    """Whether this call reads or writes text in the locale's encoding."""
    kw = _keywords(call)
    if "encoding" in kw:
        return False
    func = call.func
    name = func.id if isinstance(func, ast.Name) else func.attr if isinstance(func, ast.Attribute) else ""
    if isinstance(func, ast.Name) and name == "open":  # open(path, mode)
        return _text_mode(kw.get("mode", call.args[1] if len(call.args) > 1 else None))
    if name == "fdopen":
        return _text_mode(kw.get("mode", call.args[1] if len(call.args) > 1 else None))
    if isinstance(func, ast.Attribute) and name == "open":  # Path.open(mode): only with a literal mode
        mode = kw.get("mode", call.args[0] if call.args else None)
        return isinstance(mode, ast.Constant) and mode.value in TEXT_MODES
    if isinstance(func, ast.Attribute) and name in TEXT_APIS:  # Path's (app.services.platform.files' are UTF-8)
        return True
    if name in HANDLERS:
        return True
    if name in SUBPROCESS:
        return _true(kw.get("text")) or _true(kw.get("universal_newlines"))
    return False


def offenders(source: str) -> list[int]:
    return [node.lineno for node in ast.walk(ast.parse(source))
            if isinstance(node, ast.Call) and locale_dependent(node)]


def test_every_text_open_in_app_names_its_encoding() -> None:
    found = []
    for path in sorted(APP.rglob("*.py")):
        relative = path.relative_to(APP).as_posix()
        if relative in NOT_YET:
            continue
        found += [f"app/{relative}:{line}" for line in offenders(path.read_text(encoding="utf-8"))]
    assert not found, "text read or written in the locale's encoding (add encoding=\"utf-8\"):\n" + "\n".join(found)


def test_the_check_sees_each_way_of_leaving_the_encoding_out() -> None:
    bad = [
        "open(p)", "open(p, 'w')", "open(p, mode='a')", "p.read_text()", "p.write_text(s)",
        "p.open('r')", "os.fdopen(fd, 'w')", "RotatingFileHandler(p, maxBytes=1)",
        "subprocess.run(c, text=True)", "io.TextIOWrapper(b)",
    ]
    good = [
        "open(p, 'rb')", "open(p, encoding='utf-8')", "p.read_text(encoding='utf-8')", "p.read_bytes()",
        "p.write_text(s, encoding='utf-8')", "os.fdopen(fd, 'wb')", "tracker.open(model=m)", "meter.open('RUNNING', at)", "read_text(path)",
        "subprocess.run(c, capture_output=True)", "subprocess.run(c, text=True, encoding='utf-8')",
        "RotatingFileHandler(p, encoding='utf-8')",
    ]
    assert [s for s in bad if not offenders(s)] == []
    assert [s for s in good if offenders(s)] == []
