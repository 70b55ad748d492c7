"""`lakeload spark start | stop | status`: a warm local Spark engine (a Spark Connect server) for development loops.

    lakeload spark start                 # local[*] on 127.0.0.1:15002 (a free port when that is taken)
    lakeload spark status                # exit 0 and its URL while it runs, exit 1 otherwise
    lakeload spark stop

While the server runs, pipelines in any new process use it (`[spark] mode = "auto"`) instead of starting
Spark themselves, which saves Spark's start (seconds) in every run. With nothing configured, lakeload also starts
it by itself on first use and stops it when idle (`lakeload.spark.warm_engine`); `status` says which.
"""

from __future__ import annotations

import argparse
import sys
from typing import Any


def register(commands: Any) -> None:
    """Add the `spark` command (`start`, `stop`, `status`) to the top-level subparsers."""
    spark = commands.add_parser(
        "spark",
        help="a local Spark Connect server that pipelines use: lakeload spark start | stop | status",
        description=(
            "Run Spark in the background as a Spark Connect server on 127.0.0.1 (pyspark's own, with lakeload's "
            "settings and quiet logs). While it runs, pipelines in any new process use it instead of starting "
            "Spark themselves ([spark] mode = \"auto\"); its pid, port and log file are kept in "
            "~/.lakeload/spark/connect_server.json."
        ),
    )
    actions = spark.add_subparsers(dest="spark_command", metavar="{start,stop,status}", required=True)
    start = actions.add_parser("start", help="start the server in the background (nothing to do when it runs)")
    start.add_argument("--master", default=None, metavar="MASTER",
                       help="Spark master of the server (default: [spark] master, else local[*])")
    start.add_argument("--port", type=int, default=None, metavar="PORT",
                       help="port on 127.0.0.1 (default: 15002, or a free port when that is taken)")
    start.add_argument("--timeout", type=float, default=120.0, metavar="SECONDS",
                       help="how long to wait for the server to answer (default: %(default)s)")
    start.add_argument("--pipeline", default=None, metavar="NAME",
                       help="pipeline name, for <PIPELINE>__SPARK__... scoped settings (default: none)")
    actions.add_parser("stop", help="stop the server (exit 1 when none was running)")
    actions.add_parser("status", help="say whether the server runs and where (exit 0 running, 1 not running)")
    spark.set_defaults(handler=run_spark_command)


def run_spark_command(args: argparse.Namespace) -> int:
    """Run `lakeload spark <start|stop|status>`; returns the exit code."""
    from lakeload.errors import LakeloadError
    from lakeload.spark import connect_server, warm_engine

    try:
        if args.spark_command == "start":
            running = connect_server.running_server()
            if running is not None and running.started_by == warm_engine.AUTO:  # asked for: kept until stopped
                running = warm_engine.keep_by_hand(running)
            state = connect_server.start_server(args.master, args.port, args.timeout, args.pipeline)
            verb = "already running" if running is not None else "started"
            print(f"Spark Connect server {verb}: {state.url} (pid {state.pid}, {state.master}, log {state.log_file})")
            return 0
        if args.spark_command == "stop":
            stopped = connect_server.stop_server()
            if stopped is None:
                print("No Spark Connect server was running.")
                return 1
            if stopped.started_by == warm_engine.AUTO:
                warm_engine.wait_supervisor_gone()  # nothing of the engine is left once this returns
            print(f"Stopped the Spark Connect server at {stopped.url} (pid {stopped.pid}).")
            return 0
        return _status()
    except LakeloadError as exc:
        print(f"lakeload spark {args.spark_command}: {exc}", file=sys.stderr)
        return 2


def _status() -> int:
    from lakeload.spark import connect_server

    state = connect_server.running_server()
    if state is None:
        recorded = connect_server.read_state()
        stale = f" (the one recorded at {recorded.url}, pid {recorded.pid}, is gone)" if recorded else ""
        print(f"No Spark Connect server is running{stale}. Start one with `lakeload spark start`.")
        return 1
    print(f"Spark Connect server running: {state.url} (pid {state.pid}, {state.master}, log {state.log_file})")
    print(_origin(state))
    return 0


def _origin(state: Any) -> str:
    """Who started the server, and for one started automatically, how long until it stops itself."""
    from lakeload.spark import warm_engine

    if state.started_by != warm_engine.AUTO:
        return "Started by hand (`lakeload spark start`): it runs until `lakeload spark stop`."
    left = max(0.0, state.idle_seconds - warm_engine.idle_for())
    return (f"Started automatically (the warm engine, [spark] warm): it stops itself after {state.idle_seconds:.0f} s "
            f"unused, in {left:.0f} s unless a pipeline uses it; `lakeload spark stop` stops it now.")
