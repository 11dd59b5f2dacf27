"""GBL404: a compiled function full of breaks and with little tensor work: disable it instead."""
from __future__ import annotations

from ..diagnostics import short_name
from ..model.predict import Prediction
from ..registry import CHECKS
from .advice import advice, line_span
from .common import render


@CHECKS.register("GBL404", uses_thresholds=True)
def run(rule, prediction: Prediction, thresholds):
    for stat in prediction.function_stats:
        if stat.is_entry or stat.breaks < thresholds.disable_min_breaks or stat.ops > thresholds.disable_max_ops:
            continue
        message = render(rule.message, function=short_name(stat.qualname), breaks=stat.breaks, ops=stat.ops)
        yield advice(rule, stat.path, line_span(stat.def_line), message, function=stat.qualname)
