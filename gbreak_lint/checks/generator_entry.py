"""GBL322: torch.compile applied to a generator function, which Dynamo never compiles."""
from __future__ import annotations

from ..diagnostics import Diagnostic, FrameRef, Span, short_name
from ..model.predict import Prediction
from ..registry import CHECKS
from .common import fix_of, render


@CHECKS.register("GBL322")
def run(rule, prediction: Prediction):
    for gen in prediction.generator_entries:
        yield Diagnostic(
            code=rule.code, name=rule.name, severity=rule.severity, kind=rule.kind, path=gen.path,
            span=Span(gen.def_line, 1, gen.def_line, 1),
            message=render(rule.message, function=short_name(gen.qualname)),
            function=gen.qualname, entry=gen.qualname,
            frame=FrameRef(gen.path, gen.name, gen.def_line), suggestion=rule.suggestion,
            fix=fix_of(rule),
        )
