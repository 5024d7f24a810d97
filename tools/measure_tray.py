"""The tray app's cost at rest: launch to a running node with its tray, resident memory, and CPU
over a quiet minute. Starts ``pairwise`` (the tray app) with a temporary home, offscreen unless a
DISPLAY is set, and reads the process from /proc (Linux).

    .venv/bin/python tools/measure_tray.py [--idle-s 60]

Prints one JSON object: launch_s, rss_mb, idle_cpu_pct (of one core) and the load average it ran
under, so a figure is never read without the machine's state beside it.
"""

from __future__ import annotations

import argparse
import json
import os
import signal
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
TICKS = os.sysconf("SC_CLK_TCK")


def cpu_seconds(pid: int) -> float:
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / TICKS  # utime + stime


def rss_mb(pid: int) -> float:
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1]) / 1024
    return 0.0


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--idle-s", type=float, default=60.0)
    parser.add_argument("--demo", action="store_true", help="measure `pairwise demo` (simulated HF, tiny model)")
    args = parser.parse_args()
    home = Path(tempfile.mkdtemp(prefix="pairwise-measure-"))
    env = dict(os.environ, PAIRWISE_MDNS="off")
    if not env.get("DISPLAY"):
        env["QT_QPA_PLATFORM"] = "offscreen"
    started = time.monotonic()
    command = (["demo", "--home", str(home), "--listen", "127.0.0.1:0", "--cluster-listen", "127.0.0.1:0"] if args.demo else
               ["--home", str(home), "--listen", "127.0.0.1:0", "--cluster-listen", "127.0.0.1:0", "--no-mdns"])
    proc = subprocess.Popen([sys.executable, "-m", "app", *command], cwd=ROOT, env=env,
                            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    try:
        runtime = home / "runtime.json"
        while not runtime.exists():
            if proc.poll() is not None or time.monotonic() - started > 60:
                raise SystemExit("the tray app did not start")
            time.sleep(0.01)
        launch = time.monotonic() - started
        time.sleep(3)  # let start-up work (first probes, the welcome window) finish before the quiet minute
        before, t0 = cpu_seconds(proc.pid), time.monotonic()
        time.sleep(args.idle_s)
        used, spent = cpu_seconds(proc.pid) - before, time.monotonic() - t0
        print(json.dumps({"launch_s": round(launch, 2), "rss_mb": round(rss_mb(proc.pid), 1),
                          "idle_cpu_pct": round(100 * used / spent, 2), "idle_s": round(spent, 1),
                          "load_average": os.getloadavg()}))
    finally:
        proc.send_signal(signal.SIGTERM)
        try:
            proc.wait(30)
        except subprocess.TimeoutExpired:
            proc.kill()
    return 0


if __name__ == "__main__":
    sys.exit(main())
