"""astroid's inference, for the values libcst's names cannot follow.

`made = pick(); self.block = made()` with `pick()` returning a class: the name resolution of the
index gives up on a helper's return; astroid infers it. It sees one module at a time: the
class's module, built from the text the index already holds (never read from sys.path, never
imported or executed); anything imported is unknown to it (the index's names resolve imports).
Asked lazily, for the few attributes that need it; answers cached per attribute.
"""
from __future__ import annotations

from typing import TYPE_CHECKING

try:  # astroid is a dependency; without it the index simply knows less
    import astroid
    from astroid import nodes as astroid_nodes
except ImportError:  # pragma: no cover
    astroid = None

if TYPE_CHECKING:
    from .project import ProjectIndex
    from .symbols import ClassInfo

MAX_INFERRED = 8  # values of one attribute looked at before giving up


class ProjectInference:
    """astroid over one project module at a time, its answers cached per attribute."""

    def __init__(self, project: "ProjectIndex"):
        self.project = project
        self.built: dict[str, object] = {}
        self.answers: dict[tuple[str, str], str | None] = {}

    def attribute_class(self, cls: "ClassInfo", attr: str) -> str | None:
        """The one class `self.<attr>` can be, or None (unknown, or several)."""
        key = (cls.qualname, attr)
        if key not in self.answers:
            names = set(self.attribute_classes(cls, attr))
            self.answers[key] = names.pop() if len(names) == 1 else None
        return self.answers[key]

    def attribute_classes(self, cls: "ClassInfo", attr: str) -> list[str]:
        """Qualified names of the classes `self.<attr>` is an instance of, as far as astroid can
        tell; empty when it cannot."""
        if astroid is None:
            return []
        with _one_module(self, cls.module):
            try:
                klass = self._class_node(cls)
                if klass is None:
                    return []
                found = []
                for i, value in enumerate(klass.instantiate_class().igetattr(attr)):
                    if i >= MAX_INFERRED:
                        return []
                    if value is astroid.Uninferable:
                        continue  # e.g. what a caller may pass instead of a default class
                    if not isinstance(value, astroid.bases.Instance) or isinstance(value, astroid.bases.BoundMethod):
                        return []  # something it cannot name: no guess
                    found.append(value._proxied.qname())
                return found
            except (astroid.AstroidError, RecursionError, AttributeError, TypeError, ValueError):
                return []

    def _class_node(self, cls: "ClassInfo"):
        module = self.module_node(cls.module)
        if module is None:
            return None
        node = module
        for part in cls.qualname[len(cls.module) + 1:].split("."):
            found = [n for n in node.locals.get(part, ()) if isinstance(n, (astroid_nodes.ClassDef,
                                                                              astroid_nodes.FunctionDef))]
            if not found:
                return None
            node = found[-1]
        return node if isinstance(node, astroid_nodes.ClassDef) else None

    def module_node(self, name: str):
        if name not in self.built:
            index = self.project.modules.get(name)
            self.built[name] = None
            if index is not None:
                self.built[name] = astroid.builder.AstroidBuilder(astroid.MANAGER).string_build(
                    index.parsed.text, name, index.path)
        return self.built[name]


class _one_module:
    """While inferring, astroid's module lookups see the class's own module and nothing else:
    building modules is what astroid spends its time on, and what is imported from elsewhere is
    what the index's names already resolve."""

    def __init__(self, inference: ProjectInference, module: str):
        self.inference = inference
        self.module = module

    def __enter__(self):
        manager = astroid.MANAGER
        self.saved = manager.ast_from_module_name
        inference = self.inference

        def lookup(modname, context_file=None, use_cache=True):
            if modname == "builtins":  # astroid's own model of the builtins, made at its import
                return self.saved(modname, context_file, use_cache)
            module = inference.module_node(modname) if modname == self.module else None
            if module is None:
                raise astroid.AstroidImportError(f"{modname}: not looked at by gbreak-lint's inference")
            return module

        manager.ast_from_module_name = lookup

    def __exit__(self, *exc):
        astroid.MANAGER.ast_from_module_name = self.saved
        return False
