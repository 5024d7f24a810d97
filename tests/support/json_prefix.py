"""Is a text valid JSON as far as it goes?

A real engine constrained to JSON stops where its token budget ends, which on one CPU is after the
closing brace and on another inside a string: greedy decoding differs between CPUs. A test of a
constrained answer therefore checks that the text is a prefix of some JSON document (and, where the
engine says it stopped on its own, that it is a whole one), never what the model wrote.
"""

from __future__ import annotations

import json

_LITERALS = ("true", "false", "null")


def _close_number(tail: str) -> str:
    # A number cut after '-', '.', 'e', 'e+' or 'e-' needs a digit to be whole.
    return "0" if tail and tail[-1] in "-+.eE" else ""


def completion_of(prefix: str) -> str | None:
    """The shortest text that turns `prefix` into a JSON document under the usual grammar, or None
    when no text can (the prefix already broke the grammar)."""
    stack: list[str] = []  # '{' or '[' for each open container
    expect_key = False  # inside an object, before a key
    after_key = False  # a key was read; ':' is due
    after_colon_or_start = True  # a value is due
    in_string = False
    escape = False
    unicode_left = 0
    literal = ""
    number = ""
    i = 0
    text = prefix.lstrip()
    while i < len(text):
        ch = text[i]
        if in_string:
            if unicode_left:
                if ch not in "0123456789abcdefABCDEF":
                    return None
                unicode_left -= 1
            elif escape:
                if ch == "u":
                    unicode_left = 4
                elif ch not in '"\\/bfnrt':
                    return None
                escape = False
            elif ch == "\\":
                escape = True
            elif ch == '"':
                in_string = False
                if expect_key:
                    expect_key, after_key = False, True
            elif ord(ch) < 0x20:
                return None
            i += 1
            continue
        if literal:
            whole = next((w for w in _LITERALS if w.startswith(literal)), "")
            if len(literal) < len(whole):
                if whole.startswith(literal + ch):
                    literal += ch
                    i += 1
                    continue
                return None
            literal = ""
        if number:
            if ch in "0123456789+-.eE":
                number += ch
                i += 1
                continue
            try:
                float(number + _close_number(number))
            except ValueError:
                return None
            number = ""
        if ch in " \t\r\n":
            i += 1
            continue
        if after_key:
            if ch != ":":
                return None
            after_key, after_colon_or_start = False, True
        elif expect_key:
            if ch == '"':
                in_string = True
            elif ch == "}" and stack and stack[-1] == "{" and text[:i].rstrip().endswith("{"):
                stack.pop()
                expect_key = False
                after_colon_or_start = False
            else:
                return None
        elif after_colon_or_start:
            if ch == "{":
                stack.append("{")
                expect_key, after_colon_or_start = True, False
            elif ch == "[":
                stack.append("[")
            elif ch == "]" and stack and stack[-1] == "[" and text[:i].rstrip().endswith("["):
                stack.pop()
                after_colon_or_start = False
            elif ch == '"':
                in_string, after_colon_or_start = True, False
            elif ch in "tfn":
                literal, after_colon_or_start = ch, False
            elif ch in "-0123456789":
                number, after_colon_or_start = ch, False
            else:
                return None
        else:  # a value ended: ',' or a closer is due
            if not stack:
                return None
            if ch == ",":
                if stack[-1] == "{":
                    expect_key = True
                else:
                    after_colon_or_start = True
            elif (ch == "}" and stack[-1] == "{") or (ch == "]" and stack[-1] == "["):
                stack.pop()
            else:
                return None
        i += 1
    end = ""
    if in_string:
        if unicode_left:
            end += "0" * unicode_left
        elif escape:
            end += "n"
        end += '"'
        if expect_key:
            expect_key, after_key = False, True
    if literal:
        end += next(w for w in _LITERALS if w.startswith(literal))[len(literal):]
    if number:
        end += _close_number(number)
    if after_key:
        end += ":null"
    elif expect_key and not text.rstrip().endswith("{"):
        end += '"k":null'
    elif after_colon_or_start and stack and not text.rstrip().endswith("["):
        end += "null"
    elif after_colon_or_start and not stack:
        end += "null"
    end += "".join("}" if c == "{" else "]" for c in reversed(stack))
    return end


def is_json_prefix(text: str) -> bool:
    """True when some continuation makes `text` valid JSON."""
    end = completion_of(text)
    if end is None:
        return False
    try:
        json.loads(text + end)
    except ValueError:
        return False
    return True


def is_json_object_prefix(text: str) -> bool:
    """True when `text` is a JSON object as far as it goes."""
    return text.lstrip().startswith("{") and is_json_prefix(text)
