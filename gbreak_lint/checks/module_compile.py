"""GBL401: `torch.compile(module)` where `module.compile()` is the recommended form."""
from __future__ import annotations

from ..model.predict import Prediction
from ..registry import CHECKS
from .advice import advice, line_span
from .common import render


@CHECKS.register("GBL401")
def run(rule, prediction: Prediction):
    for entry in prediction.entries:
        if entry.how != "torch.compile(module)":
            continue
        name = entry.instance_name or entry.assigned_to or "model"
        message = render(rule.message, name=name)
        yield advice(rule, entry.path, entry.span or line_span(entry.line), message, entry=entry.function)
