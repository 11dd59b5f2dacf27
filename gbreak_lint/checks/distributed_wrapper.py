"""GBL402: torch.compile applied to a DDP/FSDP wrapper instead of the inner module."""
from __future__ import annotations

from ..diagnostics import short_name
from ..model.predict import Prediction
from ..registry import CHECKS
from .advice import advice
from .common import render


@CHECKS.register("GBL402")
def run(rule, prediction: Prediction):
    for wrapped in prediction.wrapped:
        yield advice(rule, wrapped.path, wrapped.span,
                     render(rule.message, wrapper=short_name(wrapped.wrapper)))
