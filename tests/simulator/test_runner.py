"""TLS with the generated CA, the subprocess mode, and huggingface_hub configured only through env."""

from __future__ import annotations

import json
import os
import signal
import ssl
import stat
import subprocess
import sys
import textwrap
from pathlib import Path

import httpx
import pytest

from app.simulator import SimulatedHF
from app.simulator.ca import client_ssl_context

REPO_ROOT = Path(__file__).resolve().parents[2]


async def test_tls_trust(sim_hf: SimulatedHF) -> None:
    ctx = client_ssl_context(sim_hf.ca_file)
    port = sim_hf.base_url.rsplit(":", 1)[1]
    async with httpx.AsyncClient(verify=ctx) as trusted:
        for host in ("127.0.0.1", "localhost"):  # both SANs are in the server certificate
            response = await trusted.get(f"https://{host}:{port}/api/catalog/repo-list")
            assert response.status_code == 200
    async with httpx.AsyncClient() as default_trust:  # verification on, CA not added: refused
        with pytest.raises(httpx.ConnectError) as refused:
            await default_trust.get(f"{sim_hf.base_url}/api/catalog/repo-list")
    assert isinstance(refused.value.__cause__, ssl.SSLCertVerificationError) or "CERTIFICATE_VERIFY_FAILED" in str(
        refused.value)
    key = sim_hf.ca_file.parent / "server-key.pem"
    assert stat.S_IMODE(key.stat().st_mode) == 0o600


async def test_settings_control(sim_hf: SimulatedHF, hf: httpx.AsyncClient) -> None:
    live = await sim_hf.control("GET", "/_sim/settings")
    assert live["minute_s"] == 0.2 and live["job_run_s"] is None
    assert (await hf.post("/_sim/settings", json={"minute_s": 0})).status_code == 400
    assert (await hf.post("/_sim/settings", json={"port": 1})).status_code == 400
    assert (await sim_hf.control("POST", "/_sim/settings", {"pending_s": 2}))["pending_s"] == 2.0


HF_SCRIPT = textwrap.dedent("""
    import sys
    from huggingface_hub import HfApi, constants
    constants.INFERENCE_ENDPOINTS_ENDPOINT = sys.argv[1]  # the one base URL with no env variable
    api = HfApi()  # HF_ENDPOINT, HF_TOKEN and SSL_CERT_FILE come from the environment
    print(api.whoami()["name"], len(api.list_inference_endpoints_hardware()), api.list_inference_endpoints())
""")


def test_subprocess_mode_and_env_configured_client(tmp_path: Path) -> None:
    state_dir = tmp_path / "sim"
    with subprocess.Popen(
        [sys.executable, "-m", "app.simulator", "--port", "0", "--state-dir", str(state_dir), "--minute-s", "0.5",
         "--pending-s", "0.1", "--initializing-s", "0.1"],
        cwd=REPO_ROOT, stdout=subprocess.PIPE, text=True,
    ) as proc:
        try:
            assert proc.stdout is not None
            info = json.loads(proc.stdout.readline())
            assert set(info) == {"base_url", "endpoints_url", "hub_url", "catalog_url", "router_url", "ca_file",
                                 "demo_token", "namespace"}
            assert info["base_url"].startswith("https://127.0.0.1:") and Path(info["ca_file"]).parent == state_dir
            env = {**os.environ, "HF_ENDPOINT": info["hub_url"], "HF_TOKEN": info["demo_token"],
                   "SSL_CERT_FILE": info["ca_file"], "HF_HOME": str(tmp_path / "hf")}
            out = subprocess.run([sys.executable, "-c", HF_SCRIPT, info["endpoints_url"]], env=env,
                                 capture_output=True, text=True, timeout=60)
            assert out.returncode == 0, out.stderr
            assert out.stdout.split() == ["demo-user", "17", "[]"]
        finally:
            proc.send_signal(signal.SIGTERM)
            assert proc.wait(timeout=15) == 0
