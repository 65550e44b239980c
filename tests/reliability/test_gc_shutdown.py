"""A Client nobody closed is collected at an awkward moment: the process must not hang.

Found by the secrets session: an unclosed ``genlab.Client`` was garbage-collected while the
main thread was importing pandas (``genlab.compare`` is imported lazily). Its finalizer
waited for the client's runner thread to close the pool, and the runner thread needed the
import lock the main thread held: a deadlock, the session hung until it was killed.

Each scenario runs in a subprocess with a bounded wait, so a deadlock fails the test instead
of hanging the suite.
"""

from __future__ import annotations

import subprocess
import sys
import textwrap

import pytest

from ._support import closed_port

COLLECTED_WHILE_IMPORTING = textwrap.dedent(
    """
    import gc, importlib.abc, sys
    import genlab

    client = genlab.Client("http://127.0.0.1:{port}", "k")
    client.history  # the runner thread is up

    class CollectWhileImporting(importlib.abc.MetaPathFinder):
        # Meta path finders run with the import lock held, as during any import.
        def find_spec(self, name, path, target=None):
            global client
            if name == "genlab_trigger" and client is not None:
                client = None
                gc.collect()
            return None

    sys.meta_path.insert(0, CollectWhileImporting())
    try:
        import genlab_trigger  # noqa: F401
    except ImportError:
        pass
    print("not deadlocked", flush=True)
    """
)

ABANDONED_WITH_WORK = textwrap.dedent(
    """
    import gc, genlab
    client = genlab.Client("http://127.0.0.1:{port}", "k", max_retries=50,
                           retry_wait_initial=0.05, retry_wait_max=0.05)
    future = client.generate_future(model="image-d", prompt="x", resolution="512")
    client = None
    gc.collect()
    try:
        future.result(timeout=20)
    except BaseException as exc:  # cancelled, or a connection error: either way, it ended
        print("ended:", type(exc).__name__, flush=True)
    print("exited cleanly", flush=True)
    """
)


@pytest.mark.parametrize(
    ("script", "expected"),
    [(COLLECTED_WHILE_IMPORTING, "not deadlocked"), (ABANDONED_WITH_WORK, "exited cleanly")],
    ids=["collected-while-importing", "abandoned-with-work-in-flight"],
)
def test_an_unclosed_client_is_collected_without_hanging(script: str, expected: str) -> None:
    code = script.replace("{port}", str(closed_port()))
    process = subprocess.Popen([sys.executable, "-c", code], stdout=subprocess.PIPE,
                               stderr=subprocess.STDOUT, text=True)
    try:
        output, _ = process.communicate(timeout=30)
    except subprocess.TimeoutExpired:
        process.kill()
        output, _ = process.communicate(timeout=10)
        pytest.fail(f"the process hung (deadlock); its output:\n{output}")
    assert process.returncode == 0 and expected in output, output
