"""GBL201: a break below the compiled frame is traced once per frame of its call chain."""
from __future__ import annotations

from dataclasses import replace

from ..model.predict import Prediction
from ..registry import CHECKS
from ..vocab import HARD_ERROR
from .common import chain_text, diagnostic, render


@CHECKS.register("GBL201", uses_thresholds=True)
def run(rule, prediction: Prediction, thresholds):
    ops = {s.qualname: s.ops for s in prediction.function_stats}
    entries = {e.function for e in prediction.entries}
    for site in prediction.sites:
        frames = len({link.function for link in site.chain})
        if frames < 2 or site.times_traced < 2 or HARD_ERROR in site.outcomes:
            continue
        message = render(rule.message, times=site.times_traced, chain=chain_text(site), frames=frames)
        found = diagnostic(rule, site, message, times=site.times_traced, gb_code=site.gb_code)
        # torch.compiler.disable only pays off on a helper with little tensor work of its own
        if site.function in entries or ops.get(site.function, 0) > thresholds.disable_max_ops:
            found = replace(found, fix=None)
        yield found
