"""GBL101: the first break of a frame lies inside a loop -> Dynamo skips the frame."""
from __future__ import annotations

from ..diagnostics import FrameRef
from ..model.predict import Prediction
from ..registry import CHECKS
from ..vocab import BlockKind, Outcome
from .common import diagnostic, render, short


@CHECKS.register("GBL101")
def run(rule, prediction: Prediction):
    for frame in prediction.frames:
        if frame.reason != BlockKind.LOOP:
            continue
        ref = FrameRef(frame.path, frame.name, frame.def_line)
        if frame.outcome == Outcome.SKIPPED:
            message = render(rule.message, function=short(frame.qualname))
            kind = "frame-skipped"
        else:  # the frame was compiled up to an earlier break; its resume function is skipped
            message = (f"graph break inside a loop: the rest of `{short(frame.qualname)}` after its "
                       f"earlier graph break runs eagerly (its resume function is skipped)")
            kind = "advice"
        yield diagnostic(rule, frame.site, message, kind=kind, span=frame.break_span, path=frame.path,
                         function=frame.qualname, frame=ref, gb_code=rule.gb_code)
