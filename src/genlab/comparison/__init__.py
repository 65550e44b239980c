"""Side-by-side runs: prompts × models × swept parameters × repeats, with the cost shown first.

``genlab.compare`` validates every run with the catalog before anything is sent, prints what
the grid will cost, refuses to start past ``max_credits``, then runs the valid part with
bounded concurrency behind a progress bar. The result is a :class:`Comparison`: a DataFrame
with one row per run, a per-model summary, a gallery with the media embedded, charts and a
one-file HTML report.

(The package is ``genlab.comparison``, not ``genlab.compare``: a submodule of that name would
replace the ``genlab.compare`` function on the package as soon as it was imported.)

Example:
    import genlab
    client = genlab.connect()                 # the emulator unless the service is configured
    cmp = genlab.compare(
        client,
        prompts=["a red kite over the sea"],
        models=["video-a", "video-b"],
        params={"duration": [4, 8], "resolution": "720P"},   # a list is swept
        max_credits=5_000,
        tag="kites-1",                        # and in the history: history.df(tag="kites-1")
    )
    cmp.summary()
    cmp.gallery()
    cmp.to_html("kites.html")

Check the cost of a grid without sending anything::

    genlab.comparison.plan(["a red kite"], ["video-a"], {"duration": [4, 8]}).money_line
"""

from __future__ import annotations

from genlab._errors import CreditLimitError
from genlab.comparison._compare import compare
from genlab.comparison._plan import Plan, Run, plan
from genlab.comparison._result import Comparison

__all__ = ["Comparison", "CreditLimitError", "Plan", "Run", "compare", "plan"]
