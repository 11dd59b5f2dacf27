"""Break causes (one per rule in rules/GBL3xx.yaml) and known non-breaks, as innermost bodies.

Each template is statements on `x`; `{v}` becomes a fresh temporary name and `{d}` the name of
a helper definition from DEFS.  `expect` is the generator's guess (meta.json only): scoring
uses the oracle's label, never this.
"""
from __future__ import annotations

from .frag import Frag, Names

# name: (expect_break, body template, needs, helper definition template or None)
CAUSES: dict[str, tuple[bool, list[str], set[str], list[str] | None]] = {
    "graph_break": (True, ["torch._dynamo.graph_break()"], set(), None),
    "skip_frame": (True, ["torch._dynamo.skip_frame()"], set(), None),
    "print": (True, ['print("tracing")'], set(), None),
    "logger_warning": (True, ['logger.warning("tracing")'], {"logger"}, None),
    "logging_info": (True, ['logging.info("tracing")'], {"logging"}, None),
    "warnings_warn": (True, ['warnings.warn("tracing")'], {"warnings"}, None),
    "item": (True, ["{v} = x.sum().item()", "x = x + {v}"], set(), None),
    "tolist": (True, ["{v} = x.tolist()", "x = x + len({v})"], set(), None),
    "float_conv": (True, ["{v} = float(x.sum())", "x = x + {v}"], set(), None),
    "int_conv": (True, ["{v} = int(x.sum())", "x = x + {v}"], set(), None),
    "data_branch": (True, ["if x.sum() > 0:", "    x = x + 1"], set(), None),
    "data_while": (True, ["while x.sum() > 1000:", "    x = x - 1"], set(), None),
    "nonzero": (True, ["{v} = torch.nonzero(x)", "x = x + {v}.sum()"], set(), None),
    "bool_mask": (True, ["{v} = x[x > 0]", "x = x + {v}.sum()"], set(), None),
    "unique": (True, ["{v} = x.round().unique()", "x = x + {v}.sum()"], set(), None),
    "disabled_call": (True, ["x = {d}(x)"], set(),
                      ["@torch.compiler.disable", "def {d}(x):", "    return x + 1"]),
    "disabled_nonrecursive": (True, ["x = {d}(x)"], set(),
                              ["@torch.compiler.disable(recursive=False)", "def {d}(x):",
                               "    return x + 1"]),
    "deepcopy_tensor": (True, ["{v} = copy.deepcopy(x)", "x = x + {v}"], {"copy"}, None),
    "deepcopy_module": (True, ["{v} = copy.deepcopy({d})", "x = {v}(x)"], {"copy"},
                        ["{d} = nn.Linear(4, 4)"]),
    "time_time": (True, ["{v} = time.time()"], {"time"}, None),
    "perf_counter": (True, ["{v} = time.perf_counter()"], {"time"}, None),
    "random_random": (True, ["{v} = random.random()"], {"random"}, None),
    "repr_tensor": (True, ["{v} = repr(x)"], set(), None),
    "str_tensor": (True, ["{v} = str(x)"], set(), None),
    "backward": (True, ["{v} = (x * {d}).sum()", "{v}.backward()"], set(),
                 ["{d} = torch.ones(4, requires_grad=True)"]),
    "requires_grad_assign": (True, ["{v} = x * 2", "{v}.requires_grad = True"], set(), None),
    "open_file": (True, ["{v} = open(__file__)", "{v}.close()"], set(), None),
    "torch_save": (True, ['torch.save(x, __file__ + ".pt")'], set(), None),
    "device_ctx": (True, ['with torch.device("cpu"):', "    x = x + 1"], set(), None),
    # lists of tensors searched: the polyfill compares items with `==` (count is traced)
    # (of 0-d tensors: `==` on bigger ones makes an ambiguous truth value, which eager refuses too)
    "list_index_tensor": (True, ["{v} = x.sum()", "x = x + [{v} + 1, {v}].index({v})"], set(), None),
    "list_remove_tensor": (True, ["{v} = x.sum()", "{v}_l = [{v} + 1, {v}]", "{v}_l.remove({v})",
                                  "x = x + len({v}_l)"], set(), None),
    "tensor_in_list": (True, ["{v} = x.sum()", "if {v} in [{v} + 1, {v}]:", "    x = x + 1"], set(), None),
    # a context manager a helper that broke hands back is entered in the resume function
    "cm_from_breaking_helper": (True, ["{v} = {d}(torch.no_grad())", "with {v}:", "    x = x + 1"], set(),
                                ["def {d}(ctx):", "    torch._dynamo.graph_break()", "    return ctx"]),
    # after a break in a helper, the caller's resume is compiled only if it holds a tensor: a
    # returned tuple does, an instance of a plain class does not (the later print is eager)
    "tuple_from_breaking_helper": (True, ["{v} = {d}(x)", 'print("after")', "x = {v}[0]"], set(),
                                   ["def {d}(x):", '    print("inside")', "    return (x + 1,)"]),
    "object_from_breaking_helper": (True, ["{v} = {d}(x)", 'print("after")', "x = {v}.t"], set(),
                                    ["class {d}Out:", "    def __init__(self, t):", "        self.t = t",
                                     "", "", "def {d}(x):", '    print("inside")', "    return {d}Out(x + 1)"]),
    # an optional dependency imported inside compiled code: the failed import cannot be resumed after
    "missing_import": (True, ["try:", "    import {d}_not_installed", "except ImportError:", "    pass"], set(), None),
    # an operator of the low-level torch.library API with only a CPU kernel: no fake-tensor run
    "library_op_cpu_only": (True, ["x = torch.ops.{d}_ns.op(x)"], set(),
                            ['{d}_lib = torch.library.Library("{d}_ns", "DEF")  # noqa: TOR901',
                             '{d}_lib.define("op(Tensor x) -> Tensor")', '{d}_lib.impl("op", torch.sin, "CPU")']),
    # requires_grad_() on an intermediate a returned value is computed from (through a list)
    "requires_grad_list": (True, ["{v} = x * 2", "{v}.requires_grad_()", "{v}_l = []", "{v}_l.append({v} * 3)",
                                  "x = x + {v}_l[0]"], set(), None),
    # known non-breaks on 2.13 (a linter must stay quiet)
    "neg_import_stdlib": (False, ["import math", "x = x * math.pi"], set(), None),
    "neg_library_op_meta": (False, ["x = torch.ops.{d}_ns.op(x)"], set(),
                            ['{d}_lib = torch.library.Library("{d}_ns", "DEF")  # noqa: TOR901',
                             '{d}_lib.define("op(Tensor x) -> Tensor")', '{d}_lib.impl("op", torch.sin, "CPU")',
                             '{d}_lib.impl("op", torch.sin, "Meta")']),
    "neg_list_count": (False, ["{v} = x.sum()", "x = x + [{v} + 1, {v}].count({v})"], set(), None),
    "neg_cm_autocast_from_helper": (False, ['{v} = {d}(torch.autocast("cpu"))', "with {v}:", "    x = x + 1"], set(),
                                    ["def {d}(ctx):", "    return ctx"]),
    "neg_shape_branch": (False, ["if x.shape[0] > 2:", "    x = x + 1"], set(), None),
    "neg_isinstance": (False, ["if isinstance(x, torch.Tensor):", "    x = x * 2"], set(), None),
    "neg_deepcopy_list": (False, ["{v} = copy.deepcopy([1, 2])", "x = x + {v}[0]"], {"copy"}, None),
    "neg_for_tensor": (False, ["for {v} in x:", "    x = x + 0 * {v}.sum()"], set(), None),
    "neg_range_len": (False, ["for {v} in range(len(x)):", "    x = x + {v}"], set(), None),
    "neg_try": (False, ["try:", "    x = x + 1", "except ValueError:", "    x = x - 1"], set(), None),
    "neg_custom_with": (False, ["with {d}():", "    x = x + 1"], set(),
                        ["class {d}:", "    def __enter__(self):", "        return self", "",
                         "    def __exit__(self, *exc):", "        return False"]),
    "neg_const_flag": (False, ["if {d}:", '    print("debug")'], set(), ["{d} = False"]),
    "neg_is_compiling": (False, ["if not torch.compiler.is_compiling():", '    print("eager")'],
                         set(), None),
    "neg_shape_arith": (False, ["{v} = x.shape[0] * 2", "x = x + {v}"], set(), None),
    "neg_plain_ops": (False, ["x = torch.relu(x) + 1"], set(), None),
}


def make_cause(name: str, names: Names) -> Frag:
    _, body, needs, helper = CAUSES[name]
    v, d = names("v"), names("H")
    fill = lambda lines: [ln.replace("{v}", v).replace("{d}", d) for ln in lines]  # noqa: E731
    defs = ["\n".join(fill(helper))] if helper else []
    return Frag(defs=defs, body=fill(body), needs=set(needs), tags=[])


def expected_break(name: str) -> bool:
    return CAUSES[name][0]
