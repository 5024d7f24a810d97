"""The tray's budget editor, `pairwise rented set` and ``PATCH /rented/{name}`` spell a cap one way and
land the same cap on the same node; the tray removes a cap as the CLI does ("off"), after asking; a
misspelt cap sent to the node changes nothing the tray shows."""

from __future__ import annotations

import asyncio
import json
import sys
from typing import Any

import pytest
from PySide6.QtWidgets import QMessageBox

from app.cli import build_parser
from app.cli_rented import set_changes
from app.control_client import ControlClient
from app.harness import REPO as REPO_DIR
from app.harness import child_env
from app.services.errors import ConfigError
from app.simulator import SimulatedHF
from app.ui import dialogs
from app.ui.views import budget_edit
from tests.ui.conftest import until
from tests.ui.helpers import running_gpu


async def cli(app: Any, *args: str) -> str:
    """`pairwise ...` in its own process against the tray's node."""
    proc = await asyncio.create_subprocess_exec(
        sys.executable, "-m", "app", "--home", str(app.node.home.root), *args, cwd=REPO_DIR, env=child_env(),
        stdout=asyncio.subprocess.PIPE, stderr=asyncio.subprocess.PIPE)
    out, err = await proc.communicate()
    assert proc.returncode == 0, err.decode()
    return out.decode()


async def listed_budget(app: Any) -> dict[str, Any]:
    [row] = [r for r in json.loads(await cli(app, "rented", "list", "--json")) if r["name"] == "gpu"]
    return row["budget"]  # type: ignore[no-any-return]


def cli_body(*flags: str) -> dict[str, Any]:
    """What `pairwise rented set gpu FLAGS` sends as its changes."""
    return set_changes(build_parser().parse_args(["rented", "set", "gpu", *flags])).model_dump(mode="json",
                                                                                                 exclude_none=True)


async def test_tray_cli_and_route_land_the_same_cap(sim: SimulatedHF, make_app: Any) -> None:
    app = await make_app()
    await running_gpu(app, sim, usd_per_day=5, idle_pause_min=30)
    app.open_window()
    app.window.show_node("gpu")
    detail = app.window.detail

    detail.day_cap.setValue(7.5)
    tray_body = budget_edit.rented_change(detail.edits()).model_dump(mode="json", exclude_none=True)
    assert tray_body == cli_body("--budget-usd-per-day", "7.5") == {"budget": {"usd_per_day": 7.5}}
    detail.apply_settings()
    await until(lambda: app.facade.rented_row("gpu")["budget"]["usd_per_day"] == 7.5, what="the tray's cap")
    assert await listed_budget(app) == {"usd_per_day": 7.5, "usd_per_month": None}

    await cli(app, "rented", "set", "gpu", "--budget-usd-per-day", "8.25")
    assert app.facade.rented_row("gpu")["budget"]["usd_per_day"] == 8.25
    await until(lambda: detail.day_cap.value() == 8.25, what="the tray's field showing the CLI's cap")

    control = ControlClient(app.node.home)
    row = await asyncio.to_thread(control.call, "PATCH", "/rented/gpu", {"changes": {"budget": {"usd_per_month": 90}}})
    assert row["budget"] == app.facade.rented_row("gpu")["budget"] == {"usd_per_day": 8.25, "usd_per_month": 90.0}
    with pytest.raises(ConfigError, match="budget.usd_per_mnth: Extra inputs are not permitted"):
        await asyncio.to_thread(control.call, "PATCH", "/rented/gpu",
                                {"changes": {"budget": {"usd_per_day": 1, "usd_per_mnth": 1}}})
    assert app.facade.rented_row("gpu")["budget"] == {"usd_per_day": 8.25, "usd_per_month": 90.0}
    assert app.facade.rented_row("gpu")["lifecycle"]["idle_pause_min"] == 30  # never touched by any of them

    # Removing a cap from the tray is asked first, and sends what the CLI's "off" sends.
    await until(lambda: detail.month_cap.value() == 90, what="the tray's field showing the route's cap")
    detail.month_cap.setValue(0)
    assert budget_edit.rented_change(detail.edits()).model_dump(mode="json", exclude_none=True) == cli_body(
        "--budget-usd-per-month", "off") == {"budget": {"usd_per_month": "off"}}
    detail.apply_settings()
    box = await until(lambda: dialogs.ACTIVE[-1] if dialogs.ACTIVE else None, what="the question")
    assert isinstance(box, QMessageBox) and box.text().startswith("Remove its monthly budget ($90.00/month)?")
    next(b for b in box.buttons() if b.text() == "Remove the cap").click()
    await until(lambda: app.facade.rented_row("gpu")["budget"]["usd_per_month"] is None, what="the cap removed")
    assert await listed_budget(app) == {"usd_per_day": 8.25, "usd_per_month": None}
