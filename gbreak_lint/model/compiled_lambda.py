"""`torch.compile(lambda x: m(x))`: the lambda is the compiled frame (`<lambda>`).

Its code is found again by position inside the function that holds it (entries are plain data
and carry no syntax tree); its free names read that function's, as a lambda called there does.
"""
from __future__ import annotations

import libcst as cst

from ..index.entries import EntryPoint
from ..index.project import ProjectIndex
from ..walk import walk
from .types import LambdaBody


class _Lambdas(cst.CSTVisitor):
    def __init__(self):
        self.found: list[cst.Lambda] = []

    def visit_Lambda(self, node: cst.Lambda) -> None:
        self.found.append(node)


def compiled_lambda(project: ProjectIndex, entry: EntryPoint) -> LambdaBody | None:
    host = project.function(entry.lambda_host) if entry.lambda_host else None
    if host is None or entry.lambda_at is None:
        return None
    lambdas = _Lambdas()
    walk(host.node, lambdas)
    anchor = (host.node, host.def_line)
    for lam in lambdas.found:
        span = host.parsed.span(lam, anchor)
        if (span.line, span.column) == entry.lambda_at:
            return LambdaBody(lam, host, span.line)
    return None


def lambda_parameters(body: LambdaBody) -> frozenset[str]:
    """Parameters that may hold tensors: those without a default (`lambda x, k=2: ...`)."""
    params = body.node.params
    return frozenset(p.name.value for p in (*params.posonly_params, *params.params) if p.default is None)
