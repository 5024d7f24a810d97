"""A node named outside ASCII, its output redirected, on a code page that cannot hold the name
(issue 28, item 2): ``LC_ALL=C`` with ``PYTHONUTF8=0`` makes Python's locale encoding ASCII, as
cp1252 or cp932 are for "工作站" on Windows. Before the fix ``serve`` died with
``UnicodeEncodeError`` after the front door opened, and every later start too (the name is saved).
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

NAME = "Zoë 工作站"
# No UTF-8 mode, no encoding chosen: the locale's (ASCII here) is what Python would use.
CODE_PAGE = {"PYTHONUTF8": "0", "LC_ALL": "C", "LANG": "C", "PYTHONIOENCODING": ""}


def test_serve_and_status_with_a_non_ascii_name_and_output_redirected(node_factory: Any, tmp_path: Path) -> None:
    node = node_factory(NAME, env=CODE_PAGE, home=tmp_path / "home").start(wait_answer=True)
    status = node.cli("status")  # captured: a pipe, as a scheduled task or a log reader has
    assert f"name: {NAME}" in status.stdout
    node.stop()
    log = node.log.read_text(encoding="utf-8")  # redirected output is UTF-8, whatever the locale
    assert f"Pairwise node {NAME} serving on" in log and "UnicodeEncodeError" not in log
    assert node.start(wait_answer=True).control("GET", "/status")["name"] == NAME  # the saved name starts again


def test_an_encoding_the_user_chose_is_kept_and_what_it_cannot_hold_is_escaped(node_factory: Any, tmp_path: Path) -> None:
    node = node_factory(NAME, env={**CODE_PAGE, "PYTHONIOENCODING": "ascii"}, home=tmp_path / "home").start(wait_answer=True)
    status = node.cli("status")
    assert "name: Zo\\xeb \\u5de5\\u4f5c\\u7ad9" in status.stdout
    node.stop()
    assert "Pairwise node Zo\\xeb \\u5de5\\u4f5c\\u7ad9 serving on" in node.log.read_text(encoding="utf-8")
