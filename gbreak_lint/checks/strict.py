"""GBL501: a break in a fullgraph / error_on_graph_break(True) region raises at compile time."""
from __future__ import annotations

from ..model.predict import Prediction
from ..registry import CHECKS
from .common import diagnostic

REGION = {"fullgraph": "fullgraph=True", "error_on_graph_break": "error_on_graph_break(True)",
          "higher_order_op": "a higher-order op (torch.cond) that must be captured whole"}


@CHECKS.register("GBL501")
def run(rule, prediction: Prediction):
    seen = set()
    for failure in prediction.strict_failures:
        key = (failure.site.path, failure.site.span)
        if key in seen:
            continue
        seen.add(key)
        message = rule.message.replace("{region}", REGION.get(failure.reason, failure.reason))
        yield diagnostic(rule, failure.site, message, times=failure.site.times_traced,
                         gb_code=failure.site.gb_code)
