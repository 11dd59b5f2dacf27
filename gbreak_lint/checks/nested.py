"""GBL201: a break below the compiled frame is traced once per frame of its call chain."""
from __future__ import annotations

from dataclasses import replace

from ..model.predict import Prediction
from ..registry import CHECKS
from .common import chain_text, diagnostic


@CHECKS.register("GBL201", uses_thresholds=True)
def run(rule, prediction: Prediction, thresholds):
    ops = {s.qualname: s.ops for s in prediction.function_stats}
    entries = {e.function for e in prediction.entries}
    for site in prediction.sites:
        frames = len({link.function for link in site.chain})
        if frames < 2 or site.times_traced < 2 or "hard_error" in site.outcomes:
            continue
        message = (rule.message.replace("{times}", str(site.times_traced))
                   .replace("{chain}", chain_text(site)).replace("{frames}", str(frames)))
        found = diagnostic(rule, site, message, times=site.times_traced, gb_code=site.gb_code)
        # torch.compiler.disable only pays off on a helper with little tensor work of its own
        if site.function in entries or ops.get(site.function, 0) > thresholds.disable_max_ops:
            found = replace(found, fix=None)
        yield found
