"""One `graph-break` diagnostic per predicted break site, under its cause rule."""
from __future__ import annotations

from ..catalog import Catalog
from ..diagnostics import Diagnostic
from ..model.predict import Prediction, Site
from .common import diagnostic, render


def site_diagnostics(catalog: Catalog, prediction: Prediction) -> list[Diagnostic]:
    out = []
    for site in prediction.sites:
        rule = catalog.get(site.rule)
        if rule is None:
            continue
        out.append(diagnostic(rule, site, _message(rule.message, site), kind="graph-break",
                              times=site.times_traced, gb_code=site.gb_code))
    return out


def _message(template: str, site: Site) -> str:
    method = site.detail.rsplit(".", 1)[-1] if site.detail else "call"
    text = render(template, callee=method)
    if site.times_traced > 1:
        text += f" (traced {site.times_traced} times)"
    return text
