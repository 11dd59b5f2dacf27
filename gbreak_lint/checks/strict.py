"""GBL501: a break in a fullgraph / error_on_graph_break(True) region raises at compile time
(and so does a call Dynamo cannot compile at all, anywhere: an allow_in_graph function fake
tensors cannot run, a higher-order operator given arguments its handler refuses)."""
from __future__ import annotations

from ..model.predict import Prediction
from ..registry import CHECKS
from ..vocab import StrictReason
from .common import diagnostic, render

REGION = {StrictReason.FULLGRAPH: "fullgraph=True", StrictReason.ERROR_ON_GRAPH_BREAK: "error_on_graph_break(True)",
          StrictReason.HIGHER_ORDER_OP: "a higher-order op that must be captured whole (cond, map, while_loop, scan)",
          StrictReason.FAKE_TENSOR: "a call Dynamo cannot compile at all, with or without fullgraph (an op failing on fake"
                                    " tensors: an allow_in_graph function, a custom op, an elementwise op; a call its"
                                    " handler refuses)"}


@CHECKS.register("GBL501")
def run(rule, prediction: Prediction):
    seen = set()
    for failure in prediction.strict_failures:
        key = (failure.site.path, failure.site.span)
        if key in seen:
            continue
        seen.add(key)
        message = render(rule.message, region=REGION.get(failure.reason, failure.reason))
        yield diagnostic(rule, failure.site, message, times=failure.site.times_traced,
                         gb_code=failure.site.gb_code)
