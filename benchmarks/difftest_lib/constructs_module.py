"""nn.Module constructs: forward, sub-modules in attributes and containers, inheritance,
hooks, `if self.training` and eval vs train mode.  Instances live at module level."""
from __future__ import annotations

from .constructs_call import construct, module_class, wrap
from .frag import block, fn_def, ind


def _holder(name: str, init: list[str], forward: list[str]) -> list[str]:
    """A module whose __init__ builds sub-modules and whose forward calls them."""
    return ([f"class {name}(nn.Module):", "    def __init__(self):", "        super().__init__()"]
            + ind(init, 2) + [""] + ind(fn_def("forward", "self, x", forward)))


@construct("module_forward")
def module_forward(inner, rng, names):
    m, inst = names("M"), names("m")
    return wrap(inner, [module_class(m, inner.body) + ["", f"{inst} = {m}()"]], [f"x = {inst}(x)"]), ""


@construct("submodule_attr")
def submodule_attr(inner, rng, names):
    s, h, inst = names("Sub"), names("Holder"), names("m")
    hold = _holder(h, [f"self.sub = {s}()"], ["x = self.sub(x)"])
    return wrap(inner, [module_class(s, inner.body), hold + ["", f"{inst} = {h}()"]], [f"x = {inst}(x)"]), ""


MODULELIST_BUILDS = {
    "literal": "nn.ModuleList([{s}(), {s}()])",
    "list_call": "nn.ModuleList(list([{s}()]))",
    "comprehension": "nn.ModuleList([{s}() for _ in range(2)])",
    "generator": "nn.ModuleList({s}() for _ in range(2))",
}


@construct("modulelist")
def modulelist(inner, rng, names):
    s, h, inst = names("Layer"), names("Stack"), names("m")
    how = rng.choice(sorted(MODULELIST_BUILDS))
    hold = _holder(h, [f"self.layers = {MODULELIST_BUILDS[how].format(s=s)}"],
                   block("for layer in self.layers:", ["x = layer(x)"]))
    return wrap(inner, [module_class(s, inner.body), hold + ["", f"{inst} = {h}()"]], [f"x = {inst}(x)"]), how


@construct("moduledict")
def moduledict(inner, rng, names):
    s, h, inst = names("Sub"), names("Router"), names("m")
    hold = _holder(h, [f'self.blocks = nn.ModuleDict({{"main": {s}()}})'], ['x = self.blocks["main"](x)'])
    return wrap(inner, [module_class(s, inner.body), hold + ["", f"{inst} = {h}()"]], [f"x = {inst}(x)"]), ""


SEQUENTIAL_BUILDS = {
    "literal": "nn.Sequential({s}(), nn.Identity())",
    "unpacked_list": "nn.Sequential(*[{s}()])",
    "generator": "nn.Sequential(*({s}() for _ in range(2)))",
}


@construct("sequential")
def sequential(inner, rng, names):
    s, h, inst = names("Sub"), names("Seq"), names("m")
    how = rng.choice(sorted(SEQUENTIAL_BUILDS))
    hold = _holder(h, [f"self.seq = {SEQUENTIAL_BUILDS[how].format(s=s)}"], ["x = self.seq(x)"])
    return wrap(inner, [module_class(s, inner.body), hold + ["", f"{inst} = {h}()"]], [f"x = {inst}(x)"]), how


@construct("inherited_forward")
def inherited_forward(inner, rng, names):
    b, c, inst = names("Base"), names("Child"), names("m")
    child = [f"class {c}({b}):", "    scale = 2"]
    return wrap(inner, [module_class(b, inner.body), child + ["", f"{inst} = {c}()"]], [f"x = {inst}(x)"]), ""


@construct("super_forward")
def super_forward(inner, rng, names):
    b, c, inst = names("Base"), names("Child"), names("m")
    child = [f"class {c}({b}):"] + ind(["def forward(self, x):", "    x = x + 1", "    return super().forward(x)"])
    return wrap(inner, [module_class(b, inner.body), child + ["", f"{inst} = {c}()"]], [f"x = {inst}(x)"]), ""


@construct("forward_hook")
def forward_hook(inner, rng, names):
    s, h, hook, inst = names("Sub"), names("Holder"), names("hook"), names("m")
    hook_def = [f"def {hook}(module, args, out):", "    x = out"] + ind(inner.body + ["return x"])
    hold = _holder(h, [f"self.sub = {s}()"], ["x = self.sub(x)"])
    setup = [f"{inst} = {h}()", f"{inst}.sub.register_forward_hook({hook})"]
    return wrap(inner, [module_class(s, ["x = x + 1"]), hook_def, hold + [""] + setup], [f"x = {inst}(x)"]), ""


@construct("forward_pre_hook")
def forward_pre_hook(inner, rng, names):
    s, h, hook, inst = names("Sub"), names("Holder"), names("prehook"), names("m")
    hook_def = [f"def {hook}(module, args):", "    x = args[0]"] + ind(inner.body + ["return (x,)"])
    hold = _holder(h, [f"self.sub = {s}()"], ["x = self.sub(x)"])
    setup = [f"{inst} = {h}()", f"{inst}.sub.register_forward_pre_hook({hook})"]
    return wrap(inner, [module_class(s, ["x = x + 1"]), hook_def, hold + [""] + setup], [f"x = {inst}(x)"]), ""


@construct("if_training")
def if_training(inner, rng, names):
    m, inst = names("M"), names("m")
    mode = rng.choice(["train", "eval"])  # eval: the guarded body is never traced
    cls = module_class(m, block("if self.training:", inner.body))
    return wrap(inner, [cls + ["", f"{inst} = {m}().{mode}()"]], [f"x = {inst}(x)"]), mode


@construct("eval_mode")
def eval_mode(inner, rng, names):
    m, inst = names("M"), names("m")
    mode = rng.choice(["train", "eval"])  # dropout is mode dependent; the body is not
    cls = (["class {0}(nn.Module):".format(m), "    def __init__(self):", "        super().__init__()",
            "        self.drop = nn.Dropout(0.0)", ""]
           + ind(fn_def("forward", "self, x", ["x = self.drop(x)"] + inner.body)))
    return wrap(inner, [cls + ["", f"{inst} = {m}()", f"{inst}.{mode}()"]], [f"x = {inst}(x)"]), mode
