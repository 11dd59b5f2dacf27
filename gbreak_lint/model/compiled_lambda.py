"""`torch.compile(lambda x: m(x))`: the lambda is the compiled frame (`<lambda>`).

Its code is found again by position inside the function that holds it, or the module's
top-level code (entries are plain data and carry no syntax tree); its free names read that
function's, as a lambda called there does (at module level: the module's globals).
"""
from __future__ import annotations

import libcst as cst

from ..index.entries import EntryPoint, entry_function
from ..index.symbols import ModuleBody
from ..index.project import ProjectIndex
from ..walk import find_all
from .types import LambdaBody


def compiled_lambda(project: ProjectIndex, entry: EntryPoint) -> LambdaBody | None:
    host = entry_function(project, entry) if entry.lambda_host else None
    if host is None or entry.lambda_at is None:
        return None
    anchor = None if isinstance(host, ModuleBody) else (host.node, host.def_line)
    for lam in find_all(host.node, (cst.Lambda,)):
        span = host.parsed.span(lam, anchor)
        if (span.line, span.column) == entry.lambda_at:
            return LambdaBody(lam, host, span.line)
    return None

