"""GBL401: `torch.compile(module)` where `module.compile()` is the recommended form."""
from __future__ import annotations

from ..model.predict import Prediction
from ..registry import CHECKS
from .advice import advice, line_span
from .common import render


@CHECKS.register("GBL401")
def run(rule, prediction: Prediction):
    seen = set()
    for entry in prediction.entries:
        # one compile call may compile several modules (`for m in [A(), B()]: torch.compile(m)`)
        if entry.how != "torch.compile(module)" or (entry.path, entry.span, entry.line) in seen:
            continue
        seen.add((entry.path, entry.span, entry.line))
        name = entry.instance_name or "model"  # `opt = torch.compile(Net())`: not `opt`
        message = render(rule.message, name=name)
        yield advice(rule, entry.path, entry.span or line_span(entry.line), message, entry=entry.function)
