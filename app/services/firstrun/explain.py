"""The paragraph a person reads when a listener's address is taken: who holds it and the way on."""

from __future__ import annotations

from app.services.errors import PortTaken
from app.services.firstrun.holder import PortHolder
from app.services.platform.ollama import cli_note, move_steps

FRONT_DOOR, CLUSTER, PAIRING = "front door", "cluster port", "pairing port"


def moved_ollama_address(front_door: str) -> str:
    """Where Ollama goes when Pairwise takes its address: the next port on the same host."""
    host, _, port = front_door.rpartition(":")
    return f"{host}:{int(port) + 1}"


def front_door_taken(address: str, holder: PortHolder, *, os_name: str | None = None) -> PortTaken:
    head = f"Pairwise cannot open its front door on {address}: {holder.describe()} is already listening there."
    moved = moved_ollama_address(address)
    move = move_steps(moved, os_name) if holder.kind == "ollama" else []
    if holder.kind == "ollama":
        steps = "; ".join(f"({i}) {step}" for i, step in enumerate(move, start=1))
        text = (f"{head} Pairwise needs this address so that every app keeps working unchanged, and it will serve "
                f"your Ollama models there as one of its engines. Move Ollama to {moved}: {steps}. Then start "
                f"Pairwise again: it finds Ollama on {moved} and adopts it for you (the same as "
                f"`pairwise engines add ollama --url http://{moved} --api ollama`). {cli_note(moved, address)} "
                "Pairwise changes none of this itself. To leave Ollama where it is instead, give Pairwise another "
                "address with --listen 127.0.0.1:PORT (apps then have to use that address).")
    elif holder.kind == "pairwise":
        text = (f"{head} One node per machine takes the front door: stop the other one (Quit in its tray menu, or "
                "Ctrl+C where `pairwise serve` runs), or start this one on another address with "
                "--listen 127.0.0.1:PORT.")
    else:
        text = (f"{head} Stop that program, or start Pairwise on another address with --listen 127.0.0.1:PORT "
                "(apps then have to use that address).")
    return PortTaken(text, role=FRONT_DOOR, address=address, holder_kind=holder.kind, steps=move,
                     moved_to=moved if move else None)


def listener_taken(role: str, address: str, holder: PortHolder) -> PortTaken:
    """The cluster port (and the pairing port, which is the cluster port + 1) are chosen with --cluster-listen."""
    if role == PAIRING:
        way = ("The pairing port is the cluster port + 1: stop that program, or move both with "
               "--cluster-listen HOST:PORT (pairing then uses PORT + 1).")
    elif holder.kind == "pairwise":
        way = ("Only one node per machine can use this cluster port: stop the other node, or give this one "
               "another with --cluster-listen HOST:PORT.")
    else:
        way = "Stop that program, or give Pairwise another cluster port with --cluster-listen HOST:PORT."
    text = f"Pairwise cannot open its {role} on {address}: {holder.describe()} is already listening there. {way}"
    return PortTaken(text, role=role, address=address, holder_kind=holder.kind)
