"""Judges as a user runs them: asked about the pairs a person would rate, each answer a vote
by ``judge:NAME@VERSION`` in the history, no pair asked twice of one version, calls at most
``concurrency`` at once; frames of a kept result for judges that look; and the documented
vision-model judge (docs/judges.md) against a fake OpenAI-compatible endpoint on loopback."""

from __future__ import annotations

import base64
import io
import json
import re
import threading
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

import pytest

import genlab
from genlab import emulator
from genlab.emulator import samples
from genlab.experiments import Experiment, prompt
from genlab.history import History
from genlab.media import Result

KEY = "judge-test-key-0b7d"
ROOT = Path(__file__).resolve().parent.parent


@pytest.fixture(scope="module")
def server() -> Iterator[emulator.EmulatorHandle]:
    with emulator.start(api_key=KEY, time_scale=0.02) as handle:
        yield handle


@pytest.fixture
def history(tmp_path: Path) -> Iterator[History]:
    h = History(tmp_path / "history.sqlite")
    yield h
    h.close()


@pytest.fixture
def exp(server: emulator.EmulatorHandle, history: History, tmp_path: Path
        ) -> Iterator[Experiment]:
    with genlab.Client(server.base_url, KEY, history=history, poll_scale=0.02,
                       wait_timeout=120, keep=tmp_path / "media") as client:
        kite = prompt("A {subject} over {place} at dusk", name="kite", history=history)
        kite2 = kite.revise("A {subject} soaring over {place} at dusk, 35 mm")
        yield genlab.experiment(client, "judged", prompts=[kite, kite2], models=["image-d"],
                                vars={"subject": ["paper kite", "box kite"], "place": "dunes"},
                                params={"resolution": "512"}, seeds=[1, 2], quiet=True,
                                progress=False)


def test_a_judge_run_twice_asks_nothing_the_second_time(exp: Experiment,
                                                        history: History) -> None:
    asked: list[tuple[str, str]] = []
    lock = threading.Lock()

    def newer(left: Result, right: Result) -> str:
        with lock:
            asked.append((left.task_id, right.task_id))
        assert left.paths and right.paths  # the kept files, to look at
        return "left" if "soaring" in (left.prompt or "") else "right"

    first = genlab.judge(exp, newer, name="newer", version="1", seed=3)
    assert (first.pairs, first.asked, first.recorded, first.judged_before) == (4, 4, 4, 0)
    assert len(set(asked)) == 4
    votes = history.ratings()
    assert set(votes["rater"]) == {"judge:newer@1"} and set(votes["tag"]) == {"judged"}
    cells = exp.df.set_index("task_id")
    for _, vote in votes.iterrows():  # each vote is for the version 2 side, wherever shown
        winner = vote["left_task"] if vote["answer"] == "left" else vote["right_task"]
        assert int(cells.loc[winner, "prompt_version"]) == 2

    again = genlab.judge(exp, newer, name="newer", version="1")
    assert (again.asked, again.recorded, again.judged_before) == (0, 0, 4)
    assert len(asked) == 4 and len(history.ratings()) == 4
    assert "0 call(s) for 4 pair(s)" in str(again)

    # A new version of the judge asks everything afresh; its votes are its own.
    newer_v2 = genlab.judge(exp, newer, name="newer", version="2", max_calls=3)
    assert (newer_v2.asked, newer_v2.left) == (3, 1)
    rest = genlab.judge(exp, newer, name="newer", version="2")
    assert (rest.asked, rest.judged_before) == (1, 3)
    assert history.ratings()["rater"].value_counts().to_dict() == {
        "judge:newer@1": 4, "judge:newer@2": 4}

    # People's verdict stays people's: the judges' votes count only when asked for.
    people = exp.verdict("kite@1", "kite@2")
    assert (people.outcome, people.n) == ("undecided", 0)
    judges = exp.verdict("kite@1", "kite@2", raters=["judge:newer@1"])
    assert (judges.n, judges.counts["candidate"]) == (4, 4)


def test_calls_run_on_worker_threads_at_most_concurrency_at_once(exp: Experiment) -> None:
    lock = threading.Lock()
    running, most, threads = 0, 0, set()
    all_in = threading.Barrier(2, timeout=60)  # two calls in flight together, then go on

    def slow(left: Result, right: Result) -> str:
        nonlocal running, most
        with lock:
            running += 1
            most = max(most, running)
            threads.add(threading.current_thread().name)
        try:
            all_in.wait()
        except threading.BrokenBarrierError:
            pass
        with lock:
            running -= 1
        return "tie"

    run = genlab.judge(exp, slow, name="slow", concurrency=2)
    assert run.recorded == 4 and most == 2
    assert threading.current_thread().name not in threads


def test_an_async_judge_and_a_failing_one(exp: Experiment, history: History) -> None:
    async def even(left: Result, right: Result) -> str:
        return "both bad"

    run = genlab.judge(exp, even, name="even", concurrency=3)
    assert run.recorded == 4 and run.answers["both bad"] == 4

    class Caller:  # an object whose __call__ is async
        async def __call__(self, left: Result, right: Result) -> str:
            return "Tie"

    called = genlab.judge(exp, Caller(), name="caller")
    assert called.recorded == 4 and called.answers["tie"] == 4

    def moody(left: Result, right: Result) -> str:
        if left.task_id < right.task_id:
            raise RuntimeError("the model is overloaded")
        return "maybe"

    failed = genlab.judge(exp, moody, name="moody")
    assert (failed.asked, failed.recorded, len(failed.failed)) == (4, 0, 4)
    whys = {why for _, _, why in failed.failed}
    assert whys <= {"RuntimeError: the model is overloaded",
                    "answered 'maybe', not one of ['left', 'right', 'tie', 'both bad']"}
    assert "judge:moody@1" not in set(history.ratings()["rater"])
    assert genlab.judge(exp, lambda a, b: "tie", name="moody").recorded == 4  # asked again
    with pytest.raises(ValueError, match="without '@'"):
        genlab.judge(exp, even, name="a@b")


def test_frames_are_evenly_spaced_pictures_and_an_image_gives_itself(tmp_path: Path) -> None:
    clip = tmp_path / "t1.mp4"
    clip.write_bytes(samples.video(64, 48, 2.0, fps=10))
    still = tmp_path / "t2.png"
    still.write_bytes(samples.image(40, 30, "still"))
    video = Result(task_id="t1", status="succeeded", kept=(str(clip),))
    shots = video.frames(5)
    assert [s.size for s in shots] == [(64, 48)] * 5
    assert len({s.tobytes() for s in shots}) > 1  # the clip moves: not one frame five times
    assert [s.size for s in Result(task_id="t2", status="succeeded",
                                   kept=(str(still),)).frames(3)] == [(40, 30)]
    with pytest.raises(ValueError, match="nothing kept to look at"):
        Result(task_id="t3", status="succeeded").frames(2)


# --- the documented vision judge, against a fake endpoint ------------------------------------


class _FakeVision(BaseHTTPRequestHandler):
    """An OpenAI-compatible chat-completions endpoint that prefers the side whose frames are
    larger, and remembers what it was sent."""

    seen: list[dict[str, Any]] = []

    def do_POST(self) -> None:  # noqa: N802 - http.server's name
        body = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
        _FakeVision.seen.append({"path": self.path, "auth": self.headers.get("Authorization"),
                                 "body": body})
        images = [part["image_url"]["url"] for part in body["messages"][0]["content"]
                  if part["type"] == "image_url"]
        half = len(images) // 2
        word = "A" if sum(map(len, images[:half])) >= sum(map(len, images[half:])) else "B"
        answer = json.dumps({"choices": [{"message": {"role": "assistant",
                                                       "content": f"{word}."}}]}).encode()
        self.send_response(200)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(answer)))
        self.end_headers()
        self.wfile.write(answer)

    def log_message(self, format: str, *args: Any) -> None:
        pass


def _example_judge() -> dict[str, Any]:
    """The example of docs/judges.md, run as a reader would paste it."""
    text = (ROOT / "docs" / "judges.md").read_text()
    blocks = re.findall(r"^```python\n(.*?)^```", text, re.S | re.M)
    assert len(blocks) == 1
    namespace: dict[str, Any] = {}
    exec(compile(blocks[0], "docs/judges.md", "exec"), namespace)  # noqa: S102
    return namespace


def test_the_documented_vision_judge_sends_frames_and_its_answers_become_votes(
    exp: Experiment, history: History, capsys: pytest.CaptureFixture[str]
) -> None:
    from PIL import Image

    fake = ThreadingHTTPServer(("127.0.0.1", 0), _FakeVision)
    thread = threading.Thread(target=fake.serve_forever, daemon=True)
    thread.start()
    _FakeVision.seen = []
    secret = "sk-vision-4c2a-never-printed"
    try:
        looks = _example_judge()["vision_judge"](
            f"http://127.0.0.1:{fake.server_address[1]}/v1", secret, "fake-vision", frames=2)
        run = genlab.judge(exp, looks, name="looks", version="1", concurrency=2)
        looks.close()
    finally:
        fake.shutdown()
        fake.server_close()
    assert (run.asked, run.recorded, run.failed) == (4, 4, [])
    assert len(_FakeVision.seen) == 4
    for sent in _FakeVision.seen:
        assert sent["path"] == "/v1/chat/completions"
        assert sent["auth"] == f"Bearer {secret}"
        body = sent["body"]
        assert body["model"] == "fake-vision"
        assert secret not in json.dumps(body)
        parts = body["messages"][0]["content"]
        assert parts[0]["type"] == "text"
        images = [p["image_url"]["url"] for p in parts[1:]]
        assert len(images) == 2  # an image result gives itself: one picture a side
        for uri in images:
            assert uri.startswith("data:image/jpeg;base64,")
            picture = Image.open(io.BytesIO(base64.b64decode(uri.split(",", 1)[1])))
            assert picture.format == "JPEG" and picture.size[0] > 0
    votes = history.ratings()
    assert set(votes["rater"]) == {"judge:looks@1"} and len(votes) == 4
    assert set(votes["answer"]) <= {"left", "right"}
    shown = capsys.readouterr()
    assert secret not in shown.out + shown.err + str(run)
    assert secret not in votes.to_string()
    # Asked again: nothing is sent.
    assert genlab.judge(exp, looks, name="looks", version="1").asked == 0
