"""Assemble programs from constructs x causes x contexts, deterministically for a seed."""
from __future__ import annotations

import random
from dataclasses import dataclass

from . import constructs_block, constructs_flow, constructs_module  # noqa: F401 - register constructs
from .causes import CAUSES, expected_break, make_cause
from .constructs_call import REGISTRY
from .contexts import ENTRY_FORMS, PRE_OPS, WRAPPERS, entry_code, run_code, wrapper_code
from .frag import Names

IMPORTS = ["contextlib", "copy", "functools", "logging", "random", "time", "warnings"]
MAX_LINES = 60
DEPTHS = [1, 1, 2, 2, 3, 4]  # depth 1-4, shallow chains a little more often
DEPLOY_ARGS = ['backend="eager"', "dynamic=False", 'mode="default"']


@dataclass(frozen=True)
class Program:
    pid: str
    text: str
    meta: dict


def program_id(seed: int, index: int) -> str:
    return f"s{seed}-{index:05d}"


def cycles(seed: int) -> tuple[list[str], list[str]]:
    """Shuffled construct and cause orders: program i takes element i mod len, so a batch of
    at least len programs exercises every construct and every cause."""
    rng = random.Random(f"difftest-cycles:{seed}")
    constructs, causes = sorted(REGISTRY), sorted(CAUSES)
    rng.shuffle(constructs)
    rng.shuffle(causes)
    return constructs, causes


def generate(seed: int, index: int) -> Program:
    constructs, causes = cycles(seed)
    rng = random.Random(f"difftest:{seed}:{index}")
    for attempt in range(20):  # resample (shallower) until the program is small enough
        chain = [constructs[index % len(constructs)]]
        depth = rng.choice(DEPTHS) if attempt < 10 else 1
        chain += [rng.choice(sorted(REGISTRY)) for _ in range(depth - 1)]
        prog = build(seed, index, rng, chain, causes[index % len(causes)])
        if prog.text.count("\n") <= MAX_LINES:
            return prog
    return prog


def build(seed: int, index: int, rng: random.Random, chain: list[str], cause: str) -> Program:
    names = Names()
    frag = make_cause(cause, names)
    tags = []
    for name in chain:  # innermost first
        frag, variant = REGISTRY[name](frag, rng, names)
        tags.append({"construct": name, "variant": variant})
    ctx = choose_context(rng)
    text = render(frag, ctx, rng)
    meta = {"id": program_id(seed, index), "seed": seed, "index": index, "cause": cause,
            "constructs": tags, "context": ctx,
            "generator_expects_break": expected_break(cause),  # informative only, never scored
            "lines": text.count("\n")}
    return Program(program_id(seed, index), text, meta)


def choose_context(rng: random.Random) -> dict:
    form = rng.choice(ENTRY_FORMS)
    wrapper = "none" if rng.random() < 0.6 else rng.choice(WRAPPERS[1:])
    return {"entry": form, "entry_args": rng.choice(DEPLOY_ARGS) if form == "deco_args" else "",
            "wrapper": wrapper, "nested_graph_breaks": rng.random() < 0.3,
            "placement": rng.choice(["module_level", "in_main"])}


def render(frag, ctx: dict, rng: random.Random) -> str:
    helpers, stmts, needs = wrapper_code(ctx["wrapper"], frag.body)
    pre = [rng.choice(PRE_OPS) for _ in range(rng.choice([0, 1, 2, 3]))]
    body = pre + stmts + ([rng.choice(PRE_OPS)] if rng.random() < 0.5 else [])
    needs = needs | frag.needs | ({"logging"} if "logger" in frag.needs else set())
    head = ["import torch", "import torch.nn as nn"] + [f"import {m}" for m in IMPORTS if m in needs]
    if ctx["nested_graph_breaks"]:
        head.append("torch._dynamo.config.nested_graph_breaks = True")
    if "logger" in needs:
        head.append("logger = logging.getLogger(__name__)")
    head.append("torch.manual_seed(0)")
    blocks = [head] + [d.split("\n") for d in frag.defs] + helpers
    blocks += [entry_code(ctx["entry"], ctx["entry_args"], body), run_code(ctx["entry"], ctx["placement"])]
    return "\n\n\n".join("\n".join(b) for b in blocks) + "\n"


def all_construct_names() -> list[str]:
    return sorted(REGISTRY)


def all_cause_names() -> list[str]:
    return sorted(CAUSES)
