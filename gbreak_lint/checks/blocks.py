"""GBL102-113: unresumable breaks (try, with, skip_frame, generators, attribute access, a new
object's method, an exception leaving the frame, a comprehension or a module constructor
compiled alone, an instruction Dynamo cannot resume after, an operator's method, an output
that cannot be rebuilt) -> skip or partial."""
from __future__ import annotations

from ..diagnostics import FrameRef
from ..model.predict import Frame, Prediction
from ..registry import CHECKS
from ..vocab import BlockKind, Outcome
from .common import diagnostic, render, short

RULE_FOR_REASON = {BlockKind.TRY: "GBL102", BlockKind.WITH: "GBL103", BlockKind.CONTEXT_MANAGER: "GBL103",
                   BlockKind.SKIP_FRAME: "GBL104", BlockKind.GENERATOR: "GBL105", BlockKind.ATTRIBUTE: "GBL106",
                   BlockKind.NEW_OBJECT: "GBL107", BlockKind.EXCEPTION: "GBL108", BlockKind.ITERATOR: "GBL109",
                   BlockKind.UNINITIALIZED: "GBL110", BlockKind.INSTRUCTION: "GBL111",
                   BlockKind.OPERATOR: "GBL112", BlockKind.OUTPUT: "GBL113"}


@CHECKS.register("GBL102", "GBL103", "GBL104", "GBL105", "GBL106", "GBL107", "GBL108", "GBL109", "GBL110", "GBL111",
                 "GBL112", "GBL113")
def run(rule, prediction: Prediction):
    for frame in prediction.frames:
        if RULE_FOR_REASON.get(frame.reason) != rule.code:
            continue
        yield diagnostic(rule, frame.site, _message(rule.message, frame), kind=_kind(frame),
                         span=frame.break_span, path=frame.path, function=frame.qualname,
                         frame=FrameRef(frame.path, frame.name, frame.def_line), gb_code=_gb_code(rule, frame))


def _gb_code(rule, frame: Frame) -> str | None:
    """The code of the break that stopped the frame, when the rule lists it (GBL111 covers
    several instructions)."""
    return frame.site.gb_code if frame.site.gb_code in rule.gb_codes else rule.gb_code


def _kind(frame: Frame) -> str:
    if frame.outcome in (Outcome.RESUME_SKIPPED, Outcome.RESUME_PARTIAL):
        return "advice"  # the original frame was compiled; only a resume function is affected
    return "frame-partial" if frame.outcome == Outcome.PARTIAL else "frame-skipped"


def _message(template: str, frame: Frame) -> str:
    name = short(frame.qualname)
    if frame.outcome in (Outcome.PARTIAL, Outcome.RESUME_PARTIAL):
        where = f"before line {frame.block_line}" if frame.block_line else "before it"
        outcome = (f"Dynamo compiles `{name}` up to the checkpoint {where} "
                   f"({frame.ops_before} ops) and runs the rest eagerly")
    elif frame.outcome == Outcome.RESUME_SKIPPED:  # `name` itself was compiled up to an earlier break
        outcome = f"Dynamo skips the function resuming `{name}` after an earlier break and runs the rest of `{name}` eagerly"
    else:
        outcome = f"Dynamo skips `{name}` and runs it eagerly ({frame.ops_before} op(s) before the block, 2 needed for a checkpoint)"
    label = frame.label or "..."
    return render(template, outcome=outcome, function=name, label=label, callee=short(frame.site.function))
