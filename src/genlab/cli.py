"""The ``genlab`` command: ``genlab serve`` runs the emulator, ``genlab demo`` the main job,
``genlab report`` a parameterised notebook into one HTML page."""

from __future__ import annotations

import argparse
import os
import signal
import sys
from collections.abc import Sequence
from pathlib import Path

import uvicorn

from genlab.emulator import (
    DEFAULT_API_KEY,
    KEEP_ALIVE,
    PROFILES,
    FaultConfig,
    ProfileApp,
    bind_profile,
    check_api_key,
    create_app,
    get_profile,
)


def _serve(args: argparse.Namespace) -> int:
    try:
        check_api_key(args.api_key)
    except ValueError as exc:
        print(f"genlab serve: {exc}", file=sys.stderr)
        return 2
    faults = FaultConfig(
        fail_rate=args.fail_rate,
        error_rate=args.error_rate,
        error_after_billing=args.error_after_billing,
        rate_limit_rate=args.rate_limit_rate,
        retry_after=args.retry_after,
        latency=args.latency,
        drop_rate=args.drop_rate,
        seed=args.seed,
    )
    try:
        app = create_app(
            api_key=args.api_key,
            time_scale=args.time_scale,
            faults=faults,
            max_processing=args.max_processing,
            media_dir=args.media_dir,
            media_max_bytes=args.media_max_mb * 1024 * 1024,
            fetch_max_request_bytes=args.fetch_max_request_mb * 1024 * 1024,
            fetch_concurrency=args.fetch_concurrency,
        )
    except ValueError as exc:  # a limit below 1: say which, not a traceback
        print(f"genlab serve: {exc}", file=sys.stderr)
        return 2
    profile = get_profile(args.profile)  # argparse checked the name
    sockets, base_url, media_origin = bind_profile(profile, args.host, args.port)
    served = app if profile.name == "emulator" else ProfileApp(
        app, profile, media_origin=media_origin, seed=args.seed
    )
    print(f"genlab emulator serving at {base_url}", flush=True)
    if served is not app:
        print(f"  profile {profile.name}: {profile.summary}", flush=True)
    if media_origin:
        print(f"  media are served from {media_origin}", flush=True)
    print(f"  export GENLAB_BASE_URL={base_url}", flush=True)
    print("  export GENLAB_API_KEY=<the key given with --api-key or GENLAB_API_KEY>", flush=True)
    config = uvicorn.Config(served, log_level=args.log_level, access_log=False,
                            timeout_keep_alive=KEEP_ALIVE)
    # uvicorn shuts down gracefully on SIGINT and SIGTERM, then raises the signal again with
    # the handler found before it started; this one turns SIGTERM into an exception, so the
    # cleanup below runs instead of the default handler ending the process on the spot.
    previous = signal.signal(signal.SIGTERM, _stop)
    try:
        uvicorn.Server(config).run(sockets=sockets)
    except (KeyboardInterrupt, _Stopped):
        pass
    finally:
        signal.signal(signal.SIGTERM, previous)
        app.emulator.close()  # removes the temporary media folder (never a --media-dir)
    return 0


class _Stopped(Exception):
    """SIGTERM arrived."""


def _stop(signum: int, frame: object) -> None:
    raise _Stopped


def _demo(args: argparse.Namespace) -> int:
    # Imported on use: the demo brings pandas and matplotlib, which `genlab serve` never needs.
    from genlab._demo import run_demo

    return run_demo(output=args.output, time_scale=args.time_scale)


def _history_migrate(args: argparse.Namespace) -> int:
    from genlab._errors import GenlabError
    from genlab.history import copy_history

    try:
        copied = copy_history(args.source, args.destination)
    except GenlabError as exc:
        print(f"genlab history migrate: {exc}", file=sys.stderr)
        return 2
    print(
        f"copied {copied.tasks} submission(s) with {copied.events} status event(s) and "
        f"{copied.reuses} reuse note(s), and {copied.ratings} rating(s); {copied.skipped} "
        "already there"
    )
    return 0


def _report(args: argparse.Namespace) -> int:
    # Imported on use: papermill and nbconvert are the reports extra's, and slow to import.
    try:
        from genlab._runs import parameter_value, run_report
    except ImportError as exc:
        print(f"genlab report: {exc.name} is missing; pip install \"genlab[reports]\"",
              file=sys.stderr)
        return 2
    notebook = Path(args.notebook)
    output = Path(args.output) if args.output else Path(notebook.stem + ".html")
    parameters = {name: parameter_value(value) for name, value in args.parameter or []}
    try:
        done = run_report(notebook, output, parameters, cwd=args.cwd, kernel=args.kernel,
                          timeout=args.timeout, show_code=args.show_code, keep=args.keep)
    except FileNotFoundError as exc:
        print(f"genlab report: {exc}", file=sys.stderr)
        return 2
    if done.error is not None:
        print(f"genlab report: the notebook stopped: {done.error}; the page shows how far "
              f"it got: {done.html}", file=sys.stderr)
        return 1
    print(f"report written to {done.html}")
    return 0


def build_parser() -> argparse.ArgumentParser:
    """The argument parser of the ``genlab`` command.

    Example:
        >>> build_parser().parse_args(["serve", "--port", "0"]).port
        0
    """
    parser = argparse.ArgumentParser(prog="genlab", description=__doc__)
    sub = parser.add_subparsers(dest="command", required=True)

    serve = sub.add_parser("serve", help="run the emulator until interrupted")
    serve.add_argument("--host", default="127.0.0.1")
    serve.add_argument("--port", type=int, default=8765, help="0 picks a free port")
    serve.add_argument(
        "--api-key",
        default=os.environ.get("GENLAB_API_KEY", DEFAULT_API_KEY),
        help="the bearer key clients must send (default: $GENLAB_API_KEY, "
        f"else {DEFAULT_API_KEY!r})",
    )
    serve.add_argument(
        "--time-scale",
        type=float,
        default=1.0,
        help="multiplies generation times; 0.02 finishes a video in < 1 s",
    )
    serve.add_argument(
        "--max-processing",
        type=int,
        default=8,
        help="tasks processed at once; the rest stay queued",
    )
    serve.add_argument(
        "--media-dir", type=Path, default=None, help="where media is kept (temporary)"
    )
    serve.add_argument("--media-max-mb", type=int, default=1024, help="media store cap")
    serve.add_argument(
        "--fetch-max-request-mb",
        type=int,
        default=512,
        help="the most one request's reference media may add up to (MiB)",
    )
    serve.add_argument(
        "--fetch-concurrency", type=int, default=4, help="references of a request fetched at once"
    )
    serve.add_argument("--fail-rate", type=float, default=0.0, help="share of tasks that fail")
    serve.add_argument("--error-rate", type=float, default=0.0, help="share of 5xx answers")
    serve.add_argument(
        "--error-after-billing",
        type=float,
        default=0.5,
        help="share of submit 503s sent after the task was created and billed",
    )
    serve.add_argument("--rate-limit-rate", type=float, default=0.0, help="share of 429s")
    serve.add_argument("--retry-after", type=float, default=1.0, help="Retry-After seconds")
    serve.add_argument("--latency", type=float, default=0.0, help="seconds added per answer")
    serve.add_argument(
        "--drop-rate",
        type=float,
        default=0.0,
        help="share of submits accepted, billed, then dropped unanswered",
    )
    serve.add_argument("--seed", type=int, default=None, help="makes the faults repeatable")
    serve.add_argument(
        "--profile",
        default="emulator",
        choices=list(PROFILES),
        # argparse %-formats help texts: odd-ids' summary names a literal "%".
        help=(
            "play a different service that still follows the interface: "
            + "; ".join(f"{p.name}: {p.summary}" for p in PROFILES.values())
        ).replace("%", "%%"),
    )
    serve.add_argument("--log-level", default="warning")
    serve.set_defaults(func=_serve)

    history = sub.add_parser("history", help="work with a task history")
    history_sub = history.add_subparsers(dest="history_command", required=True)
    migrate = history_sub.add_parser(
        "migrate",
        help="copy a history into another (e.g. a local file into the team's database); "
             "running it again adds nothing twice",
    )
    migrate.add_argument("source", help="the history to copy: a path or sqlite:///path")
    migrate.add_argument(
        "destination", help="where to copy it: postgresql://user@host/db, a path, ..."
    )
    migrate.set_defaults(func=_history_migrate)

    report = sub.add_parser(
        "report",
        help="run a parameterised notebook headless and write its outputs as one HTML page",
        description="Run NOTEBOOK (papermill: a copy, with -p values replacing the defaults "
                    "of its cell tagged 'parameters') and export it to HTML (nbconvert). "
                    "Values are read as JSON when they parse (5000, true, "
                    "'[\"image-b\", \"image-d\"]'), else as text.",
    )
    report.add_argument("notebook", help="e.g. notebooks/reports/comparison-report.ipynb")
    report.add_argument("-p", "--parameter", nargs=2, action="append",
                        metavar=("NAME", "VALUE"), help="a parameter (repeat for more)")
    report.add_argument("-o", "--output", help="the HTML file (default: NOTEBOOK's name .html)")
    report.add_argument("--cwd", help="the folder the notebook runs in (default: this one)")
    report.add_argument("--kernel", help="the Jupyter kernel (default: the notebook's)")
    report.add_argument("--timeout", type=float, help="seconds a cell may take")
    report.add_argument("--show-code", action="store_true", help="keep the code in the page")
    report.add_argument("--keep", help="also keep the executed notebook at this path")
    report.set_defaults(func=_report)

    demo = sub.add_parser("demo", help="the main job, on the embedded emulator")
    demo.add_argument("--output", default="genlab-output", help="where results are written")
    demo.add_argument("--time-scale", type=float, default=0.05)
    demo.set_defaults(func=_demo)
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    """Entry point of ``genlab`` and ``python -m genlab``."""
    args = build_parser().parse_args(argv)
    result: int = args.func(args)
    return result


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
