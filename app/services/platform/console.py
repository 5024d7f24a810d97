"""The process's own console and pipe output: every character reaches it, whatever the code page.

Python writes ``sys.stdout``/``sys.stderr`` in the console's Unicode API when they are a Windows
console, but in the ANSI code page (cp1252, cp932...) or the C locale's encoding when they are
redirected: a log file, a scheduled task, a pipe. A node named "Zoë's 工作站" then dies with
``UnicodeEncodeError`` on its first line after the front door opened (CI's ``PYTHONUTF8=1`` hid
that). So, once at start:

* redirected output with no encoding chosen by the user is written as UTF-8, what ``PYTHONUTF8``
  and Python 3.15's default give and what every log reader and pipe consumer here expects;
* an encoding the user chose (``PYTHONIOENCODING``) or a terminal's is kept, and a character it
  cannot hold is written as a ``\\u`` escape instead of ending the process.
"""

from __future__ import annotations

import io
import os
import sys
from typing import TextIO


def setup_console_output() -> None:
    """Make stdout and stderr unable to fail on a character (call once, first thing in ``main``)."""
    for stream in (sys.stdout, sys.stderr):
        _reconfigure(stream)


def _reconfigure(stream: TextIO | None) -> None:
    if not isinstance(stream, io.TextIOWrapper):
        return  # pythonw (None), or a test's capture: nothing to fix there
    chosen = bool(os.environ.get("PYTHONIOENCODING"))
    try:
        interactive = stream.isatty()
    except ValueError:
        return  # closed
    if interactive or chosen:
        stream.reconfigure(errors="backslashreplace")
    else:
        stream.reconfigure(encoding="utf-8", errors="backslashreplace")



def typed_text(arg: str) -> str:
    """An argument that is text, not a path (a node's name), as typed. Windows hands Python its
    command line as UTF-16; POSIX as bytes decoded in the locale's encoding, so under an ASCII
    locale (``LC_ALL=C`` without UTF-8 mode) "Zoë" arrives as surrogate escapes that neither a file
    nor a certificate can hold. Those bytes are UTF-8 on every desktop this runs on; bytes that are
    not stay as they came. (Paths keep their escapes: they name the file as the OS spells it.)"""
    if not any("\udc80" <= ch <= "\udcff" for ch in arg):
        return arg
    try:
        return os.fsencode(arg).decode("utf-8")
    except UnicodeError:
        return arg
