"""GBL405: `torch._dynamo.config.suppress_errors = True` hides compiler crashes."""
from __future__ import annotations

from ..model.predict import Prediction
from ..registry import CHECKS
from .advice import advice, line_span


@CHECKS.register("GBL405")
def run(rule, prediction: Prediction):
    for cfg in prediction.configs:
        if cfg.flag == "suppress_errors" and cfg.value:
            yield advice(rule, cfg.path, line_span(cfg.line), rule.message)
