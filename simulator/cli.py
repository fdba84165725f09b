"""`rfqsim serve`: starts the chains, deploys the venue and serves the API (the other commands of
the `rfqsim` command line are in the rfqsim package)."""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import errno
import faulthandler
import gc
import logging
import os
import signal
import socket
import sys
import tempfile
import threading
import time
from dataclasses import asdict
from functools import partial
from pathlib import Path
from typing import Any

from aiohttp import web

from rfqkit.anvil import AnvilStartError
from rfqkit.tasks import cancel_and_wait
from simulator.adapters.redis.engine import EngineUnreachable
from simulator.adapters.redis.server import RedisStartError, start_redis
from simulator.adapters.rfq.forked_child import ForkedChild, fork_fleet_child
from simulator.adapters.sim.state_dir import SavedState, StateDirError, read_state_dir
from simulator.adapters.sim.venue_instances import InstanceStartError, VenueInstances
from simulator.adapters.store.history_db import HISTORY_FILE, HistoryDb, HistoryFileError
from simulator.api.http.appkeys import (
    ACCESS,
    CONFIGURATION,
    DURABLE,
    HISTORY,
    INSTANCES,
    MAKER_SESSIONS,
    RAMP,
    RANDOM,
    SCENARIOS,
    SETTINGS,
    STATE,
    VENUE,
)
from simulator.api.http.server import ApiRunner
from simulator.banner import banner, key_records, operator_inputs, write_ready_file
from simulator.errors import InvalidRequest
from simulator.runtime.app import create_app
from simulator.runtime.chains import ChainStartupError
from simulator.runtime.lifecycle import SHUTDOWN, StopSteps
from simulator.runtime.makers import FLEET, spawn_fleet_process, start_fleet, stop_fleet
from simulator.runtime.ports import taken_port_messages
from simulator.runtime.provider import connect_provider_webhooks
from simulator.runtime.rfq import instance_exited
from simulator.runtime.scenario import read_scenario_file
from simulator.runtime.state import SAVED_STATE, resume_durable, resume_saved_state, save_state
from simulator.serve_args import add_parser, settings_from_args
from simulator.services.access.keys import create_demo_keys, create_qa_keys, create_qa_maker_key
from simulator.services.shared.state import StateFormatError
from simulator.services.sim.info import simulator_info
from simulator.services.sim.scenario import ScenarioPlan
from simulator.settings import Settings

__all__ = ["StopWatchdog", "add_parser", "run", "serve"]  # add_parser: for rfqsim/cli.py

log = logging.getLogger("rfqsim")
EXIT_PORT_TAKEN = 3
INSTANCES_READY_S = 180.0  # the other instances of --instances N, all ready within this
LINKED_S = 30.0  # then every maker connected to the first linked to each of them
LISTEN_BACKLOG = 1024  # the venue's listeners (several instances)


class StopWatchdog:
    """Bounds the stop: once a stop begins, the process is gone within `deadline_s` whatever
    wedges (a second SIGTERM/SIGINT ends it at once). A thread, not a loop timer, so it fires
    even when the event loop itself is blocked. `os._exit` skips the interpreter's exit join on
    stray threads; the Anvil children die with us (PR_SET_PDEATHSIG)."""

    def __init__(
        self, deadline_s: float, ready_file: Path | None, steps: StopSteps | None = None
    ) -> None:
        self.deadline_s = deadline_s
        self.ready_file = ready_file
        self._timer: threading.Timer | None = None
        self.steps = steps or StopSteps()  # said, with their times, if the deadline passes
        self._loop: asyncio.AbstractEventLoop | None = None

    def at(self, step: str) -> None:
        self.steps.at(step)

    def arm(self) -> None:
        """Idempotent: the deadline counts from the first call."""
        with contextlib.suppress(RuntimeError):
            self._loop = asyncio.get_running_loop()
        if self._timer is None:
            self._timer = threading.Timer(self.deadline_s, self.exit_now, args=("deadline",))
            self._timer.daemon = True
            self._timer.start()

    def on_signal(self) -> None:
        if self._timer is not None:
            self.exit_now("second signal")
        self.arm()

    def disarm(self) -> None:
        if self._timer is not None:
            self._timer.cancel()

    def exit_now(self, why: str) -> None:
        try:  # whatever goes wrong in saying so, the process still exits below
            log.error(
                "stop did not finish (%s, deadline %.1fs, while %s; steps: %s); exiting now; "
                "where each thread and task was follows",
                why,
                self.deadline_s,
                self.steps.current,
                self.steps.timings(),
            )
            self._where()
        except Exception:
            log.exception("stop did not finish (%s); exiting now", why)
        if self.ready_file is not None:
            with contextlib.suppress(OSError):
                self.ready_file.unlink(missing_ok=True)
        logging.shutdown()
        sys.stdout.flush()
        os._exit(1)

    def _where(self) -> None:
        """Every thread's stack (the loop's own shows a blocking call), then each task the loop
        still has and the line it waits at: what held the stop, for the next one to fix."""
        with contextlib.suppress(Exception):
            faulthandler.dump_traceback(file=sys.stderr, all_threads=True)
        if self._loop is None:
            return
        with contextlib.suppress(Exception):  # read from this thread while the loop is stuck
            for task in list(asyncio.all_tasks(self._loop)):
                where = " > ".join(_await_chain(task.get_coro())) or "(not started)"
                print(f"rfqsim: task {task.get_name()} at {where}", file=sys.stderr)
        sys.stderr.flush()


def _await_chain(coro: Any) -> list[str]:
    """Where a suspended task waits, outermost call first: each coroutine's line, down the
    chain of what it awaits (a task's own stack shows only the outermost frame)."""
    chain: list[str] = []
    while coro is not None and len(chain) < 40:
        frame = getattr(coro, "cr_frame", None) or getattr(coro, "gi_frame", None)
        if frame is not None:
            chain.append(f"{frame.f_code.co_filename}:{frame.f_lineno} {frame.f_code.co_name}")
        coro = getattr(coro, "cr_await", None) or getattr(coro, "gi_yieldfrom", None)
    return chain


async def serve(
    settings: Settings,
    ready_file: Path | None,
    access_log: bool,
    saved: SavedState | None = None,
    scenario: ScenarioPlan | None = None,
    forked_fleet: ForkedChild | None = None,
    listen: socket.socket | None = None,
    others: VenueInstances | None = None,
) -> int:
    """`listen`: the venue's listening socket, bound by the first of several instances (this
    one then also listens on a loopback port of its own); `others`: the instances the first
    starts once it is up."""
    app = create_app(settings)
    app[FLEET].forked = forked_fleet
    if saved is not None:
        try:  # every part read with its participant's schema before anything starts
            app[STATE].registry.check(saved.services)
        except StateFormatError as exc:
            print(f"rfqsim: {saved.path}: {exc}", file=sys.stderr)
            return 2
        app[SAVED_STATE] = saved
    if settings.state.dir is not None:
        try:  # the configuration written as it changed, read with the same schemas
            app[STATE].registry.check(app[DURABLE].saved())
        except StateFormatError as exc:
            print(f"rfqsim: {app[HISTORY].path}: {exc}", file=sys.stderr)
            return 2
    runner = ApiRunner(
        app,
        access_log=logging.getLogger("aiohttp.access") if access_log else None,
        shutdown_timeout=settings.api.shutdown_grace_s,
    )
    shutdown = app[SHUTDOWN]  # a signal, or the runtime (a chain died, on_chain_exit: stop)
    watchdog = StopWatchdog(settings.api.stop_deadline_s, ready_file, shutdown.steps)

    def on_signal() -> None:
        watchdog.on_signal()
        shutdown.requested.set()

    loop = asyncio.get_running_loop()
    for sig in (signal.SIGINT, signal.SIGTERM):
        loop.add_signal_handler(sig, on_signal)
    ready = False
    watching: asyncio.Task[None] | None = None  # the other instances, for one that exits
    try:
        await spawn_fleet_process(app)  # makers_process: own; its fleet starts below
        await runner.setup()  # runs the cleanup contexts' start-up: chains, deployment
        if listen is None:
            await web.TCPSite(runner, settings.api.host, settings.api.port).start()
            host, port = runner.addresses[0][:2]
            public_url = f"http://{host}:{port}"
        else:  # several instances: the venue's address, and this instance's own
            await web.SockSite(runner, listen).start()
            await web.TCPSite(runner, "127.0.0.1", 0).start()
            host, port = runner.addresses[-1][:2]
            public_host, public_port = listen.getsockname()[:2]
            public_url = f"http://{public_host}:{public_port}"
        if saved is not None:
            await resume_saved_state(app, saved)  # before the makers: their keys are added
        if settings.state.dir is not None:
            resume_durable(app)  # what changed after that stop, written as it changed
        await start_fleet(app, f"http://{host}:{port}")  # makers connect over the real socket
        connect_provider_webhooks(app, public_url)  # the sandbox calls the venue back
        keys = app[ACCESS].keys
        info = simulator_info(app[SETTINGS], app[VENUE], public_url)
        app[INSTANCES].here(f"http://{host}:{port}")
        # Full keys exist only here: the simulator keeps hashes.
        info["demo_keys"] = key_records(keys, create_demo_keys(keys, settings.seed))
        if not settings.api.control_api:  # the QA team cannot make keys: the operator hands them
            info["qa_keys"] = key_records(keys, create_qa_keys(keys, settings.seed))
            info["maker_keys"] = key_records(keys, [create_qa_maker_key(keys, settings.seed)])
        info["provider_url"] = app[RAMP].controls.sandbox_url  # the ramp provider (sandbox)
        if (configuration := app[CONFIGURATION]) is not None:
            configuration.join()  # several instances: the keys made here join the venue's
        await app[STATE].take_baseline()  # what POST /_sim/reset returns to
        if others is not None:
            await start_others(app, others, info)
            watching = asyncio.create_task(
                others.watch(partial(instance_exited, app)), name="instances-watch"
            )
        info["instances"] = [asdict(i) for i in await app[INSTANCES].instances()]
        if scenario is not None:  # after the baseline: a reset returns to the plain start-up
            await app[SCENARIOS].start(scenario)
        ready = True
        control = settings.api.control_api
        print(banner(info, control_api=control), flush=True)
        # Everything built at start-up (settings, contract ABIs, pydantic schemas, the route
        # table) lives until the stop: frozen out of the collector's reach, a full collection
        # under load walks only what requests created since, not all of it (gen-2 pauses of
        # 20-60 ms were seen in a firm-quote load, each one a p99 of its own).
        gc.collect()
        gc.freeze()
        if ready_file is not None:
            write_ready_file(ready_file, info if control else operator_inputs(info))
        await shutdown.requested.wait()
        return shutdown.exit_code
    finally:
        watchdog.arm()  # also when start-up failed: the stop itself is bounded
        if ready and settings.state.dir is not None:
            watchdog.at("saving the state")
            await save_state(app, Path(settings.state.dir))
        if others is not None:
            watchdog.at("stopping the other instances")
            if watching is not None:
                await cancel_and_wait([watching])  # their exits from here on are the stop's
            await others.stop(settings.api.stop_deadline_s / 2)
        watchdog.at("stopping the maker fleet")
        await stop_fleet(app)
        # Then each part of the app as it closes (runtime/lifecycle.py `stop_step`).
        watchdog.at("closing the app: requests in flight, open streams")
        await runner.cleanup()  # stops every Anvil we started
        if ready_file is not None:
            watchdog.at("removing the ready file")
            await asyncio.to_thread(ready_file.unlink, missing_ok=True)
        watchdog.disarm()
        log.info("stopped: %s", shutdown.steps.timings())


async def start_others(app: web.Application, others: VenueInstances, info: dict[str, Any]) -> None:
    """The other instances of the venue, on this one's engine and chains, until each is ready
    and every maker connected here is linked to each of them."""
    redis_url = app[SETTINGS].shared.redis_url
    assert redis_url is not None, "several instances share an engine"
    others.start(redis_url, {int(c["chain_id"]): str(c["rpc_url"]) for c in info["chains"]})
    await others.wait_ready(INSTANCES_READY_S)  # each listed itself on the engine before
    numbers = {i.id for i in await app[INSTANCES].instances()} - {app[RANDOM].instance}
    if not await app[MAKER_SESSIONS].linked(numbers, LINKED_S):
        log.warning("not every maker was linked to every instance within %.0f s", LINKED_S)


def _no_thread_left(timeout_s: float = 1.0) -> bool:
    """True when every non-daemon thread but this one has ended (within `timeout_s`); the
    interpreter would otherwise join them on exit, with no limit."""
    deadline = time.monotonic() + timeout_s
    for thread in threading.enumerate():
        if thread is threading.main_thread() or thread.daemon:
            continue
        thread.join(max(0.0, deadline - time.monotonic()))
        if thread.is_alive():
            log.error("thread %r still running after the stop; exiting without it", thread.name)
            return False
    return True


def scenario_problem(exc: InvalidRequest) -> str:
    """One line: the message and each issue with its path in the file."""
    issues = (exc.details or {}).get("issues") or []
    named = "; ".join(f"{i.get('field') or '(file)'}: {i.get('message')}" for i in issues)
    return f"{exc.message}: {named}" if named else exc.message


def run(args: argparse.Namespace) -> int:
    """`rfqsim serve`: runs until SIGINT/SIGTERM; 2 for invalid settings, 3 when a port is taken,
    1 when a node fails. Every failure is one line on stderr."""
    try:
        settings = settings_from_args(args)
    except (ValueError, argparse.ArgumentTypeError) as exc:
        print(f"rfqsim: invalid settings: {exc}", file=sys.stderr)
        return 2
    saved: SavedState | None = None
    if settings.state.dir is not None:
        try:  # checked whole before anything starts
            saved = read_state_dir(
                Path(settings.state.dir),
                seed=settings.seed,
                chain_ids=[c.chain_id for c in settings.chains],
            )
            HistoryDb.check_file(Path(settings.state.dir) / HISTORY_FILE)
        except (StateDirError, HistoryFileError) as exc:
            print(f"rfqsim: {exc}", file=sys.stderr)
            return 2
    scenario: ScenarioPlan | None = None
    if args.scenario is not None:
        try:
            scenario = read_scenario_file(Path(args.scenario))
        except OSError as exc:
            print(f"rfqsim: --scenario {args.scenario}: {exc.strerror}", file=sys.stderr)
            return 2
        except InvalidRequest as exc:
            print(f"rfqsim: --scenario {args.scenario}: {scenario_problem(exc)}", file=sys.stderr)
            return 2
    taken = taken_port_messages(settings)  # before anything starts
    for message in taken:
        print(f"rfqsim: {message}", file=sys.stderr)
    if taken:
        return EXIT_PORT_TAKEN
    if args.instances > 1:
        return _several(args, settings, saved, scenario)
    listen = None if args.shared_socket is None else _own_listener(args.shared_socket)
    return _run_serve(args, settings, saved, scenario, listen=listen)


def _several(
    args: argparse.Namespace,
    settings: Settings,
    saved: SavedState | None,
    scenario: ScenarioPlan | None,
) -> int:
    """`--instances N`: the engine (started here unless --redis-url names one), the venue's
    listening socket, then this process as the first instance, which starts the others."""
    if settings.state.dir is not None:
        print("rfqsim: --state-dir is not supported with --instances yet", file=sys.stderr)
        return 2
    node = None
    if settings.shared.redis_url is None:
        try:
            node = start_redis()
        except RedisStartError as exc:
            print(f"rfqsim: {exc}", file=sys.stderr)
            return 1
        shared = settings.shared.model_copy(update={"redis_url": node.url})
        settings = settings.model_copy(update={"shared": shared})
    try:
        with (
            socket.create_server(
                (settings.api.host, settings.api.port), backlog=LISTEN_BACKLOG, reuse_port=True
            ) as listen,
            tempfile.TemporaryDirectory(prefix="rfqsim-instances-") as directory,
        ):
            others = VenueInstances(_serve_argv(), listen, args.instances - 1, Path(directory))
            return _run_serve(args, settings, saved, scenario, listen=listen, others=others)
    finally:
        if node is not None:
            node.stop()


def _own_listener(inherited: int) -> socket.socket:
    """Another instance's listener on the venue's address: a socket of its own bound to the
    address of the one the first passed down (SO_REUSEPORT: the kernel spreads new connections
    evenly over the instances' sockets by their addresses), which it then closes."""
    with socket.socket(fileno=inherited) as first:
        address = first.getsockname()
        family = first.family
    listener = socket.socket(family, socket.SOCK_STREAM)
    listener.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    listener.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEPORT, 1)
    listener.bind(address)
    listener.listen(LISTEN_BACKLOG)
    return listener


def _serve_argv() -> list[str]:
    """This process's `serve` arguments, as typed (what the other instances start from)."""
    words = sys.argv[1:]
    return words[words.index("serve") + 1 :] if "serve" in words else words


def _run_serve(
    args: argparse.Namespace,
    settings: Settings,
    saved: SavedState | None,
    scenario: ScenarioPlan | None,
    *,
    listen: socket.socket | None = None,
    others: VenueInstances | None = None,
) -> int:
    # The fleet's own process shares our imports when forked now, before any loop or thread.
    own_fleet = settings.makers is not None and settings.makers_process == "own"
    forked_fleet = fork_fleet_child() if own_fleet else None
    try:
        code = asyncio.run(
            serve(
                settings,
                Path(args.ready_file) if args.ready_file else None,
                args.access_log,
                saved,
                scenario,
                forked_fleet,
                listen,
                others,
            )
        )
    except (AnvilStartError, ChainStartupError, EngineUnreachable, InstanceStartError) as exc:
        print(f"rfqsim: {exc}", file=sys.stderr)
        code = 1
    except InvalidRequest as exc:  # the scenario names makers, chains or tokens that are not here
        print(f"rfqsim: --scenario {args.scenario}: {scenario_problem(exc)}", file=sys.stderr)
        code = 2
    except OSError as exc:
        if exc.errno != errno.EADDRINUSE:
            raise
        # Taken between the check and the bind (a race the check cannot close).
        print(f"rfqsim: a port is already in use: {exc.strerror}", file=sys.stderr)
        code = EXIT_PORT_TAKEN
    if not _no_thread_left():
        logging.shutdown()
        sys.stdout.flush()
        os._exit(code)
    return code
