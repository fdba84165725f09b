"""/_sim/scenarios: start a scenario (YAML or JSON body), see how far it is, stop it, and the
published JSON schema of the file."""

from __future__ import annotations

import json

from aiohttp import web

from rfqkit.timestamps import isoformat_unix
from simulator.api.http.appkeys import SCENARIOS
from simulator.api.http.responses import data_response, raw_json_response
from simulator.api.http.routes import RouteTable
from simulator.api.sim.scenario_files import plan_from_text
from simulator.api.sim.scenario_schemas import ScenarioStatus, published_schema
from simulator.errors import (
    InternalError,
    InvalidRequest,
    NotFound,
    PayloadTooLarge,
    UpstreamError,
)
from simulator.services.sim.scenario import ScenarioRunner

MAX_SCENARIO_BYTES = 256 * 1024
TYPES = ("application/yaml", "application/x-yaml", "text/yaml", "text/x-yaml", "application/json")


def _status(runner: ScenarioRunner) -> ScenarioStatus:
    run = runner.current
    if run is None:
        return ScenarioStatus(
            name=None, started_at=None, steps_done=0, steps_pending=0, next_at=None, errors=[]
        )
    return ScenarioStatus(
        name=run.plan.name,
        started_at=isoformat_unix(run.started_at),
        steps_done=run.done,
        steps_pending=len(run.plan.steps) - run.done,
        next_at=isoformat_unix(runner.next_at()),
        errors=list(run.errors),
    )


async def start_scenario(request: web.Request) -> web.Response:
    if request.content_length is not None and request.content_length > MAX_SCENARIO_BYTES:
        raise PayloadTooLarge(details={"limit_bytes": MAX_SCENARIO_BYTES})
    if request.content_type not in TYPES:
        raise InvalidRequest(
            "Send the scenario file as application/yaml (or application/json)",
            details={"reason": "unsupported_media_type", "contentType": request.content_type},
        )
    raw = await request.read()
    if len(raw) > MAX_SCENARIO_BYTES:
        raise PayloadTooLarge(details={"limit_bytes": MAX_SCENARIO_BYTES})
    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise InvalidRequest("The scenario is not UTF-8 text") from exc
    runner = request.app[SCENARIOS]
    await runner.start(plan_from_text(text))
    return data_response(_status(runner), status=201)


async def get_scenario(request: web.Request) -> web.Response:
    return data_response(_status(request.app[SCENARIOS]))


async def stop_scenario(request: web.Request) -> web.Response:
    runner = request.app[SCENARIOS]
    if runner.current is None:
        raise NotFound("No scenario has run", details={"reason": "no_scenario"})
    runner.stop()
    return data_response(_status(runner))


async def get_schema(request: web.Request) -> web.Response:
    return raw_json_response(json.dumps(published_schema()).encode())


def add_routes(table: RouteTable) -> None:
    add = table.adder("sim", ("sim-scenarios",))
    add(
        "POST",
        "/_sim/scenarios",
        start_scenario,
        "simStartScenario",
        "Start a scenario file (YAML or JSON; schema at /_sim/scenarios/schema): "
        "its settings now, its schedule on the simulator clock",
        responses={201: ScenarioStatus},
        errors=(InvalidRequest, PayloadTooLarge, NotFound, UpstreamError, InternalError),
    )
    add(
        "GET",
        "/_sim/scenarios",
        get_scenario,
        "simGetScenario",
        "The running (or last) scenario and how far it is",
        responses={200: ScenarioStatus},
        errors=(InternalError,),
    )
    add(
        "DELETE",
        "/_sim/scenarios",
        stop_scenario,
        "simStopScenario",
        "Stop the running scenario (what it already set stays)",
        responses={200: ScenarioStatus},
        errors=(NotFound, InternalError),
    )
    add(
        "GET",
        "/_sim/scenarios/schema",
        get_schema,
        "simScenarioSchema",
        "The scenario file's JSON schema (docs/schemas/scenario.schema.json)",
        responses={200: None},
        errors=(InternalError,),
    )
