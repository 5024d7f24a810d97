"""The helper a real-engine test uses to check a constrained answer cut by its token budget."""

from __future__ import annotations

import json
import random

from tests.support.json_prefix import is_json_object_prefix, is_json_prefix


def random_value(rng: random.Random, depth: int = 0) -> object:
    kind = rng.randrange(8 if depth < 3 else 5)
    if kind == 0:
        return rng.choice([True, False, None])
    if kind == 1:
        return rng.randint(-10**6, 10**6)
    if kind == 2:
        return rng.uniform(-1e6, 1e6) * rng.choice([1, 1e-9, 1e12])
    if kind in (3, 4):
        return "".join(rng.choice('ab "\\\n\té€😀/') for _ in range(rng.randrange(6)))
    if kind in (5, 6):
        return {f"k{rng.randrange(9)}\"": random_value(rng, depth + 1)
                for _ in range(rng.randrange(4))}
    return [random_value(rng, depth + 1) for _ in range(rng.randrange(4))]


def test_every_prefix_of_a_document_is_a_prefix() -> None:
    rng = random.Random(7)
    for _ in range(300):
        value = random_value(rng)
        for text in (json.dumps(value), json.dumps(value, indent=2), json.dumps(value, ensure_ascii=False)):
            for cut in range(len(text) + 1):
                assert is_json_prefix(text[:cut]), text[:cut]


def test_what_no_continuation_can_mend_is_refused() -> None:
    for broken in ['{"a" 1', '{"a": 1 "b"', "[1,,", '{,', "nulx", '{"a": tru e}', "[1]]", '{"a":1}}',
                   '"\\x', "01", '{"a": [}', "{1: 2}", '{"a": "b\n"}', "{} {}", "]", "-a"]:
        assert not is_json_prefix(broken), broken


def test_an_object_prefix_starts_an_object() -> None:
    assert is_json_object_prefix('{"user": "Suffering from a genetic disorder, ')
    assert not is_json_object_prefix("")
    assert not is_json_object_prefix('["a"')
