"""Prompt experiments: versioned prompts run as a matrix (versions x models x variables x
seeds), validated and priced before anything is sent, resumed from the history, scored and
compared against a baseline.

Example:
    import genlab
    client = genlab.connect()
    kite = genlab.prompt("A {subject} over {place} at dusk", name="kite")
    kite2 = kite.revise("A {subject} soaring over {place} at dusk, 35 mm")
    exp = genlab.experiment(client, "kite-study", prompts=[kite, kite2],
                            models=["image-b", "image-d"],
                            vars={"subject": ["paper kite", "dragon kite"], "place": "dunes"},
                            seeds=[1, 2], max_credits=20_000, scorers=["sharpness"])
    exp                       # the grid: a row per variable set, a column per version
    exp.df                    # a row per cell
    exp.compare("kite@1", "kite@2")
    exp.verdict("kite@1", "kite@2")          # better, worse or undecided, from people's votes

(The package is ``genlab.experiments``, not ``genlab.experiment``: a submodule of that name
would replace the ``genlab.experiment`` function on the package as soon as it was imported.)
"""

from __future__ import annotations

from genlab.experiments._experiment import FACT_COLUMNS, Experiment
from genlab.experiments._plan import Cell, plan_cells, seed_field, variable_sets
from genlab.experiments._prompt import Prompt, PromptDiff, default_history, fill, prompt, slots
from genlab.experiments._run import experiment, find_cells, money_line
from genlab.experiments._verdict import (
    Verdict,
    median_interval,
    resolve_version,
    verdict_in,
    verdict_of,
)

__all__ = [
    "FACT_COLUMNS",
    "Cell",
    "Experiment",
    "Prompt",
    "PromptDiff",
    "Verdict",
    "default_history",
    "experiment",
    "fill",
    "find_cells",
    "median_interval",
    "money_line",
    "plan_cells",
    "prompt",
    "resolve_version",
    "seed_field",
    "slots",
    "variable_sets",
    "verdict_in",
    "verdict_of",
]
