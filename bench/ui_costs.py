"""What the tray costs: per bus event on the request path (the bridge and its slots run inside
EventBus.publish), and per tray-menu rebuild / window refresh, with a node holding job history.

    QT_QPA_PLATFORM=offscreen .venv/bin/python bench/ui_costs.py [--jobs 2000] [--events 20000]

Prints ratios and per-operation times; no assertions (speed lives here, not in tests).
"""

from __future__ import annotations

import argparse
import os
import sys
import tempfile
import time
from pathlib import Path

os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")
os.environ.setdefault("PAIRWISE_MDNS", "off")
sys.path.insert(0, str(Path(__file__).resolve().parents[1]))


async def measure(jobs: int, events: int) -> None:
    from app.home import Home
    from app.services.bootstrap import build_node
    from app.services.events import WorkloadRunning
    from app.services.jobs.requester import local_app
    from app.ui.app import TrayApp

    home = Path(tempfile.mkdtemp(prefix="pairwise-bench-ui-"))
    node = build_node(Home(home), listen="127.0.0.1:0", cluster_listen="127.0.0.1:0", name="bench", mdns=False)
    await node.start()
    for i in range(jobs):  # history the views read
        job = node.tracker.open(model=f"m{i % 7}", api="openai", requester=local_app(node.node_id, "bench", "bench"))
        node.tracker.finish(job, "completed", prompt_tokens=3, completion_tokens=12)
    record = node.jobs.list(limit=1)[0].to_json()

    def publish_loop() -> float:
        start = time.perf_counter()
        for _ in range(events):
            node.bus.publish(WorkloadRunning(job=record))
        return (time.perf_counter() - start) / events

    bare = publish_loop()
    app = TrayApp(node, notify_sink=lambda note: None, tray_wait_s=3600)
    app.tray.start()
    with_ui = publish_loop()
    print(f"bus publish, no UI:         {bare * 1e6:7.2f} µs/event")
    print(f"bus publish, tray attached: {with_ui * 1e6:7.2f} µs/event  ({with_ui / bare:.1f}x; 3 events per request)")

    def timed(label: str, fn: object, n: int = 50) -> None:
        start = time.perf_counter()
        for _ in range(n):
            fn()  # type: ignore[operator]
        print(f"{label:<28}{(time.perf_counter() - start) / n * 1e3:7.2f} ms")

    timed("tray menu rebuild:", app.tray.rebuild)
    timed("tray icon refresh:", app.tray.refresh)
    app.window.show()
    timed("window refresh (Nodes):", app.window.refresh)
    app.window.tabs.setCurrentIndex(1)
    timed(f"window refresh (Jobs, {min(jobs, 100)}):", app.window.refresh, 20)
    print(f"(job history: {jobs} records)")
    await app.quit()


def main() -> int:
    parser = argparse.ArgumentParser()
    parser.add_argument("--jobs", type=int, default=2000)
    parser.add_argument("--events", type=int, default=20000)
    args = parser.parse_args()
    import qasync
    from PySide6.QtWidgets import QApplication

    app = QApplication(["bench"])
    loop = qasync.QEventLoop(app)
    with loop:
        loop.run_until_complete(measure(args.jobs, args.events))
    return 0


if __name__ == "__main__":
    sys.exit(main())
