"""GBL201: a break below the compiled frame is traced once per frame of its call chain."""
from __future__ import annotations

from ..model.predict import Prediction
from .common import chain_text, diagnostic


def run(rule, prediction: Prediction):
    for site in prediction.sites:
        frames = len({link.function for link in site.chain})
        if frames < 2 or site.times_traced < 2 or "hard_error" in site.outcomes:
            continue
        message = (rule.message.replace("{times}", str(site.times_traced))
                   .replace("{chain}", chain_text(site)).replace("{frames}", str(frames)))
        yield diagnostic(rule, site, message, times=site.times_traced, gb_code=site.gb_code)
