from __future__ import annotations

import os
import subprocess
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest

from app.environment import reread_environment
from app.harness import NodeProc, TinyProc
from tests.support import lanes
from tests.support.patience import patience

pytest_plugins = ["pytester"]  # tests/unit/test_lanes.py collects the suite afresh

# The Windows lane's suite (tests/windows) runs under Wine through scripts/test-windows.sh, which sets
# PAIRWISE_WINDOWS_LANE; the Linux suite leaves it alone.
collect_ignore = [] if os.environ.get("PAIRWISE_WINDOWS_LANE") else ["windows"]

os.environ.setdefault("PAIRWISE_MDNS", "off")
os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    lanes.classify(items)


def pytest_ignore_collect(collection_path: Path, config: pytest.Config) -> bool | None:
    return True if lanes.left_out(collection_path, config) else None


@pytest.fixture(autouse=True)
def _own_spend_accounts(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Each test (and the node processes it starts) has its own shared spend file, never the user's."""
    monkeypatch.setenv("PAIRWISE_SPEND_DIR", str(tmp_path / "spend"))
    reread_environment()  # in-process nodes read the snapshot


@pytest.fixture(scope="module", params=["splice", "aiohttp"])
def data_path(request: pytest.FixtureRequest) -> Iterator[str]:
    """Which way the nodes a module starts write pass-through streams: the splice (the default) or
    aiohttp's client and server (PAIRWISE_SPLICE=off). A fault test that asks for it runs on both."""
    with pytest.MonkeyPatch.context() as patch:
        patch.setenv("PAIRWISE_SPLICE", "on" if request.param == "splice" else "off")
        yield str(request.param)


@pytest.fixture
def tiny_factory() -> Iterator[type[TinyProc]]:
    started: list[TinyProc] = []

    class Factory(TinyProc):
        def __init__(self, *args: str) -> None:
            super().__init__(*args)
            started.append(self)

    yield Factory
    for tiny in started:
        tiny.stop()


@pytest.fixture
def node_factory(tmp_path: Path) -> Iterator[type[NodeProc]]:
    started: list[NodeProc] = []

    class Factory(NodeProc):
        def __init__(self, name: str, *extra: str, env: dict[str, str] | None = None, home: Path | None = None,
                     preexec: Callable[[], None] | None = None) -> None:
            super().__init__(home or tmp_path / f"home-{name}", name, *extra, env=env, preexec=preexec)
            started.append(self)

        # A command-line call is a fresh interpreter (imports, a control round trip): a minute on a loaded
        # machine, so its ceiling scales with the load like every other wait (tests/support/patience.py).
        def cli(self, *args: str, stdin: str | None = None, check: bool = True,
                timeout: float = 60) -> subprocess.CompletedProcess[str]:
            return super().cli(*args, stdin=stdin, check=check, timeout=patience(timeout))

        def start(self, *, wait_answer: bool = False, timeout: float = 60.0) -> NodeProc:
            return super().start(wait_answer=wait_answer, timeout=patience(timeout))

    yield Factory
    for node in started:
        node.stop()
