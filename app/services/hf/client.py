"""`HuggingFaceClient`: Hugging Face's REST APIs over httpx (no huggingface_hub at run time).

Every call goes through `_call`, which retries what may pass (429 after its Retry-After, 5xx,
timeouts, network errors) with exponential backoff, then raises a clear HfError whose message names
the call and carries HF's own words (see errors.py). Verification stays on: the only knob is an
extra CA (settings.ca_file / PAIRWISE_CA_FILE). The token is added to each request and nowhere else.
"""

from __future__ import annotations

import asyncio
import email.utils
import json
import logging
import time
from collections.abc import AsyncIterator, Awaitable, Callable
from typing import Any
from urllib.parse import quote

import httpx

from app.services.hf.catalog import CatalogModel, matching, parse_legacy, parse_v1, v1_catalog_url
from app.services.hf.errors import HfError, HfNotFound, HfUnavailable, error_for
from app.services.hf.jobs_models import JobInfo
from app.services.hf.models import EndpointInfo, HardwareRow, flatten_hardware
from app.services.hf.settings_section import HuggingFaceUrls
from app.services.hf.tuning import HfTuning
from app.services.outbound import make_client

log = logging.getLogger(__name__)

WHOAMI_TTL_S = 300.0  # /api/whoami-v2 is "intentionally strict" about rate limits (hf-api.md §0)
RETRY_STATUSES = frozenset({429}) | frozenset(range(500, 600))


class _RetriedThen(Exception):
    """A retried call's later attempt answered this status (e.g. 409 after a create that did land)."""

    def __init__(self, status: int) -> None:
        super().__init__(status)
        self.status = status


def _retry_after(response: httpx.Response) -> float | None:
    raw = response.headers.get("retry-after")
    if not raw:
        return None
    try:
        return max(0.0, float(raw))
    except ValueError:
        parsed = email.utils.parsedate_to_datetime(raw) if raw else None
        return max(0.0, parsed.timestamp() - time.time()) if parsed else None


def _seg(value: str) -> str:
    return quote(value, safe="")


class HuggingFaceClient:
    def __init__(self, urls: HuggingFaceUrls, token: str, *, extra_ca: tuple[str, ...] = (),
                 tuning: HfTuning | None = None,
                 sleep: Callable[[float], Awaitable[None]] = asyncio.sleep) -> None:
        self.urls = urls
        self.tuning = tuning or HfTuning()
        self._token = token
        self._sleep = sleep
        self._http = make_client(extra_ca=extra_ca, read_timeout_s=self.tuning.request_timeout_s)
        self._whoami: tuple[float, dict[str, Any]] | None = None
        # Pairwise's simulated Hugging Face labels every answer; what it serves is labelled too.
        self.simulated = False

    @property
    def token(self) -> str:
        return self._token

    async def aclose(self) -> None:
        await self._http.aclose()

    # -- transport ---------------------------------------------------------------------------------------------

    async def _call(self, method: str, url: str, what: str, *, json: Any = None,
                    params: dict[str, Any] | None = None, retried_passthrough: frozenset[int] = frozenset(),
                    once: bool = False) -> httpx.Response:
        """The 2xx response, else an HfError. ``retried_passthrough``: statuses that, on a retry, mean an
        earlier attempt already did the work (raised as _RetriedThen for the caller to settle).
        ``once``: one attempt under the short control timeout, never a retry sleep (the lifecycle's
        polls and pauses: its loop retries them itself, so an owed pause never waits behind a sleep)."""
        t = self.tuning
        headers = {"authorization": f"Bearer {self._token}", "user-agent": "pairwise"}
        retries = 0 if once else t.retries
        timeout_s = t.control_timeout_s if once else t.request_timeout_s
        last = ""
        for attempt in range(retries + 1):
            wait = min(t.max_backoff_s, t.backoff_s * 2 ** attempt)
            try:
                async with asyncio.timeout(timeout_s):
                    response = await self._http.request(method, url, json=json, params=params, headers=headers,
                                                        timeout=timeout_s)
            except (TimeoutError, httpx.TimeoutException):
                last = f"no answer within {timeout_s:g} s"
            except httpx.HTTPError as exc:
                last = f"could not be reached ({type(exc).__name__}: {exc})"
            else:
                self.simulated = self.simulated or "x-simulated" in response.headers
                if attempt and response.status_code in retried_passthrough:
                    raise _RetriedThen(response.status_code)
                if response.is_success:
                    return response
                if response.status_code not in RETRY_STATUSES:
                    raise error_for(response, what)
                error = error_for(response, what)
                last = f"answered {response.status_code}: {error.hf_message}"
                after = _retry_after(response) if response.status_code == 429 else None
                if attempt == retries:
                    error.retry_after_s = after
                    if retries:
                        error.message = f"{what}: Hugging Face {last} (gave up after {attempt + 1} attempts)"
                    raise error
                if after is not None:
                    wait = min(t.max_backoff_s, after)
            if attempt < retries:
                log.info("%s: Hugging Face %s; retry %d in %.2f s", what, last, attempt + 1, wait)
                await self._sleep(wait)
        tries = f" (gave up after {retries + 1} attempts)" if retries else ""
        raise HfUnavailable(f"{what}: Hugging Face {last}{tries}")

    async def _json(self, method: str, url: str, what: str, **kw: Any) -> Any:
        response = await self._call(method, url, what, **kw)
        try:
            return response.json() if response.content else {}
        except ValueError as exc:
            raise HfError(f"{what}: Hugging Face answered something that is not JSON") from exc

    # -- identity ----------------------------------------------------------------------------------------------

    async def whoami(self, *, force: bool = False) -> dict[str, Any]:
        """GET /api/whoami-v2, cached for five minutes (HF rate-limits it strictly)."""
        if not force and self._whoami and time.monotonic() - self._whoami[0] < WHOAMI_TTL_S:
            return self._whoami[1]
        try:
            data = await self._json("GET", f"{self.urls.hub}/api/whoami-v2", "checking the token (whoami)")
        except HfError:
            self._whoami = None
            raise
        if not isinstance(data, dict) or not isinstance(data.get("name"), str):
            raise HfError("checking the token (whoami): Hugging Face's answer names no user")
        self._whoami = (time.monotonic(), data)
        return data

    async def default_namespace(self) -> str:
        return str((await self.whoami())["name"])

    async def auth_check(self, namespace: str, perms: str) -> tuple[bool, str]:
        """Server-side permission check (`read`, `write` or `infer`): (allowed, HF's message if not)."""
        url = f"{self.urls.hub}/api/inference-endpoints/{_seg(namespace)}/auth-check/{perms}"
        try:
            await self._call("POST", url, f"checking {perms} access to {namespace}")
        except HfError as exc:
            if exc.hf_status in (401, 403):
                return False, exc.hf_message
            raise
        return True, ""

    # -- catalog and hardware ----------------------------------------------------------------------------------

    async def catalog(self, search: str | None = None) -> list[CatalogModel]:
        params = {"search": search} if search else None
        try:
            data = await self._json("GET", f"{v1_catalog_url(self.urls.catalog)}/list", "listing the catalog",
                                    params=params)
            models = parse_v1(data)
        except HfNotFound:
            models = None
        if models is None:
            data = await self._json("GET", f"{self.urls.catalog.rstrip('/')}/repo-list", "listing the catalog")
            models = parse_legacy(data)
        return matching(models, search)

    async def hardware_tree(self, namespace: str) -> dict[str, Any]:
        data = await self._json("GET", f"{self.urls.endpoints}/provider/{_seg(namespace)}",
                                f"listing hardware for {namespace}")
        return data if isinstance(data, dict) else {}

    async def hardware(self, namespace: str) -> list[HardwareRow]:
        return flatten_hardware(await self.hardware_tree(namespace))

    async def jobs_hardware(self) -> list[dict[str, Any]]:
        data = await self._json("GET", f"{self.urls.hub}/api/jobs/hardware", "listing job hardware")
        return [row for row in data if isinstance(row, dict)] if isinstance(data, list) else []

    # -- endpoints ---------------------------------------------------------------------------------------------

    def _ep_url(self, namespace: str, name: str | None = None, action: str | None = None) -> str:
        url = f"{self.urls.endpoints}/endpoint/{_seg(namespace)}"
        if name is not None:
            url += f"/{_seg(name)}"
        if action is not None:
            url += f"/{action}"
        return url

    async def _endpoint(self, method: str, namespace: str, name: str, what: str, action: str | None = None,
                        **kw: Any) -> EndpointInfo:
        data = await self._json(method, self._ep_url(namespace, name, action), what, **kw)
        try:
            return EndpointInfo.parse(namespace, data)
        except ValueError as exc:
            raise HfError(f"{what}: Hugging Face's answer is not an endpoint ({exc})") from exc

    async def list_endpoints(self, namespace: str) -> list[EndpointInfo]:
        data = await self._json("GET", self._ep_url(namespace), f"listing endpoints of {namespace}")
        items = data.get("items") if isinstance(data, dict) else None
        found = []
        for item in items or []:
            try:
                found.append(EndpointInfo.parse(namespace, item))
            except ValueError:
                continue
        return found

    async def get_endpoint(self, namespace: str, name: str, *, once: bool = False) -> EndpointInfo:
        return await self._endpoint("GET", namespace, name, f"reading endpoint {namespace}/{name}", once=once)

    async def create_endpoint(self, namespace: str, body: dict[str, Any]) -> EndpointInfo:
        name = str(body["name"])
        what = f"creating endpoint {namespace}/{name}"
        try:
            data = await self._json("POST", self._ep_url(namespace), what, json=body,
                                    retried_passthrough=frozenset({409}))
        except _RetriedThen:
            # An earlier attempt created it before its answer was lost; take it if it is ours.
            info = await self.get_endpoint(namespace, name)
            if info.repository != body["model"]["repository"]:
                raise HfError(f"{what}: an endpoint with that name already exists") from None
            return info
        return EndpointInfo.parse(namespace, data)

    async def update_endpoint(self, namespace: str, name: str, patch: dict[str, Any]) -> EndpointInfo:
        return await self._endpoint("PUT", namespace, name, f"updating endpoint {namespace}/{name}", json=patch)

    async def delete_endpoint(self, namespace: str, name: str) -> None:
        try:
            await self._call("DELETE", self._ep_url(namespace, name), f"deleting endpoint {namespace}/{name}",
                             retried_passthrough=frozenset({404}))
        except _RetriedThen:
            return  # an earlier attempt deleted it

    async def pause(self, namespace: str, name: str, *, once: bool = False) -> EndpointInfo:
        return await self._endpoint("POST", namespace, name, f"pausing endpoint {namespace}/{name}", "pause",
                                    once=once)

    async def resume(self, namespace: str, name: str, *, running_ok: bool = True) -> EndpointInfo:
        try:
            return await self._endpoint("POST", namespace, name, f"resuming endpoint {namespace}/{name}", "resume")
        except HfError as exc:
            if running_ok and exc.hf_status == 400 and "already running" in exc.hf_message.lower():
                return await self.get_endpoint(namespace, name)
            raise

    async def scale_to_zero(self, namespace: str, name: str) -> EndpointInfo:
        return await self._endpoint("POST", namespace, name, f"scaling endpoint {namespace}/{name} to zero",
                                    "scale-to-zero")

    # -- jobs (hf-api.md §4) -------------------------------------------------------------------------------------

    def _job_url(self, namespace: str, job_id: str | None = None, action: str | None = None) -> str:
        url = f"{self.urls.hub}/api/jobs/{_seg(namespace)}"
        if job_id is not None:
            url += f"/{_seg(job_id)}"
        if action is not None:
            url += f"/{action}"
        return url

    async def _job(self, method: str, namespace: str, what: str, job_id: str | None = None,
                   action: str | None = None, **kw: Any) -> JobInfo:
        data = await self._json(method, self._job_url(namespace, job_id, action), what, **kw)
        try:
            return JobInfo.parse(namespace, data)
        except ValueError as exc:
            raise HfError(f"{what}: Hugging Face's answer is not a job ({exc})") from exc

    async def run_job(self, namespace: str, body: dict[str, Any]) -> JobInfo:
        # Not retried after an answer was lost: a second POST would start (and bill) a second job; the
        # labels let reconcile find the first one.
        return await self._job("POST", namespace, f"running a job in {namespace}", json=body)

    async def get_job(self, namespace: str, job_id: str) -> JobInfo:
        return await self._job("GET", namespace, f"reading job {namespace}/{job_id}", job_id)

    async def cancel_job(self, namespace: str, job_id: str) -> JobInfo:
        return await self._job("POST", namespace, f"canceling job {namespace}/{job_id}", job_id, "cancel")

    async def list_jobs(self, namespace: str, labels: dict[str, str] | None = None) -> list[JobInfo]:
        params = {"label": [f"{k}={v}" for k, v in (labels or {}).items()]}
        data = await self._json("GET", self._job_url(namespace), f"listing jobs of {namespace}", params=params)
        found = []
        for item in data if isinstance(data, list) else []:
            try:
                found.append(JobInfo.parse(namespace, item))
            except ValueError:
                continue
        return found

    async def job_logs(self, namespace: str, job_id: str, *, tail: int | None = None,
                       idle_s: float | None = None) -> AsyncIterator[tuple[str, str]]:
        """The job's log lines as (timestamp, text) from its SSE stream, until the stream ends (the job
        ended) or, with ``idle_s``, until no line came for that long (what is there so far)."""
        url = self._job_url(namespace, job_id, "logs")
        headers = {"authorization": f"Bearer {self._token}", "user-agent": "pairwise", "accept": "text/event-stream"}
        params = {"tail": tail} if tail is not None else None
        what = f"reading the logs of job {namespace}/{job_id}"
        try:
            async with self._http.stream("GET", url, headers=headers, params=params,
                                         timeout=httpx.Timeout(self.tuning.request_timeout_s, read=idle_s)) as response:
                if not response.is_success:
                    await response.aread()
                    raise error_for(response, what)
                async for line in response.aiter_lines():
                    if not line.startswith("data: {"):
                        continue  # keep-alive comments and blank separators
                    try:
                        event = json.loads(line[len("data: "):])
                    except ValueError:
                        continue
                    if isinstance(event, dict) and isinstance(event.get("data"), str):
                        yield str(event.get("timestamp") or ""), event["data"]
        except httpx.ReadTimeout:
            if idle_s is None:
                raise HfUnavailable(f"{what}: the stream stopped answering") from None
        except httpx.HTTPError as exc:
            raise HfUnavailable(f"{what}: could not be reached ({type(exc).__name__})") from None
