"""GBL406: an `error_on_graph_break(False)` region in which no break is predicted."""
from __future__ import annotations

from ..model.predict import Prediction
from ..registry import CHECKS
from .advice import advice, line_span


@CHECKS.register("GBL406")
def run(rule, prediction: Prediction):
    for path, line in prediction.unused_relaxations:
        yield advice(rule, path, line_span(line), rule.message)
