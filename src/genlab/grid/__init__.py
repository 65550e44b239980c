"""One grid for comparisons and experiments: a grid of requests expanded by one sweep
grammar, each cell checked against its model and priced, the money line written once, the
cells run through the client's own batch runner with what belongs to each submission (its tag,
its experiment cell) travelling on it, and progress shown by :mod:`genlab.display`.

``genlab.compare`` is a grid of prompts x models x swept parameters x repeats;
``genlab.experiment`` adds prompt versions, variables and seeds. Both are users of this
package; it is where to change:

- the sweep grammar (a list sweeps, a scalar is fixed): :func:`sweep`, :func:`combinations`;
- the money line: :func:`money_line`, :func:`price_text` (the Studio's line uses it too);
- how cells run: :func:`run_cells`.

Example:
    >>> from genlab import grid
    >>> swept = grid.sweep({"duration": [4, 8]}, ["video-a"])
    >>> check = grid.Checker()
    >>> cells = [check({"model": "video-a", "prompt": "a kite", **p})
    ...          for p in swept.for_model("video-a")]
    >>> grid.money_line(len(cells), unit="run", sending=[c.credits for c in cells])
    '2 runs: 1,920 credits estimated'
"""

from __future__ import annotations

from genlab.grid._check import Checked, Checker
from genlab.grid._money import count, money_line, price_text
from genlab.grid._run import Ran, run_cells
from genlab.grid._sweep import Sweep, check_models, combinations, is_sweep, sweep

__all__ = [
    "Checked",
    "Checker",
    "Ran",
    "Sweep",
    "check_models",
    "combinations",
    "count",
    "is_sweep",
    "money_line",
    "price_text",
    "run_cells",
    "sweep",
]
