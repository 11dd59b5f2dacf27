"""Structural checks: each reads the model's prediction and yields diagnostics for one rule."""
from __future__ import annotations

from dataclasses import dataclass
from importlib import import_module

from ..catalog import Catalog, Rule
from ..diagnostics import Diagnostic
from ..model.predict import Prediction
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
            module = _check(rule)
            if getattr(module, "USES_THRESHOLDS", False):
                diagnostics += list(module.run(rule, prediction, thresholds))
            else:
                diagnostics += list(module.run(rule, prediction))
    return diagnostics


def _check(rule: Rule):
    try:
        return import_module(f"{__name__}.{rule.check}")
    except ImportError as err:
        raise ValueError(f"{rule.source}: unknown check '{rule.check}'") from err
