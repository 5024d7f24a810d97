"""A wrong PIN is seen on the inviting machine: a second node process types wrong PINs at an open
invite; the inviting tray says each one (from where, how many tries are left, when the invite ends),
and the void after the last."""

from __future__ import annotations

import asyncio
import sys
from typing import Any

from app.harness import REPO as REPO_DIR
from app.harness import child_env
from app.ui import dialogs
from tests.ui.conftest import until


async def wrong_join(other: Any, address: str, pin: str) -> str:
    """The other node (its own process) tries ``pin``; it must be refused. Its error, as it printed it."""
    join = await asyncio.create_subprocess_exec(
        sys.executable, "-m", "app", "--home", str(other.home), "pair", "join", address, "--pin", pin,
        cwd=REPO_DIR, env=child_env(), stdout=asyncio.subprocess.PIPE, stderr=asyncio.subprocess.PIPE)
    out, err = await join.communicate()
    assert join.returncode != 0, out.decode()
    return err.decode() + out.decode()


async def test_each_wrong_pin_is_shown_on_the_inviting_machine_then_the_void(make_app: Any,
                                                                             node_factory: Any) -> None:
    app = await make_app()
    other = node_factory("laptop").start()
    app.open_window()
    app.window.tabs.setCurrentIndex(2)
    app.window.settings.invite_button.click()
    dialog = await until(lambda: dialogs.ACTIVE[-1] if dialogs.ACTIVE else None, what="the invite dialog")
    await until(lambda: dialog.pin.text()[:1].isdigit(), what="the PIN")
    pin = dialog.pin.text().replace(" ", "")
    wrong = f"{(int(pin) + 1) % 1_000_000:06d}"
    address = dialog.address.text().removeprefix("Address: ")
    assert not dialog.wrong.isVisible()

    said = await wrong_join(other, address, wrong)
    assert "wrong PIN" in said and "2 tries left" in said
    note = await until(lambda: next((n for n in app.sent if n.title == "Wrong PIN tried on your invite"), None),
                       what="the tray's notification")
    assert note.message.startswith("Someone at 127.0.0.1 typed a wrong PIN. 2 tries left: after that the invite is "
                                   "voided") and "It ends anyway at " in note.message and note.level == "warning"
    await until(lambda: dialog.wrong.isVisible(), what="the dialog's line")
    assert dialog.wrong.text().startswith("1 wrong PIN tried from 127.0.0.1. 2 tries left")
    assert "good for" in dialog.status.text()  # still open: the right PIN would still pair

    await wrong_join(other, address, wrong)
    await until(lambda: "2 wrong PINs tried" in dialog.wrong.text(), what="the second wrong PIN")
    assert "1 try left" in dialog.wrong.text()
    await wrong_join(other, address, wrong)
    await until(lambda: "Pairing invite voided" in app.sent.titles(), what="the void")
    voided = next(n for n in app.sent if n.title == "Pairing invite voided")
    assert "Too many wrong PINs from 127.0.0.1" in voided.message
    assert [n.title for n in app.sent].count("Wrong PIN tried on your invite") == 2  # the last one is the void
    await until(lambda: dialog.wrong.text().startswith("Invite voided: too many wrong PINs from 127.0.0.1"),
                what="the dialog says the invite is void")
    dialog.reject()
