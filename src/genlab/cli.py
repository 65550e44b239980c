"""The ``genlab`` command: ``genlab demo`` runs the main job, ``genlab serve`` the emulator,
``genlab app`` the Studio as a page, ``genlab notebooks`` copies the tutorials out, and
``genlab report`` turns a parameterised notebook into one HTML page, and ``genlab gate``
says whether a prompt version is worse than its baseline (exit 1)."""

from __future__ import annotations

import argparse
import os
import re
import shutil
import signal
import subprocess
import sys
import tempfile
from collections.abc import Sequence
from importlib import metadata
from pathlib import Path
from types import ModuleType

from genlab._version import __version__

# The emulator's defaults, as `genlab.emulator` has them (kept here so `genlab --help` works in
# an install without the emulator extra; tests/test_cli.py checks they agree).
DEFAULT_API_KEY = "emulator"

# What each command needs beyond genlab's own dependencies: the extras named in pyproject.toml.
NEEDS: dict[str, tuple[str, ...]] = {
    "serve": ("emulator",),
    "demo": ("emulator", "notebook"),
    "app": ("app",),
    "report": ("reports",),
    "gate": ("notebook",),
}

_EXTRA = re.compile(r"""extra\s*==\s*["']([^"']+)["']""")


def _requirements(extra: str, seen: set[str] | None = None) -> list[str]:
    """The distributions genlab's ``extra`` brings in (extras naming extras followed)."""
    seen = set() if seen is None else seen
    if extra in seen:
        return []
    seen.add(extra)
    found: list[str] = []
    for spec in metadata.requires("genlab") or []:
        marker = _EXTRA.search(spec)
        if marker is None or marker.group(1) != extra:
            continue
        name = re.split(r"[\s\[<>=!~;(]", spec.strip(), maxsplit=1)[0]
        if name.lower() == "genlab":
            inner = re.search(r"\[([^\]]+)\]", spec)
            for nested in (inner.group(1).split(",") if inner else []):
                found += _requirements(nested.strip(), seen)
        else:
            found.append(name)
    return found


def missing_extras(command: str) -> tuple[list[str], list[str]]:
    """The extras ``command`` needs that are not installed, and one missing distribution of
    each (empty lists when all is there, or when genlab's metadata cannot be read: a source
    checkout on ``PYTHONPATH``; the command's imports then say what is missing)."""
    extras: list[str] = []
    absent: list[str] = []
    for extra in NEEDS.get(command, ()):
        try:
            wanted = _requirements(extra)
        except metadata.PackageNotFoundError:
            return [], []
        for name in wanted:
            try:
                metadata.version(name)
            except metadata.PackageNotFoundError:
                extras.append(extra)
                absent.append(name)
                break
    return extras, absent


def _install_hint(command: str, extras: Sequence[str], missing: str) -> str:
    return (f"genlab {command}: {missing} is not installed; genlab {command} needs "
            f"pip install 'genlab[{','.join(extras)}]'")


def _needs_extras(command: str) -> bool:
    """Say which extras ``command`` lacks (and how to install them); whether it lacks any."""
    extras, absent = missing_extras(command)
    if extras:
        print(_install_hint(command, extras, absent[0]), file=sys.stderr)
    return bool(extras)


def _import_failed(command: str, exc: ImportError) -> int:
    """An import that failed anyway (a source checkout, a broken install): name the extras."""
    print(_install_hint(command, NEEDS.get(command, ()), exc.name or str(exc)), file=sys.stderr)
    return 2


def _emulator() -> ModuleType | None:
    """``genlab.emulator`` when its extra is installed."""
    try:
        from genlab import emulator
    except ImportError:
        return None
    return emulator


def _serve(args: argparse.Namespace) -> int:
    if _needs_extras("serve"):
        return 2
    try:
        # Imported on use: uvicorn and the emulator are the emulator extra's.
        import uvicorn

        from genlab.emulator import (
            KEEP_ALIVE,
            FaultConfig,
            ProfileApp,
            bind_profile,
            check_api_key,
            create_app,
            get_profile,
        )
    except ImportError as exc:
        return _import_failed("serve", exc)
    if args.profile not in _profile_names():
        print(f"genlab serve: no profile {args.profile!r}; choose one of "
              f"{', '.join(_profile_names())}", file=sys.stderr)
        return 2
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
    if _needs_extras("demo"):
        return 2
    # Imported on use: the demo brings pandas and matplotlib, which `genlab serve` never needs.
    from genlab._demo import run_demo

    try:
        return run_demo(output=args.output, time_scale=args.time_scale)
    except ImportError as exc:
        return _import_failed("demo", exc)


def notebooks_source() -> Path:
    """Where the tutorial notebooks are: inside the installed package (a wheel), else the
    checkout's notebooks/ (an editable install, or ``src/`` on ``PYTHONPATH``)."""
    package = Path(__file__).resolve().parent
    shipped = package / "notebooks"
    if shipped.is_dir():
        return shipped
    checkout = package.parents[1] / "notebooks"
    if checkout.is_dir():
        return checkout
    raise FileNotFoundError(f"this genlab has no notebooks (looked in {shipped} and "
                            f"{checkout}); reinstall it: pip install --force-reinstall genlab")


def tutorial_files(source: Path) -> list[Path]:
    """The files ``genlab notebooks`` copies, relative to ``source``: the tutorials, the report
    and app notebooks, and nbval's sanitizing rules (a checkout's test hooks stay behind)."""
    patterns = ("*.ipynb", "reports/*.ipynb", "app/*.ipynb", "sanitize.cfg")
    return sorted({p.relative_to(source) for pattern in patterns for p in source.glob(pattern)
                   if p.is_file()})


def _notebooks(args: argparse.Namespace) -> int:
    try:
        source = notebooks_source()
    except FileNotFoundError as exc:
        print(f"genlab notebooks: {exc}", file=sys.stderr)
        return 1
    target = Path(args.dir)
    files = tutorial_files(source)
    there = [str(target / f) for f in files if (target / f).exists()]
    if there:
        print(f"genlab notebooks: {len(there)} file(s) already there, copied nothing (genlab "
              f"never overwrites): {', '.join(there[:3])}{' ...' if len(there) > 3 else ''}; "
              "choose another folder, e.g. genlab notebooks genlab-notebooks-2", file=sys.stderr)
        return 2
    for name in files:
        (target / name).parent.mkdir(parents=True, exist_ok=True)
        shutil.copyfile(source / name, target / name)
    print(f"copied {len(files)} file(s) into {target}/:")
    for name in files:
        print(f"  {name}")
    print(f"open them with: jupyter lab {target}   (pip install 'genlab[lab]' brings JupyterLab)")
    return 0


APP_NOTEBOOK = Path("app") / "studio.ipynb"
RATE_NOTEBOOK = Path("app") / "rate.ipynb"


def _app(args: argparse.Namespace) -> int:
    if _needs_extras("app"):
        return 2
    if _voila_missing():
        print(_install_hint("app", NEEDS["app"], "voila"), file=sys.stderr)
        return 2
    try:
        notebook = notebooks_source() / (RATE_NOTEBOOK if args.rate else APP_NOTEBOOK)
    except FileNotFoundError as exc:
        print(f"genlab app: {exc}", file=sys.stderr)
        return 1
    # The page's kernel runs in a folder of its own (Voilà starts it beside the notebook); its
    # history and kept media go where this command runs, as `genlab.connect()` does in a
    # notebook: ./.genlab/, unless GENLAB_HISTORY says otherwise.
    env = dict(os.environ)
    env.setdefault("GENLAB_HISTORY", str(Path.cwd() / ".genlab" / "history.sqlite"))
    # What the page's notebook reads: the experiment or tag to rate; the developer's controls.
    if args.rate:
        env["GENLAB_RATE"] = args.rate
    if args.developer:
        env["GENLAB_APP_DEVELOPER"] = "1"
    # genlab's page template (voila/templates/genlab): Voila's lab template without the
    # stylesheets it loads from a CDN, so the page reaches no host but this one.
    templates = str(Path(__file__).resolve().parent / "_voila")
    env["JUPYTER_PATH"] = os.pathsep.join(p for p in (templates, env.get("JUPYTER_PATH")) if p)
    kept = _kept_folder(env)
    # Voilà serves files (/voila/files/) only from the folder it serves the page from, so a
    # local media store's parent is that folder, the page sits in a hidden folder of its own
    # there while the app runs, and only the store's media files are served.
    place = {"prefix": ".genlab-app-", "dir": kept.parent} if kept else {"prefix": "genlab-app-"}
    with tempfile.TemporaryDirectory(**place) as work:
        page = Path(work) / notebook.name
        shutil.copyfile(notebook, page)
        command = [sys.executable, "-m", "voila", str(page), f"--port={args.port}",
                   "--Voila.ip=127.0.0.1", f"--theme={args.theme}", "--template=genlab",
                   *(_serve_kept_media(kept, env, votes=bool(args.rate)) if kept else [])]
        if args.no_browser:
            command.append("--no-browser")
        what = f"the rating page of {args.rate!r}" if args.rate else "the Studio as a page"
        print(f"genlab app: {what} at http://127.0.0.1:{args.port}/ (Ctrl-C stops it)",
              flush=True)
        process = subprocess.Popen(command, env=env, cwd=work)
        previous = signal.signal(signal.SIGTERM, _stop)
        try:
            return process.wait()
        except (KeyboardInterrupt, _Stopped):
            return 0
        finally:
            signal.signal(signal.SIGTERM, previous)
            if process.poll() is None:
                process.terminate()
                try:
                    process.wait(20)
                except subprocess.TimeoutExpired:
                    process.kill()
                    process.wait()


def _kept_folder(env: dict[str, str]) -> Path | None:
    """The local folder the app's page keeps media in (made if missing); None for a store
    that is not a local folder (a bucket), whose files the cards name instead of linking."""
    from genlab.media import kept_beside, media_location

    media = env.get("GENLAB_MEDIA", "").strip()
    history = env["GENLAB_HISTORY"].removeprefix("sqlite:///")
    if media:
        where = media_location(media)
        if not isinstance(where, Path):
            return None
        folder = where
    elif "://" not in history:
        folder = kept_beside(Path(history))
    else:
        return None
    folder = folder.expanduser().resolve()
    folder.mkdir(parents=True, exist_ok=True)
    return folder


def _serve_kept_media(folder: Path, env: dict[str, str], *, votes: bool = False) -> list[str]:
    """Voilà's options to serve the media files of ``folder`` (and nothing else) from its
    parent, and the page's kernel told where (:mod:`genlab.jupyter`), so the cards' links
    open the originals. ``votes`` (the rating page): also the votes files its "Download my
    votes" writes into ``folder/votes/`` (``votes-NAME.sqlite``, one rater's votes), and no
    other SQLite file: the history itself is never served."""
    from genlab.jupyter import FILES_ROOT, FILES_URL
    from genlab.media import MEDIA_SUFFIXES

    env[FILES_URL], env[FILES_ROOT] = "/voila/files/", str(folder.parent)
    suffixes = "|".join(sorted(re.escape(s.lstrip(".")) for s in MEDIA_SUFFIXES))
    allowed = f"{re.escape(folder.name)}/.*\\.({suffixes})"
    if votes:
        env["GENLAB_RATE_VOTES"] = str(folder / "votes")  # the page's VOTES_FOLDER
        allowed = f"({allowed}|{re.escape(folder.name)}/votes/votes-[^/]*\\.sqlite)"
    # The page's own folder is hidden (.genlab-app-...): the server may open it.
    return [f"--Voila.root_dir={folder.parent}", "--ContentsManager.allow_hidden=True",
            f"--VoilaConfiguration.file_allowlist={allowed}"]


def _voila_missing() -> bool:
    from importlib.util import find_spec

    try:
        return find_spec("voila") is None
    except ImportError:
        return True


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
        f"{copied.reuses} reuse note(s); {copied.ratings} rating(s); {copied.prompts} "
        f"prompt(s) with {copied.prompt_versions} version(s) and {copied.prompt_aliases} "
        f"alias(es); {copied.experiment_cells} experiment cell(s); {copied.scores} score(s). "
        f"{copied.skipped} submission(s) already there; rows already there are left as they are"
    )
    return 0


def _gate(args: argparse.Namespace) -> int:
    if _needs_extras("gate"):
        return 2
    try:
        # Imported on use: the verdict reads the history with pandas and tests with scipy.
        from genlab.experiments import verdict_in
        from genlab.history import History
    except ImportError as exc:
        return _import_failed("gate", exc)
    where = str(args.history)
    if "://" not in where and not Path(where.removeprefix("sqlite:///")).is_file():
        print(f"genlab gate: no history at {where} (give the history file the experiment "
              "ran into, e.g. .genlab/history.sqlite)", file=sys.stderr)
        return 2
    history = History(where)
    try:
        found = verdict_in(history, args.experiment, args.baseline, args.candidate,
                           metric=args.metric, alpha=args.alpha)
    except (LookupError, ValueError) as exc:
        print(f"genlab gate: {exc}", file=sys.stderr)
        return 2
    finally:
        history.close()
    print(found.sentence)
    print(f"  test: {found.test}; alpha {found.alpha:g}")
    return 1 if found.outcome == "worse" else 0


def _report(args: argparse.Namespace) -> int:
    # Imported on use: papermill and nbconvert are the reports extra's, and slow to import.
    if _needs_extras("report"):
        return 2
    try:
        from genlab._runs import parameter_value, run_report
    except ImportError as exc:
        return _import_failed("report", exc)
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
    parser = argparse.ArgumentParser(
        prog="genlab", description=__doc__,
        epilog="Commands that need one of genlab's extras say which, e.g. "
               "pip install 'genlab[emulator]'.",
    )
    parser.add_argument("--version", action="version", version=f"genlab {__version__}")
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
        # Checked by the command: without the emulator extra the names are unknown here.
        metavar="NAME",
        # argparse %-formats help texts: odd-ids' summary names a literal "%".
        help=_profiles_help().replace("%", "%%"),
    )
    serve.add_argument("--log-level", default="warning")
    serve.set_defaults(func=_serve)

    history = sub.add_parser("history", help="work with a task history")
    history_sub = history.add_subparsers(dest="history_command", required=True)
    copies = ("copy a history into another (e.g. a local file into the team's database): "
              "every submission with its status events, the ratings, prompts with their "
              "versions and aliases, experiments' cells and scores; running it again adds "
              "nothing twice")
    migrate = history_sub.add_parser("migrate", help=copies, description=copies)
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

    gates = ("say whether a prompt version is better, worse or undecided against a baseline, "
             "from an experiment's paired cells (people's votes, or a scorer); exit 1 when it "
             "is worse, 0 otherwise, 2 on a usage error: a CI step after genlab report")
    gate = sub.add_parser("gate", help=gates, description=gates)
    gate.add_argument("history", help="the history: a path, sqlite:///path or postgresql://...")
    gate.add_argument("--experiment", required=True, metavar="NAME", help="the experiment")
    gate.add_argument("--baseline", required=True, metavar="VERSION", help="e.g. kite@1")
    gate.add_argument("--candidate", required=True, metavar="VERSION", help="e.g. kite@2")
    gate.add_argument("--metric", default="votes", metavar="votes|SCORER",
                      help="people's votes (default) or a scorer the experiment ran")
    gate.add_argument("--alpha", type=float, default=0.05,
                      help="the most a verdict other than undecided may be said on two "
                           "versions that are alike (default 0.05)")
    gate.set_defaults(func=_gate)

    demo = sub.add_parser("demo", help="the main job, on the embedded emulator")
    demo.add_argument("--output", default="genlab-output", help="where results are written")
    demo.add_argument("--time-scale", type=float, default=0.05)
    demo.set_defaults(func=_demo)

    notebooks = sub.add_parser(
        "notebooks", help="copy the tutorial notebooks into a folder (never overwriting)",
        description="Copy genlab's notebooks (the tutorials, the report notebook and the app's "
                    "notebook) into DIR, made when missing. Files already there are never "
                    "overwritten: then nothing is copied.",
    )
    notebooks.add_argument("dir", nargs="?", default="genlab-notebooks", metavar="DIR",
                           help="where to copy them (default: genlab-notebooks)")
    notebooks.set_defaults(func=_notebooks)

    app = sub.add_parser(
        "app", help="the Studio as a page without code (Voila), on 127.0.0.1",
        description="Serve the Studio as a web page of its widgets, without code cells "
                    "(Voila), on this machine only (127.0.0.1); for demos. It runs on the "
                    "embedded emulator unless GENLAB_BASE_URL is set. Needs "
                    "pip install 'genlab[app]'.",
    )
    app.add_argument("--port", type=int, default=8866)
    app.add_argument("--theme", choices=["light", "dark"], default="light")
    app.add_argument("--no-browser", action="store_true", help="do not open a browser")
    app.add_argument("--rate", metavar="NAME",
                     help="serve the rating page instead: blind pairs of the experiment or tag "
                          "NAME for people who do not code; it asks their name and records "
                          "their votes in the history")
    app.add_argument("--developer", action="store_true",
                     help="show the developer's controls on the Studio's cards (Download, "
                          "Copy as code) and the service's address")
    app.set_defaults(func=_app)
    return parser


def _profile_names() -> list[str]:
    emulator = _emulator()
    return list(emulator.PROFILES) if emulator is not None else ["emulator"]


def _profiles_help() -> str:
    emulator = _emulator()
    if emulator is None:
        return ("play a different service that still follows the interface (the names are "
                "listed once pip install 'genlab[emulator]' is done)")
    return "play a different service that still follows the interface: " + "; ".join(
        f"{p.name}: {p.summary}" for p in emulator.PROFILES.values()
    )


def main(argv: Sequence[str] | None = None) -> int:
    """Entry point of ``genlab`` and ``python -m genlab``."""
    args = build_parser().parse_args(argv)
    result: int = args.func(args)
    return result


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
