"""Running the simulator: in-process on the current loop (SimulatedHF) or on its own thread
(SimulatorThread, for synchronous tests such as huggingface_hub's client)."""

from __future__ import annotations

import asyncio
import shutil
import tempfile
import threading
from pathlib import Path
from types import TracebackType

import httpx
from aiohttp import web

from app.services.json_types import JsonValue
from app.simulator.app import build_app
from app.simulator.ca import TlsFiles, client_ssl_context, generate_tls, server_ssl_context
from app.simulator.settings import SimSettings
from app.simulator.state import SimState


class SimulatedHF:
    """One simulated Hugging Face on one HTTPS port. `await start()`, use the URLs, `await stop()`."""

    def __init__(self, settings: SimSettings | None = None) -> None:
        self.settings = settings or SimSettings()
        self.state = SimState(self.settings)
        self.base_url = ""
        self._runner: web.AppRunner | None = None
        self._tls: TlsFiles | None = None
        self._temp_dir: Path | None = None

    async def start(self) -> None:
        state_dir = self.settings.state_dir
        if state_dir is None:
            self._temp_dir = state_dir = Path(tempfile.mkdtemp(prefix="pairwise-sim-"))
        self._tls = generate_tls(Path(state_dir))
        runner = web.AppRunner(build_app(self.state), handler_cancellation=True, shutdown_timeout=1.0,
                               access_log=None)
        await runner.setup()
        site = web.TCPSite(runner, self.settings.host, self.settings.port, ssl_context=server_ssl_context(self._tls))
        await site.start()
        self._runner = runner
        port = runner.addresses[0][1]
        self.base_url = f"https://{self.settings.host}:{port}"
        self.state.set_base_url(self.base_url)

    async def stop(self) -> None:
        self.state.closing.set()  # releases held "timeout" faults so shutdown is quick
        if self._runner is not None:
            await self._runner.cleanup()
            self._runner = None
        await self.state.upstreams.close()
        if self._temp_dir is not None:
            shutil.rmtree(self._temp_dir, ignore_errors=True)
            self._temp_dir = None

    async def __aenter__(self) -> SimulatedHF:
        await self.start()
        return self

    async def __aexit__(self, *exc: object) -> None:
        await self.stop()

    @property
    def endpoints_url(self) -> str:
        return f"{self.base_url}/v2"

    @property
    def hub_url(self) -> str:
        return self.base_url

    @property
    def catalog_url(self) -> str:
        return f"{self.base_url}/api/catalog"

    @property
    def catalog_v1_url(self) -> str:
        return f"{self.base_url}/api/v1/catalog"

    @property
    def router_url(self) -> str:
        return f"{self.base_url}/router/v1"

    @property
    def ca_file(self) -> Path:
        if self._tls is None:
            raise RuntimeError("the simulator is not started")
        return self._tls.ca_file

    @property
    def demo_token(self) -> str:
        return self.settings.demo_token

    @property
    def demo_namespace(self) -> str:
        return self.settings.namespace

    def info(self) -> dict[str, str]:
        """The one JSON line the subprocess mode prints."""
        return {"base_url": self.base_url, "endpoints_url": self.endpoints_url, "hub_url": self.hub_url,
                "catalog_url": self.catalog_url, "router_url": self.router_url, "ca_file": str(self.ca_file),
                "demo_token": self.demo_token, "namespace": self.demo_namespace}

    async def control(self, method: str, path: str, json: JsonValue = None) -> JsonValue:
        """Call a /_sim/ control (path relative to base_url) and return its JSON."""
        async with httpx.AsyncClient(verify=client_ssl_context(self.ca_file)) as client:
            response = await client.request(method, f"{self.base_url}{path}", json=json)
            response.raise_for_status()
            return response.json()


class SimulatorThread:
    """Runs a SimulatedHF on a private event loop in a daemon thread; a context manager."""

    def __init__(self, settings: SimSettings | None = None) -> None:
        self.sim = SimulatedHF(settings)
        self._loop = asyncio.new_event_loop()
        self._thread = threading.Thread(target=self._loop.run_forever, name="simulated-hf", daemon=True)

    def start(self) -> SimulatorThread:
        self._thread.start()
        try:
            asyncio.run_coroutine_threadsafe(self.sim.start(), self._loop).result(timeout=30)
        except BaseException:
            self.stop()  # do not leave a loop thread behind a failed start
            raise
        return self

    def stop(self) -> None:
        if not self._thread.is_alive():
            return
        try:
            asyncio.run_coroutine_threadsafe(self.sim.stop(), self._loop).result(timeout=30)
        finally:
            self._loop.call_soon_threadsafe(self._loop.stop)
            self._thread.join(timeout=30)
            self._loop.close()

    def __enter__(self) -> SimulatorThread:
        return self.start()

    def __exit__(self, exc_type: type[BaseException] | None, exc: BaseException | None,
                 tb: TracebackType | None) -> None:
        self.stop()

    def control(self, method: str, path: str, json: JsonValue = None) -> JsonValue:
        return asyncio.run_coroutine_threadsafe(self.sim.control(method, path, json), self._loop).result(timeout=30)

    base_url = property(lambda self: self.sim.base_url)
    endpoints_url = property(lambda self: self.sim.endpoints_url)
    hub_url = property(lambda self: self.sim.hub_url)
    catalog_url = property(lambda self: self.sim.catalog_url)
    catalog_v1_url = property(lambda self: self.sim.catalog_v1_url)
    router_url = property(lambda self: self.sim.router_url)
    ca_file = property(lambda self: self.sim.ca_file)
    demo_token = property(lambda self: self.sim.demo_token)
    demo_namespace = property(lambda self: self.sim.demo_namespace)
