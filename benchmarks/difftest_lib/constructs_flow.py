"""Loops and branches on Python-level values (flags, config objects, dtype)."""
from __future__ import annotations

from .constructs_call import construct, wrap
from .frag import block

LOOPS = {
    "loop_range": "for i in range(2):",
    "loop_list": "for k in [1.0, 2.0]:",
    "loop_enumerate": "for i, k in enumerate([1.0, 2.0]):",
    "loop_zip": "for a, b in zip([1, 2], [3, 4]):",
    "loop_dict_items": 'for key, k in {"a": 1.0, "b": 2.0}.items():',
}


def _loop(name: str):
    def build(inner, rng, names):
        return wrap(inner, [], block(LOOPS[name], inner.body)), ""
    construct(name)(build)


for _name in LOOPS:
    _loop(_name)


@construct("loop_while")
def loop_while(inner, rng, names):
    i = names("i")
    return wrap(inner, [], [f"{i} = 0"] + block(f"while {i} < 2:", inner.body + [f"{i} += 1"])), ""


@construct("global_flag")
def global_flag(inner, rng, names):
    flag = names("FLAG")
    value = rng.choice([True, False])  # False: a constant that disables the inner code
    return wrap(inner, [[f"{flag} = {value}"]], block(f"if {flag}:", inner.body)), str(value).lower()


@construct("config_object")
def config_object(inner, rng, names):
    c, cfg = names("Config"), names("CFG")
    value = rng.choice([True, False])
    cls = [f"class {c}:", "    def __init__(self, verbose):", "        self.verbose = verbose"]
    return wrap(inner, [cls + ["", f"{cfg} = {c}(verbose={value})"]],
                block(f"if {cfg}.verbose:", inner.body)), str(value).lower()


@construct("dtype_check")
def dtype_check(inner, rng, names):
    dtype = rng.choice(["float32", "float16"])  # float16: the branch is not taken
    return wrap(inner, [], block(f"if x.dtype == torch.{dtype}:", inner.body)), dtype
