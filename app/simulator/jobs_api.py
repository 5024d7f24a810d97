"""Jobs API under /api/jobs (hf-api.md §4) and the jobs' exposed ports under /jobs-expose/.

An exposed port is https://127.0.0.1:P/jobs-expose/<jobid>--<port>, an OpenAI-compatible tiny
server answering to the job's model (see Job.served_model). It needs a Bearer token of a user with
access to the job's namespace unless the port is in portsPublic; 503 while SCHEDULING or while the
server loads its model, 404 once the job has ended. With ``refuse_public_ports`` set, any spec that
asks for a public port is refused (tests prove the client never asks).

GET /api/jobs/{ns}/{id}/logs[?tail=N] is Server-Sent Events: ``data: {"data": line, "timestamp": iso}``
for each line so far, then new lines as they come, a ``: keep-alive`` comment when quiet, and the end
of the stream once the job has ended.

Simulator control: POST /_sim/jobs/load-errors {"model": REPO, "message": TEXT} makes every job
serving REPO fail while loading (ERROR with TEXT); {"model": REPO} alone clears it.
"""

from __future__ import annotations

import asyncio
import json
import re
import time
from typing import Any

from aiohttp import web

from app.simulator import fixtures
from app.simulator.httputil import BadBody, bearer, hf_error, iso_of, read_body, unauthorized
from app.simulator.jobs_model import TERMINAL, Job
from app.simulator.state import SimState, sim
from app.simulator.tokens import JOBS, check

_LABEL = re.compile(r"^[A-Za-z0-9._-]{1,100}$")
LOG_POLL_S = 0.05
KEEP_ALIVE_S = 30.0


def _validate(spec: dict[str, Any], state: SimState) -> str | None:
    flavor = spec.get("flavor")
    if not flavor:
        return "flavor is required"
    if flavor not in state.jobs.prices:
        return f"Invalid flavor: {flavor}"
    if ("dockerImage" in spec) == ("spaceId" in spec):
        return "Exactly one of dockerImage or spaceId is required"
    timeout = spec.get("timeoutSeconds")
    if timeout is not None and (not isinstance(timeout, int) or timeout <= 0):
        return "timeoutSeconds must be a positive integer"
    labels = spec.get("labels") or {}
    if not isinstance(labels, dict) or not all(
            isinstance(k, str) and isinstance(v, str) and _LABEL.match(k) and _LABEL.match(v)
            for k, v in labels.items()):
        return "Labels keys and values must be 1-100 characters of [A-Za-z0-9._-]"
    return _validate_expose(spec.get("expose") or {}, state)


def _validate_expose(expose: dict[str, Any], state: SimState) -> str | None:
    if state.settings.refuse_public_ports and expose.get("portsPublic"):
        return "portsPublic refused: this simulator is set to refuse public ports (refuse_public_ports)"
    ports = [*(expose.get("ports") or []), *(expose.get("portsPublic") or [])]
    if not all(isinstance(p, int) and 1 <= p <= 65535 for p in ports):
        return "Exposed ports must be integers between 1 and 65535"
    if len(expose.get("portsPublic") or []) > 20:
        return "At most 20 public ports"
    return None


def _guard(request: web.Request) -> tuple[SimState, str] | web.Response:
    state, namespace = sim(request), request.match_info["namespace"]
    result = check(request, state.tokens, namespace, JOBS)
    return result if isinstance(result, web.Response) else (state, namespace)


def _find(state: SimState, namespace: str, job_id: str) -> Job | web.Response:
    job = state.jobs.get(namespace, job_id)
    return hf_error(404, f"Job {job_id} not found") if job is None else job


def _guarded_job(request: web.Request) -> tuple[SimState, Job] | web.Response:
    """The token may act on the namespace, and the job is there: (state, job); else HF's error answer."""
    guarded = _guard(request)
    if isinstance(guarded, web.Response):
        return guarded
    state, namespace = guarded
    job = _find(state, namespace, request.match_info["job_id"])
    return job if isinstance(job, web.Response) else (state, job)


async def run_job(request: web.Request) -> web.StreamResponse:
    guarded = _guard(request)
    if isinstance(guarded, web.Response):
        return guarded
    state, namespace = guarded
    try:
        spec = await read_body(request)
    except BadBody as exc:
        return hf_error(400, str(exc))
    error = _validate(spec, state)
    if error:
        return hf_error(400, error)
    info = state.tokens.get(bearer(request))
    job = state.jobs.add(namespace, info.user if info else namespace, spec)
    return web.json_response(state.jobs.to_json(job))


async def list_jobs(request: web.Request) -> web.StreamResponse:
    guarded = _guard(request)
    if isinstance(guarded, web.Response):
        return guarded
    state, namespace = guarded
    stages = request.query.getall("stage", [])
    labels = [tuple(lbl.split("=", 1)) for lbl in request.query.getall("label", []) if "=" in lbl]
    jobs = [j for j in state.jobs.in_namespace(namespace)
            if (not stages or j.stage in stages)
            and all((j.spec.get("labels") or {}).get(k) == v for k, v in labels)]
    return web.json_response([state.jobs.to_json(j) for j in jobs])


async def count_jobs(request: web.Request) -> web.StreamResponse:
    guarded = _guard(request)
    if isinstance(guarded, web.Response):
        return guarded
    state, namespace = guarded
    return web.json_response({"count": len(state.jobs.in_namespace(namespace))})


async def inspect_job(request: web.Request) -> web.StreamResponse:
    found = _guarded_job(request)
    if isinstance(found, web.Response):
        return found
    state, job = found
    return web.json_response(state.jobs.to_json(job))


async def cancel_job(request: web.Request) -> web.StreamResponse:
    found = _guarded_job(request)
    if isinstance(found, web.Response):
        return found
    state, job = found
    if job.stage not in TERMINAL:
        state.jobs.set_stage(job, "CANCELED", message="Canceled by user")
    await state.upstreams.close_tiny(job.tiny)
    job.tiny = None
    return web.json_response(state.jobs.to_json(job))


async def _update_spec(request: web.Request, key: str) -> web.StreamResponse:
    found = _guarded_job(request)
    if isinstance(found, web.Response):
        return found
    state, job = found
    try:
        body = await read_body(request)
    except BadBody as exc:
        return hf_error(400, str(exc))
    if key == "expose":
        expose = {"ports": body.get("ports") or [], "portsPublic": body.get("portsPublic") or []}
        error = _validate_expose(expose, state)
        if error:
            return hf_error(400, error)
        job.spec["expose"] = expose
    else:
        job.spec["labels"] = dict(body.get("labels") or {})
    return web.json_response(state.jobs.to_json(job))


async def expose(request: web.Request) -> web.StreamResponse:
    return await _update_spec(request, "expose")


async def labels(request: web.Request) -> web.StreamResponse:
    return await _update_spec(request, "labels")


async def hardware(request: web.Request) -> web.StreamResponse:
    return web.json_response(fixtures.job_hardware(sim(request).jobs.prices))


async def exposed_port(request: web.Request) -> web.StreamResponse:
    state = sim(request)
    job_id, port = request.match_info["job_id"], int(request.match_info["port"])
    job = next((j for j in state.jobs.all() if j.id == job_id), None)
    if job is None or port not in job.ports:
        return hf_error(404, "Not Found")
    if port not in job.public_ports:
        info = state.tokens.get(bearer(request))
        if info is None:
            return unauthorized()
        if job.namespace not in info.namespaces():
            return hf_error(403, f"You don't have access to jobs of {job.namespace}")
    state.jobs.advance(job)
    if job.stage == "SCHEDULING":
        return hf_error(503, "Job is not running yet")
    if job.stage == "RUNNING" and not job.ready:
        return hf_error(503, "Job is starting: the server is not ready yet")
    if job.stage in TERMINAL:
        return hf_error(404, f"Job is {job.stage.lower()}")
    if state.settings.job_answer_delay_s and not request.match_info["tail"].startswith("v1/models"):
        await asyncio.sleep(state.settings.job_answer_delay_s)
        state.jobs.advance(job)
        if job.stage in TERMINAL:
            return hf_error(502, f"Job is {job.stage.lower()}: its server is gone")
    if job.tiny is None:
        job.tiny = await state.upstreams.start_tiny([job.served_model()])
    url = job.tiny.url + "/" + request.match_info["tail"]
    if request.query_string:
        url += "?" + request.query_string
    return await state.upstreams.relay(request, url)


async def logs(request: web.Request) -> web.StreamResponse:
    found = _guarded_job(request)
    if isinstance(found, web.Response):
        return found
    state, job = found
    tail = request.query.get("tail")
    sent = max(0, len(job.logs) - int(tail)) if tail and tail.isdigit() else 0
    response = web.StreamResponse(headers={"Content-Type": "text/event-stream", "Cache-Control": "no-cache"})
    await response.prepare(request)
    quiet_since = time.monotonic()
    while True:
        state.jobs.advance(job)
        lines = job.logs[sent:]
        sent += len(lines)
        for wall, text in lines:
            event = json.dumps({"data": text, "timestamp": iso_of(wall)})
            await response.write(f"data: {event}\n\n".encode())
        if job.stage in TERMINAL or state.closing.is_set():
            break
        if lines:
            quiet_since = time.monotonic()
        elif time.monotonic() - quiet_since >= KEEP_ALIVE_S:
            await response.write(b": keep-alive\n\n")
            quiet_since = time.monotonic()
        await asyncio.sleep(LOG_POLL_S)
    await response.write_eof()
    return response


async def load_errors(request: web.Request) -> web.StreamResponse:
    state = sim(request)
    try:
        body = await read_body(request)
    except BadBody as exc:
        return hf_error(400, str(exc))
    model = body.get("model")
    if not isinstance(model, str):
        return hf_error(400, "model is required")
    if isinstance(body.get("message"), str):
        state.jobs.load_errors[model] = body["message"]
    else:
        state.jobs.load_errors.pop(model, None)
    return web.json_response(state.jobs.load_errors)


def add_routes(app: web.Application) -> None:
    app.router.add_post("/_sim/jobs/load-errors", load_errors)
    app.router.add_get("/api/jobs/hardware", hardware)
    app.router.add_post("/api/jobs/{namespace}", run_job)
    app.router.add_get("/api/jobs/{namespace}", list_jobs)
    app.router.add_get("/api/jobs/{namespace}/count", count_jobs)
    app.router.add_get("/api/jobs/{namespace}/{job_id}", inspect_job)
    app.router.add_post("/api/jobs/{namespace}/{job_id}/cancel", cancel_job)
    app.router.add_get("/api/jobs/{namespace}/{job_id}/logs", logs)
    app.router.add_put("/api/jobs/{namespace}/{job_id}/expose", expose)
    app.router.add_put("/api/jobs/{namespace}/{job_id}/labels", labels)
    app.router.add_route("*", r"/jobs-expose/{job_id:[0-9a-f]{24}}--{port:\d+}/{tail:.*}", exposed_port)
