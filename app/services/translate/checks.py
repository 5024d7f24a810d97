"""The checks a request field is given in its table (fields.py, fields_dialects.py): its type, range
or shape, with the words an error says (``'options.temperature' must be a number``) and the README's
field tables show. A check names the field by its path in the body, e.g. ``messages[2].content``.

``sample`` is a value the check takes; tests build a body from it around the one wrong value.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import cast

from app.services.errors import PairwiseError


class InvalidRequest(PairwiseError):
    """A request field of the wrong type or value; ``field`` is its path in the body."""

    title = "Invalid request"
    status = 400

    def __init__(self, field: str, expected: str) -> None:
        message = f"the request has no '{field}'" if expected == "present" else f"'{field}' must be {expected}"
        super().__init__(f"invalid request: {message}")
        self.field = field


class Check:
    """Raises InvalidRequest(path, self.what) for a value it does not take."""

    what = "anything"
    sample: object = None

    def __call__(self, value: object, path: str) -> None:
        raise NotImplementedError


class Kind(Check):
    def __init__(self, what: str, test: Callable[[object], bool], sample: object) -> None:
        self.what, self.test, self.sample = what, test, sample

    def __call__(self, value: object, path: str) -> None:
        if not self.test(value):
            raise InvalidRequest(path, self.what)


class Range(Check):
    """A number (or an integer) from ``low`` to ``high``, either end open when None."""

    def __init__(self, kind: Kind, low: float | None, high: float | None) -> None:
        self.kind, self.low, self.high = kind, low, high
        bounds = (f"from {_num(low)} to {_num(high)}" if low is not None and high is not None else
                  f"of at least {_num(low)}" if low is not None else f"of at most {_num(high)}")
        self.what = f"{kind.what} {bounds}"
        self.sample = low if low is not None else high

    def __call__(self, value: object, path: str) -> None:
        self.kind(value, path)
        number = cast(float, value)  # the kind (a number or an integer) took it
        if (self.low is not None and number < self.low) or (self.high is not None and number > self.high):
            raise InvalidRequest(path, self.what)


def _num(bound: float | None) -> str:
    return str(int(bound)) if bound is not None and float(bound).is_integer() else str(bound)


class ListOf(Check):
    def __init__(self, item: Check, what: str) -> None:
        self.item, self.what, self.sample = item, f"a list of {what}", [item.sample]

    def __call__(self, value: object, path: str) -> None:
        if not isinstance(value, list):
            raise InvalidRequest(path, self.what)
        for index, element in enumerate(value):
            self.item(element, f"{path}[{index}]")


class OneOf(Check):
    def __init__(self, what: str, *checks: Check) -> None:
        self.what, self.checks, self.sample = what, checks, checks[0].sample

    def __call__(self, value: object, path: str) -> None:
        for candidate in self.checks:
            try:
                candidate(value, path)
                return
            except InvalidRequest:
                continue
        raise InvalidRequest(path, self.what)


class Fields(Check):
    """An object whose listed fields, when present and not null, pass their checks. ``loose``: only
    when the value is an object at all (another check said what it must be)."""

    what = "an object"

    def __init__(self, spec: Mapping[str, Check], required: tuple[str, ...] = (), loose: bool = False) -> None:
        self.spec, self.required, self.loose = dict(spec), required, loose
        self.sample = {name: self.spec[name].sample for name in required if name in self.spec}

    def __call__(self, value: object, path: str) -> None:
        if not isinstance(value, dict):
            if self.loose:
                return
            raise InvalidRequest(path or "body", "an object")
        prefix = f"{path}." if path else ""
        for name in self.required:
            if value.get(name) is None:
                raise InvalidRequest(prefix + name, "present")
        for name, field_check in self.spec.items():
            if value.get(name) is not None:
                field_check(value[name], prefix + name)


class Each(Check):
    """Each element of a list passes ``item`` (a value that is no list is another check's to judge)."""

    def __init__(self, item: Check) -> None:
        self.item = item

    def __call__(self, value: object, path: str) -> None:
        for index, element in enumerate(value if isinstance(value, list) else []):
            self.item(element, f"{path}[{index}]")


class AllOf(Check):
    def __init__(self, *checks: Check) -> None:
        self.checks = checks
        self.what = checks[0].what
        self.sample = next((c.sample for c in checks if c.sample is not None), None)

    def __call__(self, value: object, path: str) -> None:
        for check in self.checks:
            check(value, path)


def _is_int(value: object) -> bool:
    return isinstance(value, int) and not isinstance(value, bool)


def _is_number(value: object) -> bool:
    return isinstance(value, (int, float)) and not isinstance(value, bool)


def choice(*values: str) -> Kind:
    words = [f'"{v}"' for v in values]
    what = words[0] if len(words) == 1 else ", ".join(words[:-1]) + " or " + words[-1]
    return Kind(what, lambda v: v in values, values[0])


def number(low: float | None = None, high: float | None = None) -> Check:
    return NUMBER if low is None and high is None else Range(NUMBER, low, high)


def integer(low: int | None = None, high: int | None = None) -> Check:
    return INT if low is None and high is None else Range(INT, low, high)


STRING = Kind("a string", lambda v: isinstance(v, str), "x")
BOOL = Kind("true or false", lambda v: isinstance(v, bool), True)
INT = Kind("an integer", _is_int, 1)
NUMBER = Kind("a number", _is_number, 0.5)
OBJECT = Kind("an object", lambda v: isinstance(v, dict), {})
NULL_OR_STRING = Kind("a string or null", lambda v: v is None or isinstance(v, str), "x")
MODEL = Kind("a model name (a non-empty string)", lambda v: isinstance(v, str) and bool(v.strip()), "oa-model")
list_of = ListOf
one_of = OneOf
fields = Fields

STOP = one_of("a string or a list of strings", STRING, list_of(STRING, "strings"))
STRINGS = list_of(STRING, "strings")
INTS = list_of(INT, "integers")
TEXT_OR_TEXTS = one_of("a string or a list of strings", STRING, STRINGS)
FUNCTION = fields({"name": STRING, "description": STRING, "parameters": OBJECT}, required=("name",))
TOOLS = list_of(fields({"type": STRING, "function": FUNCTION}), "tool objects")
THINK = one_of("true, false, \"low\", \"medium\" or \"high\"", BOOL, choice("low", "medium", "high"))
KEEP_ALIVE = one_of("a duration (\"5m\") or a number of seconds", STRING, NUMBER)
OLLAMA_TOOL_CALLS = list_of(fields({"function": fields({"name": STRING, "arguments": OBJECT}, required=("name",))},
                                   required=("function",)), "tool call objects")
OLLAMA_FORMAT = one_of("\"json\" or a JSON schema object", Kind("\"json\"", lambda v: v in ("json", ""), "json"),
                       OBJECT)
IMAGE_URL = one_of("an object with a 'url' (or a URL string)", STRING, fields({"url": STRING}, required=("url",)))
CONTENT = one_of("a string, a list of content parts or null", NULL_OR_STRING, list_of(OBJECT, "content part objects"))
OPENAI_TOOL_CALLS = list_of(fields({"id": STRING, "type": STRING,
                                    "function": fields({"name": STRING, "arguments": STRING}, required=("name",))},
                                   required=("function",)), "tool call objects")
TOOL_CHOICE = one_of("\"none\", \"auto\", \"required\" or a tool object", choice("none", "auto", "required"),
                     fields({"type": STRING, "function": fields({"name": STRING}, required=("name",))}))
PROMPT = one_of("a string, a list of strings or a list of token ids", STRING, STRINGS, INTS,
                list_of(INTS, "lists of token ids"))
MESSAGES = list_of(OBJECT, "message objects")
