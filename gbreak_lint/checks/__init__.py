"""Structural checks: each reads the model's prediction and yields diagnostics for one rule."""
from __future__ import annotations

from importlib import import_module

from ..catalog import Catalog, Rule
from ..diagnostics import Diagnostic
from ..model.predict import Prediction
from .sites import site_diagnostics


def run_checks(catalog: Catalog, prediction: Prediction) -> list[Diagnostic]:
    diagnostics = site_diagnostics(catalog, prediction)
    for rule in catalog.rules:
        if rule.check:
            diagnostics += list(_check(rule).run(rule, prediction))
    return diagnostics


def _check(rule: Rule):
    try:
        return import_module(f"{__name__}.{rule.check}")
    except ImportError as err:
        raise ValueError(f"{rule.source}: unknown check '{rule.check}'") from err
