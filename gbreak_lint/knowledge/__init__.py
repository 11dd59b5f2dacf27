"""Version-keyed Dynamo knowledge (which context managers resume, which calls are tensors...)."""
from __future__ import annotations

from dataclasses import dataclass, field
from functools import lru_cache
from pathlib import Path
from types import MappingProxyType
from typing import Mapping

import yaml

from ..yaml_loader import SAFE_LOADER

HERE = Path(__file__).resolve().parent


class UnknownProfile(ValueError):
    pass


@dataclass(frozen=True)
class BuiltinSignature:
    """The calls a builtin binds, and how Dynamo meets one that does not (see builtin_signatures)."""
    least: int
    most: int | None  # None: any number of positional arguments
    keywords: frozenset[str]
    handler: bool  # refused by Dynamo's handler at the call (GB0193); else raised inside the trace

    def binds(self, positional: int, keywords: set[str]) -> bool:
        return positional >= self.least and (self.most is None or positional <= self.most) \
            and keywords <= self.keywords


@dataclass(frozen=True)
class Knowledge:
    profile: str
    python: str
    comprehension_frames: bool
    guards_not_taken: bool
    gb_codes: Mapping[str, str]
    sets: Mapping[str, frozenset]  # every list-valued entry, as a frozenset
    breaking_context_managers: Mapping[str, str]
    dtype_names: Mapping[str, str] = field(default_factory=lambda: MappingProxyType({}))
    default_float_dtype: str = "torch.float32"
    recompile_limit: int = 8  # guard sets a code object is compiled for before it runs eagerly
    constant_calls: Mapping[str, object] = field(default_factory=lambda: MappingProxyType({}))
    disable_gb_codes: Mapping[str, str] = field(default_factory=lambda: MappingProxyType({}))
    optimizer_methods: Mapping[str, str] = field(default_factory=lambda: MappingProxyType({}))  # method -> GB code
    optimizer_wrapped_methods: frozenset[str] = frozenset()  # `opt.step.__wrapped__` still breaks
    # builtins calling a function they are given: name -> its position ("0") or keyword ("key")
    callback_calling_functions: Mapping[str, str] = field(default_factory=lambda: MappingProxyType({}))
    callback_calling_methods: Mapping[str, str] = field(default_factory=lambda: MappingProxyType({}))
    module_callback_methods: Mapping[str, str] = field(default_factory=lambda: MappingProxyType({}))
    callback_pairing_functions: frozenset[str] = frozenset()  # ... with two elements (reduce)
    grad_mode_queries: frozenset[str] = frozenset()  # `torch.is_grad_enabled()`: folded by Dynamo
    # callee (a qualified function or a method name) -> the GB code its break reports, for a
    # rule whose callees break differently
    gb_codes_by_callee: Mapping[str, str] = field(default_factory=lambda: MappingProxyType({}))
    # a call setting torch's global state -> the value (as written) that is torch's default
    global_state_setters: Mapping[str, str] = field(default_factory=lambda: MappingProxyType({}))
    # higher-order op -> its parameters holding the functions it traces whole (keyword -> position)
    strict_higher_order_functions: Mapping[str, Mapping[str, int]] = field(default_factory=lambda: MappingProxyType({}))
    # top-level package whose every function Dynamo skips -> the config flag that traces it
    skipped_packages: Mapping[str, str] = field(default_factory=lambda: MappingProxyType({}))
    # library class Dynamo skips -> the methods it defines (`assert*`: a prefix)
    skipped_base_methods: Mapping[str, tuple[str, ...]] = field(default_factory=lambda: MappingProxyType({}))
    # decorator -> {"breaks": {rule: gb code at the call}, "errors": [rule, ...]} (see the file)
    fake_run: Mapping[str, Mapping] = field(default_factory=lambda: MappingProxyType({}))
    # op name -> (its positional parameters, its keyword parameters), `name#` taking a number and
    # `name*` a size (see the file's number_parameters)
    number_parameters: Mapping[str, tuple[tuple[str, ...], tuple[str, ...]]] = field(
        default_factory=lambda: MappingProxyType({}))
    builtin_signatures: Mapping[str, BuiltinSignature] = field(default_factory=lambda: MappingProxyType({}))
    # what `copy.copy` breaks on: an object's kind (a maker's name, `tensor`, `module`) -> GB code
    shallow_copy_breaks: Mapping[str, str] = field(default_factory=lambda: MappingProxyType({}))
    # a higher-order operator object -> (the keywords taken in place of positional arguments, in
    # order; how many arguments it needs; the GB code of a call that does not give exactly those)
    hop_operator_arguments: Mapping[str, tuple[tuple[str, ...], int, str]] = field(
        default_factory=lambda: MappingProxyType({}))

    def has(self, key: str, name: str | None) -> bool:
        return name is not None and name in self.sets.get(key, frozenset())

    @property
    def compilers(self) -> frozenset:
        """What compiles a function with Dynamo: `torch.compile` and `torch._dynamo.optimize`
        (lenient or strict), as a call or a decorator."""
        return self.compile_functions | self.legacy_optimize | self.strict_optimize

    def is_module_class(self, qual: str) -> bool:
        """A torch class that is an nn.Module (`torch.nn.Sequential`, `torch.nn.modules.conv.Conv2d`)."""
        if qual in self.nn_module_bases:
            return True
        namespace, _, name = qual.rpartition(".")
        if not name[:1].isupper() or qual in self.nn_non_module_classes:
            return False
        return namespace in self.nn_module_namespaces or namespace.rpartition(".")[0] in self.nn_module_packages

    def __getattr__(self, key: str) -> frozenset:
        # lets checks read `knowledge.resumable_context_managers` etc. as frozensets
        sets = object.__getattribute__(self, "sets")
        if key in sets:
            return sets[key]
        raise AttributeError(key)


class _UniqueKeyLoader(SAFE_LOADER):  # type: ignore[valid-type, misc]
    """A knowledge file naming a key twice is an error (YAML would keep the last silently: a
    list of tensor-only methods once went unread that way)."""

    def construct_mapping(self, node, deep=False):
        seen = set()
        for key_node, _ in node.value:
            key = self.construct_object(key_node, deep=deep)
            if key in seen:
                raise yaml.constructor.ConstructorError(None, None, f"key {key!r} appears twice", key_node.start_mark)
            seen.add(key)
        return super().construct_mapping(node, deep=deep)


def available_profiles() -> list[str]:
    return sorted(p.stem.removeprefix("torch-") for p in HERE.glob("torch-*.yaml"))


@lru_cache(maxsize=None)
def load_profile(profile: str = "2.13") -> Knowledge:
    path = HERE / f"torch-{profile}.yaml"
    if not path.is_file():
        raise UnknownProfile(
            f"unknown torch profile '{profile}' (available: {', '.join(available_profiles())})")
    data = yaml.load(path.read_text(encoding="utf-8"), Loader=_UniqueKeyLoader)
    sets = {k: frozenset(v) for k, v in data.items() if isinstance(v, list)}
    return Knowledge(
        profile=str(data["profile"]), python=str(data["python"]),
        comprehension_frames=bool(data["comprehension_frames"]),
        guards_not_taken=bool(data.get("guards_not_taken", False)),
        gb_codes=MappingProxyType(dict(data["gb_codes"])), sets=MappingProxyType(sets),
        breaking_context_managers=MappingProxyType(dict(data["breaking_context_managers"])),
        dtype_names=MappingProxyType(dict(data.get("dtype_names") or {})),
        default_float_dtype=str(data.get("default_float_dtype", "torch.float32")),
        recompile_limit=int(data.get("recompile_limit", 8)),
        constant_calls=MappingProxyType(dict(data.get("constant_calls") or {})),
        disable_gb_codes=MappingProxyType(dict(data.get("disable_gb_codes") or {})),
        optimizer_methods=MappingProxyType(dict(data.get("optimizer_methods") or {})),
        optimizer_wrapped_methods=frozenset(data.get("optimizer_wrapped_methods") or ()),
        callback_calling_functions=MappingProxyType({k: str(v) for k, v in
                                                     (data.get("callback_calling_functions") or {}).items()}),
        callback_calling_methods=MappingProxyType({k: str(v) for k, v in
                                                   (data.get("callback_calling_methods") or {}).items()}),
        module_callback_methods=MappingProxyType({k: str(v) for k, v in
                                                  (data.get("module_callback_methods") or {}).items()}),
        callback_pairing_functions=frozenset(data.get("callback_pairing_functions") or ()),
        grad_mode_queries=frozenset(data.get("grad_mode_queries") or ()),
        skipped_packages=MappingProxyType(dict(data.get("skipped_packages") or {})),
        skipped_base_methods=MappingProxyType({k: tuple(v) for k, v in (data.get("skipped_base_methods") or {}).items()}),
        gb_codes_by_callee=MappingProxyType(dict(data.get("gb_codes_by_callee") or {})),
        global_state_setters=MappingProxyType({k: str(v) for k, v in (data.get("global_state_setters") or {}).items()}),
        strict_higher_order_functions=MappingProxyType({k: MappingProxyType(dict(v)) for k, v in
                                                        (data.get("strict_higher_order_functions") or {}).items()}),
        fake_run=MappingProxyType({k: MappingProxyType({"breaks": MappingProxyType(dict(v.get("breaks") or {})),
                                                        "errors": frozenset(v.get("errors") or ()),
                                                        "arguments": MappingProxyType(dict(v.get("arguments") or {}))})
                                   for k, v in (data.get("fake_run") or {}).items()}),
        number_parameters=MappingProxyType({op: (tuple(v["positional"]), tuple(v["keywords"]))
                                            for op, v in (data.get("number_parameters") or {}).items()}),
        builtin_signatures=MappingProxyType({name: BuiltinSignature(int(least), most, frozenset(keywords), how == "handler")
                                             for name, (least, most, keywords, how)
                                             in (data.get("builtin_signatures") or {}).items()}),
        shallow_copy_breaks=MappingProxyType(dict(data.get("shallow_copy_breaks") or {})),
        hop_operator_arguments=MappingProxyType({name: (tuple(v["keywords"]), int(v["arguments"]), str(v["gb_code"]))
                                                 for name, v in (data.get("hop_operator_arguments") or {}).items()}),
    )
