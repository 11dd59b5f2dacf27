"""Entry points compiled autograd adds: the Python code a backward pass runs.

With compiled autograd on (`torch._dynamo.config.compiled_autograd = True`, or a backward run
inside `torch._dynamo.compiled_autograd._enable(compiler_fn)`), Dynamo traces the autograd
graph a `.backward()` runs, and with it the Python pieces of that graph: the `backward` of
every `torch.autograd.Function` the forward applied and the tensor hooks registered with
`t.register_hook(h)`. A break there is a graph break of the backward graph, reported at its
line in that function (measured 2.13: a `print` in a Function's backward or in a hook). The
backward graph is compiled with the settings of the compiler function `_enable` is given
(`torch.compile(gm, fullgraph=True)` makes such a break an error) and without fullgraph
under the config flag.
"""
from __future__ import annotations

import libcst as cst

from ..knowledge import Knowledge
from ..walk import find_all
from .names import FULLGRAPH_KEYWORDS, dotted, keyword_true
from .project import ProjectIndex
from .symbols import FunctionInfo, ModuleIndex

HOW = "compiled autograd"
CONFIG_FLAG = "compiled_autograd"


def compiled_autograd_entries(project: ProjectIndex, knowledge: Knowledge, module: ModuleIndex,
                              compiled: list[FunctionInfo], flag_set: bool, make_entry) -> list:
    """Entries for the backward code of this module when it turns compiled autograd on;
    `compiled` are the module's compiled functions, `flag_set` whether it sets the config flag
    (entries.py reads config assignments and patches), `make_entry(fn, node, fullgraph)`
    builds one."""
    if CONFIG_FLAG not in module.parsed.text:
        return []
    calls = find_all(module.parsed.module, (cst.Call,))
    fullgraph = _enabled(project, knowledge, module, calls, flag_set and any(map(_runs_backward, compiled)))
    if fullgraph is None:
        return []
    return [make_entry(fn, node, fullgraph) for fn, node in _backward_code(project, knowledge, module, calls)]


def _enabled(project: ProjectIndex, knowledge: Knowledge, module: ModuleIndex, calls: list,
             by_flag: bool) -> bool | None:
    """None when the module does not turn compiled autograd on; else whether the backward
    graph is compiled with fullgraph. The config flag acts on a backward run from inside a
    compiled function (measured 2.13: one run after the compiled call returned is not traced)."""
    enablers = [c for c in calls if c.args and project.qualify(c.func, module) in knowledge.compiled_autograd_enablers]
    if not by_flag and not enablers:
        return None
    return any(_compiles_fullgraph(project, knowledge, module, c.args[0].value) for c in enablers)


def _runs_backward(fn: FunctionInfo) -> bool:
    return any(isinstance(c.func, cst.Attribute) and c.func.attr.value == "backward"
               for c in find_all(fn.node, (cst.Call,)))


def _compiles_fullgraph(project: ProjectIndex, knowledge: Knowledge, module: ModuleIndex,
                        compiler: cst.BaseExpression) -> bool:
    """Does the compiler function given to `_enable` compile the graph with fullgraph=True?"""
    fn = project.function(project.qualify(compiler, module))
    return fn is not None and any(
        project.qualify(call.func, module, fn) in knowledge.compile_functions and keyword_true(call, FULLGRAPH_KEYWORDS)
        for call in find_all(fn.node, (cst.Call,)))


def _backward_code(project: ProjectIndex, knowledge: Knowledge, module: ModuleIndex, calls: list):
    """(function, node to anchor the entry at): the `backward` of each autograd.Function
    class of the module and the project functions passed to `register_hook`."""
    methods = (project.method(cls, "backward") for cls in module.classes.values()
               if project.external_bases(cls) & knowledge.autograd_function_bases)
    backwards = {fn.qualname: fn for fn in methods if fn is not None}  # (a base's, once)
    for backward in backwards.values():
        yield backward, backward.node
    for call in calls:
        if isinstance(call.func, cst.Attribute) and call.func.attr.value == "register_hook" and call.args:
            hook = _hook_function(project, module, call.args[0].value)
            if hook is not None:
                yield hook, call


def _hook_function(project: ProjectIndex, module: ModuleIndex, value: cst.BaseExpression) -> FunctionInfo | None:
    """The function a hook argument names: `h`, `obj.method` of a module-level function, or
    the function of `functools.partial(h, ...)`."""
    if isinstance(value, cst.Call) and project.qualify(value.func, module) == "functools.partial" and value.args:
        value = value.args[0].value
    name = dotted(value)
    if name is None:
        return None
    candidates = [fn for fn in module.functions.values() if fn.name == name.rpartition(".")[2]]
    return candidates[0] if len(candidates) == 1 else None
