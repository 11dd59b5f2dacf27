"""GBL403: a compiled function that holds the training loop, data loading or file I/O."""
from __future__ import annotations

from ..diagnostics import short_name
from ..model.predict import Prediction
from ..registry import CHECKS
from .advice import advice
from .common import render

WHAT = {"training-loop": "runs the training/eval loop ({detail} inside it)",
        "data-loading": "iterates a data loader ({detail})",
        "file-io": "does file I/O ({detail})"}


@CHECKS.register("GBL403")
def run(rule, prediction: Prediction):
    for issue in prediction.placement:
        what = WHAT[issue.what].format(detail=issue.detail)
        message = render(rule.message, function=short_name(issue.entry), what=what)
        yield advice(rule, issue.path, issue.span, message, function=issue.entry, entry=issue.entry)
