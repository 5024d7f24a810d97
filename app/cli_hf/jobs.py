"""`pairwise rented create --provider huggingface-job`, `rented logs`, `rented extend`: batch windows
on Hugging Face Jobs (a GPU for a fixed time, with a hard stop HF enforces; `rented stop` ends one, as
the group's own command).

`rented create` stays one command (rented.py); with ``--provider huggingface-job`` it comes here,
shows the whole window's cost against the caps, says that idle stop and caps CANCEL the job, and asks
before anything bills.
"""

from __future__ import annotations

import argparse
import sys
from typing import Any

from app.cli_common import home_of, print_json
from app.cli_rented import cost_settings
from app.control_client import ControlClient
from app.services.errors import ConfigError, PairwiseError

TIMEOUT_S = 120.0


def add_commands(rsub: Any) -> None:
    logs = rsub.add_parser("logs", help="a batch window's job logs (why a model failed to load)")
    logs.add_argument("name")
    logs.add_argument("--follow", action="store_true", help="keep streaming until the job ends")
    logs.add_argument("--tail", type=int, help="start from the last N lines")
    logs.set_defaults(handler=cmd_logs)
    extend = rsub.add_parser("extend", help="(refused: a Hugging Face Job cannot be lengthened)")
    extend.add_argument("name")
    extend.add_argument("--window", help="ignored: HF has no call to extend a job")
    extend.set_defaults(handler=cmd_extend)


# `rented create` flags that mean something for an endpoint only.
ENDPOINT_ONLY = ("region", "vendor", "endpoint_name", "task", "revision", "scale_to_zero_min", "wake_on_request")


def job_params(args: argparse.Namespace) -> dict[str, Any]:
    given = ["--" + f.replace("_", "-") for f in ENDPOINT_ONLY if getattr(args, f, None) is not None]
    if given:
        raise ConfigError(f"{', '.join(given)} apply to endpoints only; a batch window takes --gpu FLAVOR, --window, "
                          "--engine, --idle-stop-min and the budget flags")
    params: dict[str, Any] = {"name": args.name, "model": args.model, "window": args.window}
    for key in ("gpu", "engine", "namespace"):
        if getattr(args, key, None) is not None:
            params[key] = getattr(args, key)
    if args.share:
        params["share_with_cluster"] = True
    cost_settings(args, params)  # a WindowOrder's JSON (hf/orders.py): settings nested as declared
    if args.idle_stop_min is not None:  # a window's word for its idle pause
        params.setdefault("lifecycle", {})["idle_pause_min"] = args.idle_stop_min
    return params


def describe_window(plan: dict[str, Any]) -> str:
    budget = plan["budget"]
    caps = []
    for period in ("day", "month"):
        cap = budget.get(f"usd_per_{period}")
        if cap is not None:
            caps.append(f"${cap:.2f} per UTC {period} (${budget.get(f'left_{period}_usd', cap):.2f} left)")
    idle = plan.get("idle_stop_min")
    lines = [
        f"Start a batch window: Hugging Face Job in {plan['namespace']} as rented node {plan['name']}",
        f"  model:   {plan['model']} served by {plan['engine']} ({plan['image']})",
        f"  GPU:     {plan['gpu']} ({plan['gpu_description']})",
        f"  window:  {plan['window']}: Hugging Face stops the job then, even if this machine is gone",
        f"  cost:    ${plan['window_cost_usd']:.2f} for the whole window = {plan['window_minutes']} min x "
        f"${plan['price_per_hour']:.2f}/h (${plan['hardware_per_hour']:.2f}/h GPU + "
        f"${plan['port_fee_per_hour']:.2f}/h exposed port), billed per minute from the job's start",
        "  budget:  " + ("; ".join(caps) if caps else "no cap (set one with --budget-usd-per-day)"),
        "  stops:   " + (f"idle stop after {idle:g} min without work; " if idle is not None else "")
        + ("the sponsor's exit; " if plan.get("pause_on_exit") else "") + "a budget cap; the window's end",
        "  NOTE:    idle stop, budget caps and exit CANCEL the job (a window cannot pause): a later batch starts "
        "a new window and loads the model again",
        f"  access:  {plan['access']}; routing policy {plan['use']}",
    ]
    return "\n".join(lines)


def cmd_create_job(args: argparse.Namespace, ask: Any) -> int:
    client = ControlClient(home_of(args), timeout_s=TIMEOUT_S)
    params = job_params(args)
    plan = client.call("POST", "/hf/jobs/plan", params)
    if not args.yes:
        print(describe_window(plan))
        if ask("Start it? Billing starts now. [y/N]").lower() not in ("y", "yes"):
            print("not started")
            return 1
    row = client.call("POST", "/hf/jobs", params)
    if args.json:
        print_json(row)
    else:
        print(f"rented node {row['name']}: job {row.get('window_job')} {row.get('window_stage')}; "
              f"Hugging Face ends the window by {row.get('window_ends_at')}")
    return 0


def cmd_logs(args: argparse.Namespace) -> int:
    query = []
    if args.follow:
        query.append("follow=1")
    if args.tail is not None:
        query.append(f"tail={args.tail}")
    path = f"/hf/jobs/{args.name}/logs" + ("?" + "&".join(query) if query else "")
    for item in ControlClient(home_of(args), timeout_s=TIMEOUT_S).stream_lines(path):
        if "error" in item:
            raise PairwiseError(str(item["error"]), title=item.get("title"))
        print(item.get("line", ""), flush=True)
    return 0


def cmd_extend(args: argparse.Namespace) -> int:
    ControlClient(home_of(args), timeout_s=TIMEOUT_S).call("POST", f"/hf/jobs/{args.name}/extend")
    print("refused", file=sys.stderr)  # the node always refuses; the call above raises with its reason
    return 1
