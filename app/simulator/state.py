"""Everything one running simulator holds, shared by all route modules through the app."""

from __future__ import annotations

import asyncio
import time
from dataclasses import dataclass, field

from aiohttp import web

from app.simulator import fixtures
from app.simulator.endpoints_model import EndpointBook
from app.simulator.faults import FaultBoard
from app.simulator.hardware import Hardware
from app.simulator.jobs_model import JobBook
from app.simulator.ledger import Ledger
from app.simulator.settings import SimSettings
from app.simulator.tokens import ALL_PERMISSIONS, TokenInfo, TokenRegistry
from app.simulator.upstream import Upstreams
from app.tinymodel import RunningTiny


@dataclass
class SimState:
    settings: SimSettings
    origin: float = field(default_factory=time.monotonic)
    base_url: str = ""
    closing: asyncio.Event = field(default_factory=asyncio.Event)
    router_tiny: RunningTiny | None = None

    def __post_init__(self) -> None:
        self.tokens = TokenRegistry()
        self.faults = FaultBoard()
        self.ledger = Ledger(origin=self.origin)
        self.hardware = Hardware()
        self.upstreams = Upstreams()
        self.endpoints = EndpointBook(self.settings, self.ledger, self.hardware, time.monotonic)
        self.jobs = JobBook(self.settings, self.ledger, time.monotonic)
        self.router_models = fixtures.router_models()
        s = self.settings
        self.tokens.add(TokenInfo(
            token=s.demo_token, user=s.namespace, role="fineGrained", orgs=[s.org],
            scoped={s.namespace: list(ALL_PERMISSIONS), s.org: list(ALL_PERMISSIONS)}, display_name="demo",
        ))

    def set_base_url(self, url: str) -> None:
        self.base_url = url
        self.endpoints.base_url = url
        self.jobs.base_url = url

    def now(self) -> float:
        return time.monotonic()


STATE_KEY: web.AppKey[SimState] = web.AppKey("sim_state", SimState)


def sim(request: web.Request) -> SimState:
    return request.app[STATE_KEY]
