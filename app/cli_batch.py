"""`pairwise batch plan|run|list|show|cancel|results|delete`: batches from the command line.

`plan` estimates a file's tokens and its time on the cluster (measured rates, or a short probe), and
when a deadline cannot be met here proposes the cheapest batch window a provider rents. `run`
starts the batch (renting that window with `--rent`) and follows it with a progress bar (rate, ETA,
cost) until it ends; Ctrl-C leaves it running. Everything goes through the running node's control
API; the same batches are at the front door's /v1/batches for the openai SDK.
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from pathlib import Path
from typing import TYPE_CHECKING, Any

from app.cli_common import home_of, print_json, table
from app.control_client import ControlClient
from app.services.errors import ConfigError

if TYPE_CHECKING:
    from app.cli_common import Commands

FINAL = ("completed", "failed", "cancelled", "expired")
TIMEOUT_S = 300.0
BAR = 30


def register(sub: Commands) -> None:
    batch: argparse.ArgumentParser = sub.add_parser("batch", help="batches of requests over the whole cluster")
    bsub = batch.add_subparsers(dest="batch_command", required=True)

    def money_flags(parser: argparse.ArgumentParser) -> None:
        parser.add_argument("file", help="JSONL: one {custom_id, method, url, body} per line (OpenAI's batch input)")
        parser.add_argument("--model", help="run every line on this model (replaces each body's model)")
        parser.add_argument("--deadline", help="when it should be done, from now (2h, 90m)")
        parser.add_argument("--budget-usd", type=float, help="at most this much on rented GPUs")
        parser.add_argument("--json", action="store_true")

    plan = bsub.add_parser("plan", help="tokens, time on the cluster, and a rented window when it pays")
    money_flags(plan)
    plan.set_defaults(handler=cmd_plan)
    run = bsub.add_parser("run", help="start a batch and follow its progress")
    money_flags(run)
    run.add_argument("--rent", action="store_true",
                     help="rent the window `batch plan` proposes when the deadline cannot be met here")
    run.add_argument("--window", default="24h", help="completion window: lines not done by then expire (24h)")
    run.add_argument("--detach", action="store_true", help="start it and return at once")
    run.set_defaults(handler=cmd_run)
    lst = bsub.add_parser("list", help="batches, newest first")
    lst.add_argument("--json", action="store_true")
    lst.set_defaults(handler=cmd_list)
    show = bsub.add_parser("show", help="one batch: status, counts, copies, rate, ETA, cost")
    show.add_argument("id")
    show.add_argument("--json", action="store_true")
    show.set_defaults(handler=cmd_show)
    cancel = bsub.add_parser("cancel", help="stop a batch; the lines it did are kept")
    cancel.add_argument("id")
    cancel.add_argument("--json", action="store_true")
    cancel.set_defaults(handler=cmd_cancel)
    results = bsub.add_parser("results", help="the output lines (JSONL), or --errors for the error file's")
    results.add_argument("id")
    results.add_argument("--errors", action="store_true")
    results.add_argument("--output", "-o", help="write them to this file instead of stdout")
    results.set_defaults(handler=cmd_results)
    delete = bsub.add_parser("delete", help="delete an ended batch and its input, output and error files")
    delete.add_argument("id")
    delete.set_defaults(handler=cmd_delete)


def _client(args: argparse.Namespace) -> ControlClient:
    return ControlClient(home_of(args), timeout_s=TIMEOUT_S)


def read_lines(path: str, model: str | None) -> str:
    """The file's text, each line's body.model replaced by ``model`` when given (lines that are not
    JSON are kept as they are: the batch reports them)."""
    try:
        text = Path(path).read_text(encoding="utf-8")
    except OSError as exc:
        raise ConfigError(f"cannot read {path}: {exc.strerror or exc}") from exc
    if model is None:
        return text
    out = []
    for line in text.splitlines():
        try:
            data = json.loads(line)
        except ValueError:
            out.append(line)
            continue
        if isinstance(data, dict) and isinstance(data.get("body"), dict):
            data["body"]["model"] = model
            line = json.dumps(data)
        out.append(line)
    return "\n".join(out) + "\n"


def _params(args: argparse.Namespace) -> dict[str, Any]:
    params: dict[str, Any] = {"content": read_lines(args.file, args.model), "filename": Path(args.file).name}
    if args.deadline is not None:
        params["deadline"] = args.deadline
    if args.budget_usd is not None:
        params["budget_usd"] = args.budget_usd
    return params


def duration(seconds: float | None) -> str:
    if seconds is None:
        return "unknown"
    seconds = int(round(seconds))
    hours, rest = divmod(seconds, 3600)
    minutes, secs = divmod(rest, 60)
    return f"{hours}h {minutes:02d}m" if hours else f"{minutes}m {secs:02d}s" if minutes else f"{secs}s"


def describe_plan(plan: dict[str, Any]) -> str:
    lines = [f"{plan['lines']} requests to {plan['model']} ({plan['endpoint']})"
             + (f", {plan['bad_lines']} lines that cannot run" if plan["bad_lines"] else ""),
             f"  tokens:   about {plan['prompt_tokens']:,} in, up to {plan['completion_tokens']:,} out"]
    for copy in plan["copies"]:
        lines.append(f"  copy:     {copy['copy']} ({copy['kind']}): {copy['lines_per_s']:.2f} lines/s "
                     f"(measured by {copy['measured_by']})")
    if plan["copies"]:
        lines.append(f"  here:     {duration(plan['local_time_s'])} at {plan['lines_per_s']:.2f} lines/s")
    if plan["deadline_s"] is not None and plan["meets_deadline"] is not None:
        met = "met" if plan["meets_deadline"] else "NOT met"
        lines.append(f"  deadline: {duration(plan['deadline_s'])}: {met} on the cluster as it is")
    rent = plan.get("rent")
    if rent:
        from app.cli_providers import name_providers
        from app.services.api import glossary  # here: heavy for every other command

        name_providers()
        lines.append(f"  rent:     {rent['gpu']} ({rent['gpu_description']}) as a {glossary.provider(rent['provider'])}"
                     f" for {rent['window']}"
                     f" = {rent['window_minutes']} min x ${rent['price_per_hour']:.2f}/h = "
                     f"${rent['window_cost_usd']:.2f} (pairwise batch run --rent)")
    if plan.get("rent_note"):
        lines.append(f"  note:     {plan['rent_note']}")
    return "\n".join(lines)


def cmd_plan(args: argparse.Namespace) -> int:
    plan = _client(args).call("POST", "/batches/plan", _params(args))
    if args.json:
        print_json(plan)
    else:
        print(describe_plan(plan))
    return 0


def progress_line(batch: dict[str, Any]) -> str:
    counts = batch.get("request_counts") or {"total": 0, "completed": 0, "failed": 0}
    total = max(counts["total"], 1)
    ended = counts["completed"] + counts["failed"]
    filled = int(BAR * ended / total)
    extra = batch.get("pairwise") or {}
    rate = extra.get("lines_per_s") or 0.0
    eta = duration(extra.get("eta_s")) if batch["status"] not in FINAL else "-"
    return (f"[{'#' * filled}{'.' * (BAR - filled)}] {ended}/{counts['total']} {100 * ended // total}% "
            f"{rate:.1f} lines/s ETA {eta} ${float(extra.get('cost_usd') or 0):.2f} "
            f"{batch['status']} ({counts['failed']} failed)")


def cmd_run(args: argparse.Namespace) -> int:
    client = _client(args)
    params = {**_params(args), "rent": args.rent, "completion_window": args.window}
    started = client.call("POST", "/batches", params)
    batch = started["batch"]
    if started.get("rented_window"):
        print(f"rented batch window {started['rented_window']}: {started['plan']['rent']['gpu']} for "
              f"{started['plan']['rent']['window']} (${started['plan']['rent']['window_cost_usd']:.2f})",
              file=sys.stderr)
    if args.detach:
        print_json(started) if args.json else print(batch["id"])
        return 0
    print(f"batch {batch['id']}", file=sys.stderr)
    tty = sys.stderr.isatty()
    try:
        while batch["status"] not in FINAL:
            line = progress_line(batch)
            print("\r" + line if tty else line, end="" if tty else "\n", file=sys.stderr, flush=True)
            time.sleep(1.0)
            batch = client.call("GET", f"/batches/{batch['id']}")
    except KeyboardInterrupt:
        print(f"\nleft running: pairwise batch show {batch['id']}", file=sys.stderr)
        return 130
    print(("\r" if tty else "") + progress_line(batch), file=sys.stderr)
    if args.json:
        print_json(batch)
    else:
        print(f"{batch['id']} {batch['status']}: output {batch.get('output_file_id') or '-'}, "
              f"errors {batch.get('error_file_id') or '-'} (pairwise batch results {batch['id']})")
    return 0 if batch["status"] == "completed" else 1


def cmd_list(args: argparse.Namespace) -> int:
    batches = _client(args).call("GET", "/batches")["batches"]
    if args.json:
        print_json(batches)
        return 0
    rows = [[b["id"], b["status"], b.get("model") or "-", f"{b['request_counts']['completed']}/"
             f"{b['request_counts']['total']}", b["request_counts"]["failed"],
             f"${float((b.get('pairwise') or {}).get('cost_usd') or 0):.2f}"] for b in batches]
    print(table(rows, ["ID", "STATUS", "MODEL", "DONE", "FAILED", "COST"]) if rows else "no batches")
    return 0


def cmd_show(args: argparse.Namespace) -> int:
    batch = _client(args).call("GET", f"/batches/{args.id}")
    if args.json:
        print_json(batch)
        return 0
    extra = batch.get("pairwise") or {}
    print(f"{batch['id']} {batch['status']} {batch.get('model') or ''} ({batch['endpoint']})")
    print("  " + progress_line(batch))
    if extra.get("budget_usd") is not None:
        print(f"  budget:  ${extra['cost_usd']:.2f} of ${extra['budget_usd']:.2f}"
              + (f" ({extra['rented_stopped']}: rented copies left)" if extra.get("rented_stopped") else ""))
    for copy in extra.get("copies") or []:
        print(f"  copy:    {copy['copy']} ({copy['kind']}): {copy['done']} done, {copy['lines_per_s']:.2f} lines/s, "
              f"{copy['in_flight']} in flight")
    for key in ("output_file_id", "error_file_id"):
        if batch.get(key):
            print(f"  {key.removesuffix('_file_id')}: {batch[key]}")
    return 0


def cmd_cancel(args: argparse.Namespace) -> int:
    batch = _client(args).call("POST", f"/batches/{args.id}/cancel")
    print_json(batch) if args.json else print(f"{batch['id']} {batch['status']}")
    return 0


def cmd_results(args: argparse.Namespace) -> int:
    lines = _client(args).call("GET", f"/batches/{args.id}/results", params={"errors": "1" if args.errors else "0"})
    text = "".join(json.dumps(line) + "\n" for line in lines["lines"])
    if args.output:
        Path(args.output).write_text(text, encoding="utf-8")
    else:
        sys.stdout.write(text)
    return 0


def cmd_delete(args: argparse.Namespace) -> int:
    _client(args).call("DELETE", f"/batches/{args.id}")
    print(f"deleted {args.id} and its files")
    return 0
