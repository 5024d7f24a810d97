"""`pairwise rented create`: a Hugging Face endpoint (or, with ``--provider huggingface-job``, a batch
window: jobs.py) rented and attached as a rented node.

It joins the `rented` command group of app/cli_rented.py through ``register_rented`` (this package's
``__init__``); pause, resume, stop and delete are the group's own, the same for every provider.
Everything runs in the node through its control API (routes under /hf/rented), with the token the
node keeps from `hf login`.
"""

from __future__ import annotations

import argparse
from typing import Any

from app.cli_common import home_of
from app.cli_hf.jobs import cmd_create_job
from app.cli_rented import TIMEOUT_S, add_cost_controls, ask, cost_settings, report
from app.control_client import ControlClient
from app.services.errors import ConfigError
from app.services.hf.models import ENGINES
from app.services.rented.decl import POLICIES


def add_commands(rsub: Any) -> None:
    create = rsub.add_parser("create", help="rent a GPU: create a Hugging Face endpoint (or, with --provider "
                                            "huggingface-job, a batch window) and attach it")
    create.add_argument("name", help="rented node name (also the endpoint's name unless --endpoint-name)")
    create.add_argument("--model", required=True, help="Hugging Face repository id (OWNER/NAME)")
    create.add_argument("--gpu", help="instance type (nvidia-l4), 'type size' (nvidia-l4 x4) or a compute id; "
                                      "default: the cheapest available GPU")
    create.add_argument("--region")
    create.add_argument("--vendor")
    create.add_argument("--provider", choices=("huggingface-endpoint", "huggingface-job"),
                        default="huggingface-endpoint",
                        help="huggingface-job: a batch window (a Job for a fixed time, hard stop by HF)")
    create.add_argument("--window", help="batch window length (required for huggingface-job): 30m, 2h, 1d")
    create.add_argument("--idle-stop-min", type=float,
                        help="batch window: cancel the job after this many minutes without work")
    create.add_argument("--engine", choices=sorted({*ENGINES, "sglang"}))
    create.add_argument("--namespace", help="account or organisation (default: the token's user)")
    create.add_argument("--endpoint-name")
    create.add_argument("--task")
    create.add_argument("--revision")
    create.add_argument("--context-window", type=int, metavar="N",
                        help="tokens one request may take: the endpoint is started with this window "
                             "(a bigger-context copy of a model you have)")
    create.add_argument("--same-as", action="append", metavar="NAME",
                        help="link the new copy's model with this name as one model (repeatable): a request for "
                             "NAME that no other copy holds then routes to it")
    create.add_argument("--scale-to-zero-min", type=float, help="HF's own idle scale-to-zero (default 15)")
    create.add_argument("--share", action="store_true", help="share with the cluster (off by default)")
    create.add_argument("--use", choices=POLICIES)
    create.add_argument("--cold-start-s", type=float)
    add_cost_controls(create)
    create.add_argument("--yes", action="store_true", help="create without asking")
    create.add_argument("--json", action="store_true")
    create.set_defaults(handler=cmd_create)


def create_params(args: argparse.Namespace) -> dict[str, Any]:
    """An ``EndpointOrder``'s JSON (hf/orders.py): the new node's settings nested as in its declaration."""
    params: dict[str, Any] = {"name": args.name, "model": args.model}
    for key in ("gpu", "region", "vendor", "engine", "namespace", "endpoint_name", "task", "revision",
                "scale_to_zero_min", "context_window", "same_as"):
        if getattr(args, key) is not None:
            params[key] = getattr(args, key)
    if args.share:
        params["share_with_cluster"] = True
    return cost_settings(args, params)


def describe_plan(plan: dict[str, Any]) -> str:
    price = plan.get("price_per_hour")
    budget = plan["budget"]
    caps = []
    for period in ("day", "month"):
        cap, hours = budget.get(f"usd_per_{period}"), budget.get(f"hours_per_{period}")
        if cap is not None:
            caps.append(f"${cap:.2f} per {period}" + (f" = {hours:g} h of this GPU" if hours is not None else ""))
    memory = f", {plan['gpu_memory_gb']:g} GB" if plan.get("gpu_memory_gb") else ""
    lines = [
        f"Create Hugging Face endpoint {plan['namespace']}/{plan['endpoint']} as rented node {plan['name']}",
        f"  model:   {plan['model']}" + (f" (engine {plan['engine']})" if plan.get("engine") else ""),
        f"  GPU:     {plan['gpu']} ({plan['accelerator']}{memory}) in {plan['vendor']} {plan['region']}",
        f"  price:   ${price:.2f} per hour, billed per minute while initializing and running"
        if price is not None else "  price:   unknown",
        f"  access:  {plan['type']} (never public); HF scales it to zero after "
        f"{plan['scale_to_zero_timeout_min']} min without requests",
        "  budget:  " + ("; ".join(caps) if caps else "no cap (set one with --budget-usd-per-day)"),
    ]
    if plan.get("context_window"):
        lines.insert(2, f"  window:  {plan['context_window']} tokens per request")
    if plan.get("same_as"):
        lines.append(f"  names:   linked as one model with {', '.join(plan['same_as'])}")
    return "\n".join(lines)


def cmd_create(args: argparse.Namespace) -> int:
    if args.provider == "huggingface-job":
        if args.context_window is not None or args.same_as:
            raise ConfigError("--context-window and --same-as are for endpoints; a batch window serves its model's "
                              "own window")
        return cmd_create_job(args, ask)
    if args.window is not None or args.idle_stop_min is not None:
        raise ConfigError("--window and --idle-stop-min are for batch windows (--provider huggingface-job); an "
                          "endpoint pauses instead (--idle-pause-min)")
    client = ControlClient(home_of(args), timeout_s=TIMEOUT_S)
    params = create_params(args)
    plan = client.call("POST", "/hf/rented/plan", params)
    if not args.yes:
        print(describe_plan(plan))
        if ask("Create it? [y/N]").lower() not in ("y", "yes"):
            print("not created")
            return 1
    row = client.call("POST", "/hf/rented", params)
    return report(row, args.json)
