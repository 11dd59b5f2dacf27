"""Names a function reads that nothing binds: no parameter or local of it or of an enclosing
function, no module-level statement, no builtin. Dynamo's LOAD_GLOBAL finds such a name
neither in the frame's globals nor in its builtins ("failed to find name in frame builtins",
GB0354, measured 2.13) at a load it cannot resume after; run eagerly the code raises NameError."""
from __future__ import annotations

import builtins

import libcst as cst

from ..walk import NESTED_SCOPES, all_params, find_all
from .frame_values import assigned_names, loaded_names
from .tensors import target_names
from .side_effects import declared_outer

BUILTIN_NAMES = frozenset(dir(builtins))
# a module that makes globals at run time: no name in it is known to be missing
_RUNTIME_GLOBALS = ("globals()", "vars()", "locals()", "exec(", "__builtins__", "sys.modules[", "setattr(")


def undefined_names(project, module, fn) -> frozenset[str]:
    """The names `fn`'s own body reads that no scope binds; empty when the module may make
    globals at run time (a star import, `globals()[...] = `, `exec`)."""
    if project.derived(f"runtime_globals:{module.name}", lambda: _makes_globals_at_run_time(module)):
        return frozenset()
    missing = {name for name in loaded_names(fn.node.body) if not _is_dunder(name)} - BUILTIN_NAMES
    missing = {name for name in missing if not bound_at_top(module, name)}  # most globals: cheap
    missing -= scope_bindings(fn.node)
    outer = _enclosing_function(project, fn)
    while missing and outer is not None:
        missing -= scope_bindings(outer.node)
        outer = _enclosing_function(project, outer)
    if missing:  # rare: walk the module's blocks once per module
        missing -= project.derived(f"module_bindings:{module.name}", lambda: _module_bindings(module))
    return frozenset(missing)


def _makes_globals_at_run_time(module) -> bool:
    return bool(module.star_imports) or any(marker in module.parsed.text for marker in _RUNTIME_GLOBALS)


def bound_at_top(module, name: str) -> bool:
    """Bound by a module-level statement the index recorded (assignment, def, class, import)."""
    return name in module.values or name in module.top_level or name in module.imports \
        or name in module.module_imports


def _enclosing_function(project, fn):
    """The function whose variables `fn` sees as free: its parent, or for a method of a class
    defined in a function (a test's local `class Model`), that function (class bodies are no
    scope for their methods)."""
    if fn.parent_function is not None:
        return project.function(fn.parent_function)
    qualname = fn.class_qualname or ""
    while "." in qualname and qualname != fn.module:
        qualname = qualname.rpartition(".")[0]
        found = project.function(qualname)
        if found is not None:
            return found
    return None


def scope_bindings(node: cst.FunctionDef) -> set[str]:
    """Every name a function binds in its own scope: parameters, assignment and loop targets,
    imports, comprehension variables, and the names it declares global or nonlocal."""
    bound = {param.name.value for param in all_params(node.params)}
    return bound | _block_bindings(node.body) | set(declared_outer(node.body))


def _block_bindings(body: cst.CSTNode) -> set[str]:
    bound = assigned_names(body)
    for alias in find_all(body, (cst.ImportAlias,), skip=NESTED_SCOPES):
        bound.add(_alias_name(alias))
    for comp in find_all(body, (cst.CompFor,), skip=NESTED_SCOPES):
        bound.update(target_names(comp.target))
    return bound


def _module_bindings(module) -> frozenset[str]:
    """Names bound at module level, anywhere in its blocks, or made global by a function."""
    bound = _block_bindings(module.parsed.module)
    for function in module.functions.values():
        bound.update(declared_outer(function.node.body, (cst.Global,)))
    return frozenset(bound)


def _alias_name(alias: cst.ImportAlias) -> str:
    if alias.asname is not None and isinstance(alias.asname.name, cst.Name):
        return alias.asname.name.value
    node: cst.BaseExpression = alias.name
    while isinstance(node, cst.Attribute):  # `import a.b.c` binds `a`
        node = node.value
    return node.value if isinstance(node, cst.Name) else ""


def _is_dunder(name: str) -> bool:
    return name.startswith("__") and name.endswith("__")
