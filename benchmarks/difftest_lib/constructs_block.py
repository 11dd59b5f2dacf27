"""Block constructs: with/try/loops/branches wrap the inner body in place; generators and
comprehensions run it in a frame of their own (via a helper function)."""
from __future__ import annotations

from .constructs_call import construct, wrap
from .frag import block, fn_def, ind

WITH_KINDS = {
    "with_no_grad": ("torch.no_grad()", set()),
    "with_enable_grad": ("torch.enable_grad()", set()),
    "with_autocast": ('torch.autocast("cpu", enabled=False)', set()),
    "with_device": ('torch.device("cpu")', set()),
    "with_catch_warnings": ("warnings.catch_warnings()", {"warnings"}),
    "with_profiler": ('torch.autograd.profiler.record_function("blk")', set()),
    "with_nullcontext": ("contextlib.nullcontext()", {"contextlib"}),
}


def _with_kind(name: str):
    head, needs = WITH_KINDS[name]

    def build(inner, rng, names):
        return wrap(inner, [], block(f"with {head}:", inner.body), needs), ""
    construct(name)(build)


for _name in WITH_KINDS:
    _with_kind(_name)


@construct("contextmanager")
def contextmanager(inner, rng, names):
    cm = names("cm")
    where = rng.choice(["in_with_body", "in_generator"])
    if where == "in_with_body":
        d = ["@contextlib.contextmanager", f"def {cm}():", "    yield"]
        return wrap(inner, [d], block(f"with {cm}():", inner.body), {"contextlib"}), where
    d = ["@contextlib.contextmanager", f"def {cm}(x):"] + ind(inner.body + ["yield x"])
    return wrap(inner, [d], block(f"with {cm}(x) as y:", ["x = y"]), {"contextlib"}), where


@construct("user_cm_class")
def user_cm_class(inner, rng, names):
    c = names("CM")
    where = rng.choice(["in_with_body", "in_enter"])
    enter_body = ["x = self.x"] + inner.body + ["self.x = x"] if where == "in_enter" else []
    cls = ([f"class {c}:", "    def __init__(self, x):", "        self.x = x", "",
            "    def __enter__(self):"] + ind(enter_body + ["return self"], 2)
           + ["", "    def __exit__(self, *exc):", "        return False"])
    if where == "in_enter":
        return wrap(inner, [cls], block(f"with {c}(x) as cm:", ["x = cm.x"])), where
    return wrap(inner, [cls], block(f"with {c}(x):", inner.body)), where


GEN_CONSUMERS = {
    "for": lambda g: block(f"for y in {g}(x):", ["x = y"]),
    "list": lambda g: [f"x = list({g}(x))[0]"],
    "zip": lambda g: block(f"for y, _ in zip({g}(x), [0]):", ["x = y"]),
}


@construct("generator")
def generator(inner, rng, names):
    g = names("gen")
    how = rng.choice(sorted(GEN_CONSUMERS))
    d = [f"def {g}(x):"] + ind(inner.body + ["yield x"])
    return wrap(inner, [d], GEN_CONSUMERS[how](g)), how


COMPREHENSIONS = {
    "comp_list": "ys = [{f}(x) for _ in range(2)]\nx = ys[0]",
    "comp_set": "ys = {{{f}(x).shape[0] + i for i in range(2)}}\nx = x + len(ys)",
    "comp_dict": "ys = {{i: {f}(x) for i in range(2)}}\nx = ys[0]",
    "comp_genexp": "x = sum({f}(x) for _ in range(2))",
}


def _comprehension(name: str):
    def build(inner, rng, names):
        f = names("f")
        return wrap(inner, [fn_def(f, "x", inner.body)], COMPREHENSIONS[name].format(f=f).split("\n")), ""
    construct(name)(build)


for _name in COMPREHENSIONS:
    _comprehension(_name)


@construct("try_body")
def try_body(inner, rng, names):
    handler = rng.choice(["except", "finally"])
    tail = ["except ValueError:", "    x = x - 1"] if handler == "except" else ["finally:", "    pass"]
    return wrap(inner, [], block("try:", inner.body) + tail), handler


@construct("try_handler")
def try_handler(inner, rng, names):
    return wrap(inner, [], block("try:", ['raise ValueError("boom")']) + block("except ValueError:", inner.body)), ""


@construct("try_finally")
def try_finally(inner, rng, names):
    return wrap(inner, [], block("try:", ["x = x + 1"]) + block("finally:", inner.body)), ""


@construct("callee_raises")
def callee_raises(inner, rng, names):
    f = names("raiser")
    d = [f"def {f}(x):"] + ind(inner.body + ['raise ValueError("boom")'])
    return wrap(inner, [d], block("try:", [f"x = {f}(x)"]) + block("except ValueError:", ["x = x + 1"])), ""
