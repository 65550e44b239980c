"""Time to media: from submit to the video on screen, minus the service's own processing time.

A person presses Generate in a task card (:class:`genlab.widgets.TaskCard`, the Studio's
card): the card submits, polls, downloads the result and embeds it. What the person waits for
beyond the service's processing is genlab's overhead:

* **submit**: the submission's round trip (``created_at`` minus the moment of submitting),
* **poll lag**: ``completed_at`` to the moment the answer saying ``succeeded`` reached the
  client (read off the wire by a transport wrapper), in unscaled (real-service) seconds: the
  poll schedule's share, which a time-scaled emulator shrinks and this figure scales back,
* **media**: from then until the card's media shows, in real seconds: keeping (download,
  provenance, journal) when the client keeps, else the card's own download, then the embed;
  it includes the emulator rendering the MP4 on its first request, which a real service has
  done before it reports success. Keeping happens before the card is told of the success, so
  measuring the badge instead would count the keep's real seconds as scaled poll lag.

A 5 s 720P video-a clip, with a learned history (a warm-up batch first), against an emulator
in its own process at ``time_scale``: 1.0 by default, the service's own pace, because a
shorter scale multiplies every real-time stall of the client's event loop (while another
task is kept, say) by ``1 / time_scale`` when the poll lag is scaled back.

Run it::

    .venv/bin/python benchmarks/bench_time_to_media.py            # ~6 minutes
    .venv/bin/python benchmarks/bench_time_to_media.py --time-scale 0.25   # quicker, coarser

Goals: overhead p50 under 0.5 s (issue 16); keeping the result the moment it succeeds (the
client's keep step, as ``genlab.connect()`` does) adds at most 0.1 s to it (issue 22). Both
are measured: once with a client that keeps nothing (the card saves its copy), once with one
that keeps (the card shows the kept files).
"""

from __future__ import annotations

import argparse
import json
import statistics
import sys
import threading
import time
from pathlib import Path
from tempfile import TemporaryDirectory
from typing import Any

import httpx

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

import genlab  # noqa: E402
from benchmarks.bench_polling import API_KEY, emulator_process  # noqa: E402
from genlab.client.journal import MemoryJournal
from genlab.widgets import Background, TaskCard  # noqa: E402

BODY: dict[str, Any] = {"model": "video-a", "resolution": "720P", "duration": 5}


class SuccessClock(httpx.AsyncBaseTransport):
    """The client's transport, noting when each task's first "succeeded" answer arrived."""

    def __init__(self) -> None:
        self.inner = httpx.AsyncHTTPTransport()
        self.succeeded_at: dict[str, float] = {}

    async def handle_async_request(self, request: httpx.Request) -> httpx.Response:
        response = await self.inner.handle_async_request(request)
        if request.method != "GET":
            return response
        body = await response.aread()
        arrived = time.time()
        try:
            data = json.loads(body)
        except ValueError:
            data = None
        if isinstance(data, dict) and data.get("status") == "succeeded":
            self.succeeded_at.setdefault(str(data.get("task_id")), arrived)
        return httpx.Response(response.status_code, headers=response.headers, content=body,
                              request=request, extensions=response.extensions)

    async def aclose(self) -> None:
        await self.inner.aclose()


def measure(
    client: genlab.Client, clock: SuccessClock, media_dir: Path, prompt: str, scale: float
) -> dict[str, Any]:
    """One card, start to media on screen; the parts of its overhead."""
    seen: dict[str, float] = {}
    shown = threading.Event()
    card = TaskCard(client, {**BODY, "prompt": prompt}, media_dir=media_dir)

    def media(change: dict[str, Any]) -> None:
        if change["new"]:
            seen["visible"] = time.time()
            shown.set()

    card.media.observe(media, names="value")
    submitted = time.time()
    card.start()
    if not card.wait_done(120) or not shown.is_set():
        raise RuntimeError(f"the card never showed its media: {card.status} {card.error}")
    record = card.record
    assert record is not None and record.created_at and record.completed_at
    created, completed = record.created_at.timestamp(), record.completed_at.timestamp()
    arrived = clock.succeeded_at[record.task_id]
    submit = created - submitted
    lag = (arrived - completed) / scale
    shown_after = seen["visible"] - arrived
    return {
        "submit_s": submit,
        "poll_lag_s": lag,
        "media_s": shown_after,
        "overhead_s": submit + lag + shown_after,
        "processing_s": (completed - created) / scale,
    }


def run(
    n_tasks: int = 8, *, time_scale: float = 1.0, warmup: int = 4, concurrency: int = 2
) -> list[dict[str, Any]]:
    """Time ``n_tasks`` cards without keeping, then with; rows per part, then the goals."""
    plain = _samples(n_tasks, time_scale, warmup, concurrency, keep=False)
    kept = _samples(n_tasks, time_scale, warmup, concurrency, keep=True)
    rows = []
    for label, samples in (("", plain), ("kept: ", kept)):
        rows += [
            {"part": label + part, "p50": statistics.median(s[part] for s in samples),
             "max": max(s[part] for s in samples), "tasks": len(samples)}
            for part in ("submit_s", "poll_lag_s", "media_s", "overhead_s", "processing_s")
        ]
    overhead = statistics.median(s["overhead_s"] for s in plain)
    with_keep = statistics.median(s["overhead_s"] for s in kept)
    return rows + [
        {"name": "time to media: overhead p50", "value": overhead, "goal": 0.5, "unit": "s",
         "met": overhead < 0.5},
        {"name": "time to media, keeping: overhead p50", "value": with_keep, "goal": 0.5,
         "unit": "s", "met": with_keep < 0.5},
        {"name": "what keeping adds (p50 with minus without)", "value": with_keep - overhead,
         "goal": 0.1, "unit": "s", "met": with_keep - overhead <= 0.1},
    ]


def _samples(
    n_tasks: int, time_scale: float, warmup: int, concurrency: int, *, keep: bool
) -> list[dict[str, Any]]:
    samples: list[dict[str, Any]] = []
    clock = SuccessClock()
    with emulator_process(time_scale) as base_url, TemporaryDirectory() as folder, \
            genlab.Client(base_url, API_KEY, history=MemoryJournal(), poll_scale=time_scale,
                          wait_timeout=300, keep=Path(folder) / "kept" if keep else False,
                          transport=clock) as client:
        client.map([{**BODY, "prompt": f"warm-up {i}"} for i in range(warmup)],
                   concurrency=warmup)
        lock = threading.Lock()
        prompts = iter(range(n_tasks))

        def worker() -> None:
            while True:
                with lock:
                    i = next(prompts, None)
                if i is None:
                    return
                row = measure(client, clock, Path(folder), f"a fox in the snow, take {i}",
                              time_scale)
                with lock:
                    samples.append(row)

        threads = [threading.Thread(target=worker) for _ in range(concurrency)]
        for t in threads:
            t.start()
        for t in threads:
            t.join()
        Background.shared().shutdown()
    return samples


def table(rows: list[dict[str, Any]]) -> str:
    lines = [f"  {'5 s 720P video-a, learned':<34}{'p50':>8}{'max':>8}", "  " + "-" * 50]
    for r in (r for r in rows if "part" in r):
        lines.append(f"  {r['part']:<34}{r['p50']:>7.2f}s{r['max']:>7.2f}s")
    for g in (r for r in rows if "name" in r):
        met = "yes" if g["met"] else "NO"
        lines.append(f"  {g['name']}: {g['value']:.2f} s (goal <= {g['goal']} s)  {met}")
    return "\n".join(lines)


def main() -> None:
    parser = argparse.ArgumentParser(description=(__doc__ or "").split("\n")[0])
    parser.add_argument("--tasks", type=int, default=8)
    parser.add_argument("--time-scale", type=float, default=1.0)
    args = parser.parse_args()
    print(table(run(args.tasks, time_scale=args.time_scale)))


if __name__ == "__main__":
    main()
