"""Program text from a model's parameters (pure: no torch, no library import).

A parameter record (stored with each label, JSON) describes one model:

    {"lib": "transformers", "name": "BertForMaskedLM",
     "build": {"kind": "transformers", "config_class": "BertConfig", "config": {...},
               "model_class": "BertForMaskedLM"},
     "inputs": [["input_ids", "torch.randint(0, 100, (2, 16))"], ...],     # both modes
     "call": [["input_ids", "input_ids"], ...],    # [keyword or null (positional), variable]
     "train_inputs": [["labels", "..."]], "train_call": [["labels", "labels"]],
     "loss": "out.loss"}                           # an expression of `out` (and the inputs)

`render(params, mode)` writes the program a user would: build the model from a tiny config,
then (eval) `compiled = torch.compile(model)` called once under `torch.no_grad()`, or (train)
a `@torch.compile` training step that calls the model, computes the loss and calls
`loss.backward()`. `eager=True` leaves torch.compile out (the probe runs that text).
"""
from __future__ import annotations

import hashlib
import json
import re

MODES = ("eval", "train")
HEADER = '"""gbreak-lint model zoo: {lib} {version} {name}, {what}."""\n'


def _value(v) -> str:
    """Python source for a JSON value (dicts keep their keys as strings)."""
    if isinstance(v, dict):
        return "{" + ", ".join(f"{k!r}: {_value(x)}" for k, x in v.items()) + "}"
    if isinstance(v, list):
        return "[" + ", ".join(_value(x) for x in v) + "]"
    return repr(v)


def _kwargs_block(call: str, kwargs: dict, indent: str = "    ") -> str:
    if not kwargs:
        return f"{call}()"
    items = []
    for k, v in kwargs.items():
        if not re.fullmatch(r"[A-Za-z_][A-Za-z0-9_]*", k):
            raise ValueError(f"not a keyword: {k!r}")
        items.append(f"{indent}{k}={_value(v)},")
    return f"{call}(\n" + "\n".join(items) + "\n)"


def build_lines(params: dict) -> tuple[list[str], list[str]]:
    """(import lines, lines that leave the model in `model`)."""
    b = params["build"]
    kind = b["kind"]
    if kind == "transformers":
        names = sorted({b["config_class"], b["model_class"]})
        return ([f"from transformers import {', '.join(names)}"],
                ["config = " + _kwargs_block(b["config_class"], b["config"]),
                 f"model = {b['model_class']}(config)"])
    if kind == "timm":
        kwargs = {"pretrained": False, **b.get("kwargs", {})}
        body = ", ".join(f"{k}={_value(v)}" for k, v in kwargs.items())
        return ["import timm"], [f"model = timm.create_model({b['model_name']!r}, {body})"]
    if kind == "diffusers":
        return ([f"from diffusers import {b['model_class']}"],
                ["model = " + _kwargs_block(b["model_class"], b.get("kwargs", {}))])
    raise ValueError(f"unknown build kind {kind!r}")


def _call(call: list) -> str:
    return ", ".join(var if kw is None else f"{kw}={var}" for kw, var in call)


def render(params: dict, mode: str, version: str = "", eager: bool = False) -> str:
    if mode not in MODES:
        raise ValueError(f"mode must be one of {MODES}")
    imports, build = build_lines(params)
    what = "forward in eval mode" if mode == "eval" else "training step (loss.backward())"
    out = [HEADER.format(lib=params["lib"], version=version, name=params["name"], what=what).replace("  ", " "),
           "import torch", *imports, "", "torch.manual_seed(0)", *build,
           "model.eval()" if mode == "eval" else "model.train()", ""]
    inputs = list(params["inputs"]) + (list(params.get("train_inputs", [])) if mode == "train" else [])
    out += [f"{var} = {expr}" for var, expr in inputs]
    out.append("")
    if mode == "eval":
        out += ["compiled = model" if eager else "compiled = torch.compile(model)",
                "with torch.no_grad():",
                f"    out = compiled({_call(params['call'])})"]
    else:
        call = list(params["call"]) + list(params.get("train_call", []))
        args = ", ".join(var for var, _ in inputs)
        out += ([] if eager else ["", "@torch.compile"]) + [
            f"def train_step({args}):",
            f"    out = model({_call(call)})",
            f"    loss = {params['loss']}",
            "    loss.backward()",
            "    return loss",
            "", "",
            f"loss = train_step({args})"]
    return "\n".join(out) + "\n"


def slug(name: str) -> str:
    return re.sub(r"[^A-Za-z0-9_]+", "_", name).strip("_")


def program_id(params: dict, mode: str) -> str:
    """Stable id of one (model, mode): `<name>.<mode>` (the parameters are stored with it)."""
    return f"{slug(params['name'])}.{mode}"


def params_hash(params: dict) -> str:
    return hashlib.sha256(json.dumps(params, sort_keys=True).encode()).hexdigest()[:12]


def file_name(params: dict, mode: str) -> str:
    return f"{slug(params['name'])}_{mode}.py"
