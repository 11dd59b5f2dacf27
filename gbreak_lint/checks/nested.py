"""GBL201: a break below the compiled frame is traced once per frame of its call chain."""
from __future__ import annotations

from dataclasses import replace

from ..model.causes import COMPILE_WRAPPER_LABEL
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
        if frames < 2 or site.times_traced < 2 or HARD_ERROR in site.outcomes or _through_compile_wrapper(site):
            continue
        message = render(rule.message, times=site.times_traced, chain=chain_text(site), frames=frames)
        found = diagnostic(rule, site, message, times=site.times_traced, gb_code=site.gb_code)
        # torch.compiler.disable only pays off on a helper with little tensor work of its own
        if site.function in entries or ops.get(site.function, 0) > thresholds.disable_max_ops:
            found = replace(found, fix=None)
        yield found


def _through_compile_wrapper(site) -> bool:
    """A chain through a torch.compile'd function's wrapper: the break is traced once per
    compile whatever nested_graph_breaks says, so this advice does not apply."""
    return any(f".<{COMPILE_WRAPPER_LABEL}@" in link.function for link in site.chain)
