"""Frozen dataclasses <-> plain JSON data, checked field by field on the way in.

Caches hold results as plain data: decoding builds only the declared types from the declared
fields (str, int, bool, None, enumerations, nested dataclasses, tuples and frozensets of them),
so a file of the wrong shape is refused with PlainDataError instead of producing half-typed
objects.
"""
from __future__ import annotations

import dataclasses
import enum
import sys
import types
import typing
from functools import lru_cache


class PlainDataError(ValueError):
    """Data that does not have the shape of the type asked for."""


def to_plain(value):
    if isinstance(value, enum.Enum):
        return value.value
    if dataclasses.is_dataclass(value):
        return {f.name: to_plain(getattr(value, f.name)) for f in dataclasses.fields(value)}
    if isinstance(value, (tuple, list)):
        return [to_plain(v) for v in value]
    if isinstance(value, frozenset):
        return sorted(to_plain(v) for v in value)
    return value


def from_plain(kind, data):
    """An instance of `kind` (a type annotation) built from `data`, or PlainDataError."""
    origin = typing.get_origin(kind)
    if origin in (typing.Union, types.UnionType):
        return _from_union(typing.get_args(kind), data)
    if origin is tuple:
        return _from_tuple(typing.get_args(kind), data)
    if origin is frozenset:
        if not isinstance(data, list):
            raise PlainDataError("expected a list")
        return frozenset(from_plain(typing.get_args(kind)[0], item) for item in data)
    if dataclasses.is_dataclass(kind):
        return _from_dataclass(kind, data)
    if isinstance(kind, type) and issubclass(kind, enum.Enum):
        try:
            return kind(data)
        except ValueError as err:
            raise PlainDataError(f"not a {kind.__name__}: {data!r}") from err
    if kind is type(None):
        if data is not None:
            raise PlainDataError("expected null")
        return None
    if kind in (str, int, bool, float):
        # bool is an int in Python: an int field must not accept true/false, nor the reverse
        if type(data) is not kind and not (kind is float and type(data) is int):
            raise PlainDataError(f"expected {kind.__name__}, got {type(data).__name__}")
        return data
    raise PlainDataError(f"cannot decode {kind!r}")


def _from_union(options, data):
    for option in options:
        try:
            return from_plain(option, data)
        except PlainDataError:
            continue
    raise PlainDataError(f"no option of {options!r} fits")


def _from_tuple(args, data):
    if not isinstance(data, list):
        raise PlainDataError("expected a list")
    if len(args) == 2 and args[1] is Ellipsis:
        return tuple(from_plain(args[0], item) for item in data)
    if len(args) != len(data):
        raise PlainDataError("tuple of the wrong length")
    return tuple(from_plain(a, item) for a, item in zip(args, data))


def _from_dataclass(kind, data):
    if not isinstance(data, dict):
        raise PlainDataError(f"expected an object for {kind.__name__}")
    hints = _hints(kind)
    names = {f.name for f in dataclasses.fields(kind)}
    if set(data) - names:
        raise PlainDataError(f"unknown fields for {kind.__name__}: {sorted(set(data) - names)}")
    try:
        return kind(**{name: from_plain(hints[name], value) for name, value in data.items()})
    except TypeError as err:  # a required field is missing
        raise PlainDataError(str(err)) from err


@lru_cache(maxsize=None)
def _hints(kind) -> dict:
    return typing.get_type_hints(kind, vars(sys.modules[kind.__module__]))
