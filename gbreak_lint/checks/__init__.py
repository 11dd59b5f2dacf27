"""Structural checks: each reads the model's prediction and yields diagnostics for the rules it
registered for (`@CHECKS.register("GBL101")`, see gbreak_lint/registry.py)."""
from __future__ import annotations

from dataclasses import dataclass

from ..catalog import Catalog
from ..diagnostics import Diagnostic
from ..model.predict import Prediction
from ..registry import CHECKS
from .sites import site_diagnostics


@dataclass(frozen=True)
class Thresholds:
    """Configurable limits some checks use (from [tool.gbreak-lint])."""

    disable_min_breaks: int = 3
    disable_max_ops: int = 2


def run_checks(catalog: Catalog, prediction: Prediction,
               thresholds: Thresholds = Thresholds()) -> list[Diagnostic]:
    diagnostics = site_diagnostics(catalog, prediction)
    for rule in catalog.rules:
        if rule.check:
            check = CHECKS.get(rule.check)
            extra = (thresholds,) if check.uses_thresholds else ()
            diagnostics += list(check.fn(rule, prediction, *extra))
    return diagnostics
