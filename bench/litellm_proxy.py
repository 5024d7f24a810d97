"""LiteLLM's proxy as the router a user would otherwise pick, from the separate bench venv.

It is configured the way its quick start does it: one model entry pointing at
the tiny server as an OpenAI-compatible upstream, a master key (the proxy
refuses to start without one), no database, one worker. Its cost-map fetch is
kept local because this machine has no internet.
"""

from __future__ import annotations

import secrets
import subprocess
import time
from pathlib import Path

import httpx

from app.harness import REPO, child_env, free_port, stop_process, wait_until

BENCH_VENV = REPO / "bench" / ".venv-bench"
LITELLM_BIN = BENCH_VENV / "bin" / "litellm"


def available() -> bool:
    return LITELLM_BIN.exists()


def version() -> str:
    try:
        from importlib.metadata import PathDistribution

        site = next((BENCH_VENV / "lib").glob("python*/site-packages"))
        dist = next(site.glob("litellm-*.dist-info"))
        return PathDistribution(dist).version
    except (StopIteration, OSError):
        return "unknown"


CONFIG = """\
model_list:
  - model_name: "{model}"
    litellm_params:
      model: "openai/{model}"
      api_base: "{api_base}"
      api_key: "unused-by-the-tiny-server"
"""


class LiteLLM:
    def __init__(self, workdir: Path, upstream_url: str, model: str) -> None:
        workdir.mkdir(parents=True, exist_ok=True)
        self.config = workdir / "litellm.yaml"
        self.config.write_text(CONFIG.format(model=model, api_base=f"{upstream_url}/v1"))
        self.log = workdir / "litellm.log"
        self.port = free_port()
        self.url = f"http://127.0.0.1:{self.port}"
        self.key = f"sk-bench-{secrets.token_hex(16)}"
        self.proc: subprocess.Popen[bytes] | None = None
        self.began = 0.0
        self.startup_s = 0.0

    def launch(self) -> LiteLLM:
        env = child_env(LITELLM_MASTER_KEY=self.key, LITELLM_LOCAL_MODEL_COST_MAP="True", LITELLM_LOG="ERROR")
        with open(self.log, "ab") as out:
            self.began = time.perf_counter()
            self.proc = subprocess.Popen([str(LITELLM_BIN), "--config", str(self.config), "--host", "127.0.0.1",
                                          "--port", str(self.port), "--num_workers", "1"],
                                         stdout=out, stderr=subprocess.STDOUT, env=env, cwd=self.config.parent)
        return self

    def wait_ready(self, timeout: float = 180) -> LiteLLM:
        def answers() -> bool:
            if self.proc is not None and self.proc.poll() is not None:
                raise RuntimeError(f"LiteLLM exited: {self.log.read_text(errors='replace')[-2000:]}")
            try:
                return httpx.get(f"{self.url}/health/liveliness", timeout=1, trust_env=False).status_code == 200
            except httpx.HTTPError:
                return False

        wait_until(answers, timeout, "LiteLLM's proxy to answer", interval=0.01)
        self.startup_s = time.perf_counter() - self.began
        return self

    @property
    def pid(self) -> int:
        assert self.proc is not None
        return self.proc.pid

    def stop(self) -> None:
        stop_process(self.proc)
