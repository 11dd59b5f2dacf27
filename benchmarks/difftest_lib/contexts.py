"""Contexts: how the program enters compiled code (entry form), what wraps the breaking code
(disable / nonstrict_trace / allow_in_graph / ...), nested_graph_breaks, and where the entry
code runs (module level or main())."""
from __future__ import annotations

from .frag import fn_def, ind

FUNCTION_FORMS = ["deco_bare", "deco_args", "call_assign", "call_inline", "fullgraph",
                  "error_on_graph_break_deco", "error_on_graph_break_with"]
MODULE_FORMS = ["module_compile", "model_compile"]
ENTRY_FORMS = FUNCTION_FORMS + MODULE_FORMS
WRAPPERS = ["none", "disable_function", "disable_module_instance", "disable_class", "nonstrict_trace",
            "allow_in_graph", "disallow_in_graph", "assume_constant_result"]
PRE_OPS = ["x = x + 1", "x = x * 2", "x = torch.sin(x)"]


def wrapper_code(kind: str, body: list[str]) -> tuple[list[list[str]], list[str], set[str]]:
    """(helper definitions, entry statements, needs) putting `body` behind the wrapper."""
    if kind == "none":
        return [], body, set()
    if kind in ("disable_function", "nonstrict_trace", "allow_in_graph"):
        deco = {"disable_function": "@torch.compiler.disable", "nonstrict_trace": "@torch._dynamo.nonstrict_trace",
                "allow_in_graph": "@torch._dynamo.allow_in_graph"}[kind]
        return [fn_def("helper", "x", body, (deco,))], ["x = helper(x)"], set()
    if kind == "disable_module_instance":
        cls = ["class HelperModule(nn.Module):"] + ind(fn_def("forward", "self, x", body))
        return [cls + ["", "helper = torch.compiler.disable(HelperModule())"]], ["x = helper(x)"], set()
    if kind == "disable_class":
        cls = ["@torch.compiler.disable", "class HelperModule(nn.Module):"] + ind(fn_def("forward", "self, x", body))
        return [cls + ["", "helper = HelperModule()"]], ["x = helper(x)"], set()
    if kind == "disallow_in_graph":
        return [["torch._dynamo.disallow_in_graph(torch.sub)"]], ["x = torch.sub(x, 1)"] + body, set()
    # assume_constant_result: a helper Dynamo runs once and treats as a constant
    helper = ["@torch._dynamo.assume_constant_result", "def enabled():", "    return time.time() > 0"]
    return [helper], ["if enabled():"] + ind(body), {"time"}


def entry_code(form: str, variant: str, body: list[str]) -> list[str]:
    """The compiled entry: a function `entry(x)` or a module class `Top`."""
    if form in MODULE_FORMS:
        return ["class Top(nn.Module):"] + ind(fn_def("forward", "self, x", body))
    decos = {"deco_bare": ("@torch.compile",), "deco_args": (f"@torch.compile({variant})",),
             "fullgraph": ("@torch.compile(fullgraph=True)",),
             "error_on_graph_break_deco": ("@torch.compile", "@torch._dynamo.error_on_graph_break(True)")}
    return fn_def("entry", "x", body, decos.get(form, ()))


def call_code(form: str) -> tuple[list[str], list[str]]:
    """(setup statements, call statements) that compile (if needed) and call the entry on `x`."""
    if form == "call_assign":
        return ["entry_c = torch.compile(entry)"], ["out = entry_c(x)"]
    if form == "call_inline":
        return [], ['out = torch.compile(backend="eager")(entry)(x)']
    if form == "error_on_graph_break_with":
        return ["entry_c = torch.compile(entry)"], ["with torch._dynamo.error_on_graph_break(True):",
                                                    "    out = entry_c(x)"]
    if form == "module_compile":
        return ["model = torch.compile(Top())"], ["out = model(x)"]
    if form == "model_compile":
        return ["model = Top()", "model.compile()"], ["out = model(x)"]
    return [], ["out = entry(x)"]


def run_code(form: str, placement: str) -> list[str]:
    setup, call = call_code(form)
    lines = setup + ["x = torch.randn(4, 4)"] + call + ["print(tuple(out.shape))"]
    if placement == "module_level":
        return lines
    return ["def main():"] + ind(lines) + ["", "", 'if __name__ == "__main__":', "    main()"]
