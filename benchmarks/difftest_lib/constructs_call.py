"""Constructs that turn the inner body into something callable and call it.

Each takes (inner Frag, rng, names) and returns (new Frag, variant).  Module instances are
built at module level (after torch.manual_seed) so the compiled code only calls them.
"""
from __future__ import annotations

from .frag import Frag, block, fn_def, ind

REGISTRY: dict = {}


def construct(name):
    def reg(fn):
        REGISTRY[name] = fn
        return fn
    return reg


def wrap(inner: Frag, defs: list[list[str]], body: list[str], needs=()) -> Frag:
    return Frag(defs=inner.defs + ["\n".join(d) for d in defs], body=body,
                needs=inner.needs | set(needs), tags=list(inner.tags))


def module_class(name: str, body: list[str], base: str = "nn.Module") -> list[str]:
    return [f"class {name}({base}):"] + ind(fn_def("forward", "self, x", body))


@construct("plain_function")
def plain_function(inner, rng, names):
    f = names("f")
    return wrap(inner, [fn_def(f, "x", inner.body)], [f"x = {f}(x)"]), ""


@construct("method")
def method(inner, rng, names):
    c, o = names("C"), names("obj")
    where = rng.choice(["module_level", "in_compiled"])
    cls = [f"class {c}:"] + ind(fn_def("run", "self, x", inner.body))
    if where == "module_level":
        return wrap(inner, [cls + ["", f"{o} = {c}()"]], [f"x = {o}.run(x)"]), where
    return wrap(inner, [cls], [f"x = {c}().run(x)"]), where


@construct("staticmethod")
def static_method(inner, rng, names):
    c = names("C")
    cls = [f"class {c}:"] + ind(fn_def("run", "x", inner.body, ("@staticmethod",)))
    return wrap(inner, [cls], [f"x = {c}.run(x)"]), ""


@construct("classmethod")
def class_method(inner, rng, names):
    c = names("C")
    cls = [f"class {c}:", "    scale = 1"] + ind(fn_def("run", "cls, x", inner.body + ["x = x * cls.scale"],
                                                          ("@classmethod",)))
    return wrap(inner, [cls], [f"x = {c}.run(x)"]), ""


@construct("property")
def prop(inner, rng, names):
    c = names("C")
    cls = [f"class {c}:", "    def __init__(self, x):", "        self.x = x", "",
           "    @property", "    def value(self):", "        x = self.x"] + ind(inner.body + ["return x"], 2)
    return wrap(inner, [cls], [f"x = {c}(x).value"]), ""


@construct("user_init")
def user_init(inner, rng, names):
    c = names("C")
    cls = [f"class {c}:", "    def __init__(self, x):"] + ind(inner.body + ["self.x = x"], 2)
    return wrap(inner, [cls], [f"x = {c}(x).x"]), ""


@construct("dunder_call")
def dunder_call(inner, rng, names):
    c, o = names("C"), names("obj")
    cls = [f"class {c}:"] + ind(fn_def("__call__", "self, x", inner.body))
    return wrap(inner, [cls + ["", f"{o} = {c}()"]], [f"x = {o}(x)"]), ""


@construct("closure_factory")
def closure_factory(inner, rng, names):
    mk, fn = names("make"), names("fn")
    where = rng.choice(["module_level", "in_compiled"])
    factory = [f"def {mk}(k):"] + ind(fn_def("inner", "x", inner.body + ["x = x * k"]) + ["return inner"])
    if where == "module_level":
        return wrap(inner, [factory + ["", f"{fn} = {mk}(1)"]], [f"x = {fn}(x)"]), where
    return wrap(inner, [factory], [f"x = {mk}(1)(x)"]), where


@construct("nested_def")
def nested_def(inner, rng, names):
    f = names("inner")
    return wrap(inner, [], fn_def(f, "x", inner.body) + [f"x = {f}(x)"]), ""


@construct("lambda")
def lam(inner, rng, names):
    f, lm = names("f"), names("lam")
    return wrap(inner, [fn_def(f, "x", inner.body), [f"{lm} = lambda x: {f}(x) + 0"]], [f"x = {lm}(x)"]), ""


@construct("functools_partial")
def partial(inner, rng, names):
    f, p = names("f"), names("part")
    return wrap(inner, [fn_def(f, "x, scale", inner.body + ["x = x * scale"]),
                        [f"{p} = functools.partial({f}, scale=1.0)"]], [f"x = {p}(x)"], {"functools"}), ""


def _wraps_deco(name: str) -> list[str]:
    return [f"def {name}(fn):", "    @functools.wraps(fn)", "    def wrapper(*args, **kwargs):",
            "        return fn(*args, **kwargs)", "", "    return wrapper"]


@construct("wraps_decorator")
def wraps_decorator(inner, rng, names):
    d, f = names("deco"), names("f")
    return wrap(inner, [_wraps_deco(d), fn_def(f, "x", inner.body, (f"@{d}",))], [f"x = {f}(x)"],
                {"functools"}), ""


@construct("stacked_decorators")
def stacked(inner, rng, names):
    d1, d2, f = names("deco"), names("deco"), names("f")
    return wrap(inner, [_wraps_deco(d1), _wraps_deco(d2), fn_def(f, "x", inner.body, (f"@{d1}", f"@{d2}"))],
                [f"x = {f}(x)"], {"functools"}), ""


@construct("class_decorator")
def class_decorator(inner, rng, names):
    d, c = names("register"), names("C")
    deco = [f"def {d}(cls):", "    cls.tag = 1", "    return cls"]
    cls = [f"@{d}", f"class {c}:"] + ind(fn_def("run", "self, x", inner.body))
    return wrap(inner, [deco, cls], [f"x = {c}().run(x)"]), ""


@construct("dict_registry")
def dict_registry(inner, rng, names):
    f, reg = names("f"), names("REGISTRY")
    return wrap(inner, [fn_def(f, "x", inner.body), [f'{reg} = {{"main": {f}}}']], [f'x = {reg}["main"](x)']), ""


@construct("list_registry")
def list_registry(inner, rng, names):
    f, reg = names("f"), names("FNS")
    how = rng.choice(["index", "loop"])
    call = [f"x = {reg}[0](x)"] if how == "index" else block(f"for fn in {reg}:", ["x = fn(x)"])
    return wrap(inner, [fn_def(f, "x", inner.body), [f"{reg} = [{f}]"]], call), how


@construct("callback_arg")
def callback_arg(inner, rng, names):
    f, ap = names("f"), names("apply")
    return wrap(inner, [fn_def(f, "x", inner.body), [f"def {ap}(fn, x):", "    return fn(x)"]],
                [f"x = {ap}({f}, x)"]), ""


@construct("early_return")
def early_return(inner, rng, names):
    f = names("f")
    taken = rng.choice([False, True])  # taken: the inner body is unreachable at run time
    cond = "x.shape[0] > 1" if taken else "x.shape[0] > 100"
    body = block(f"if {cond}:", ["return x + 1"]) + inner.body
    return wrap(inner, [fn_def(f, "x", body)], [f"x = {f}(x)"]), "taken" if taken else "not_taken"


@construct("recursion")
def recursion(inner, rng, names):
    f = names("rec")
    body = block("if n == 0:", inner.body + ["return x"]) + [f"return {f}(x + 1, n - 1)"]
    return wrap(inner, [[f"def {f}(x, n):"] + ind(body)], [f"x = {f}(x, 2)"]), ""


@construct("optional_none")
def optional_none(inner, rng, names):
    f = names("f")
    passed = rng.choice([False, True])
    body = block("if mask is not None:", ["x = x * mask"] + inner.body)
    call = f"x = {f}(x, torch.ones(4))" if passed else f"x = {f}(x)"
    return wrap(inner, [fn_def(f, "x, mask=None", body)], [call]), "passed" if passed else "not_passed"
