"""``@record``: a frozen dataclass that costs next to nothing to define.

Every typed value of the project (config, catalog rows, the outputs contract, specs) is a
frozen record. ``dataclasses.dataclass(frozen=True)`` writes six methods per class as source
text and compiles each with ``exec``, and loading ``dataclasses`` itself pulls in ``copy``;
for the 27 classes a ``submit workload create --dry-run`` defines that was about 15 ms of a
100 ms process (bench/cold_dry_run.py, issue 26). ``record`` reads the class's annotations
and defaults itself and sets ``__init__``, ``__eq__``, ``__hash__``, ``__repr__`` and the
frozen ``__setattr__``/``__delattr__`` from closures over that field table: nothing is
compiled and ``dataclasses`` is not imported.

They behave as the generated ones do: keyword or positional arguments in field order,
defaults and default factories (``field(...)`` below), equality and hashing over the compared
fields of the same class, ``dataclasses.FrozenInstanceError`` on assignment, methods the
class body writes kept. ``dataclasses.fields``, ``replace``, ``asdict`` and ``is_dataclass``
work on records too: ``__dataclass_fields__`` is built from the same table the first time
one of them asks (importing ``dataclasses`` then). Type checkers see a frozen dataclass
(``dataclass_transform``, PEP 681). ``__post_init__``, ``slots``, ``order`` and ``kw_only``
are not offered: a class that needs them uses ``dataclasses.dataclass``.
"""

from __future__ import annotations

import sys
from typing import Any, Callable, TypeVar, dataclass_transform

T = TypeVar("T", bound=type)
R = TypeVar("R")


class _Missing:
    def __repr__(self) -> str:
        return "MISSING"


MISSING: Any = _Missing()


class Field:
    """One field of a record: what ``field(...)`` returns in a class body, and the table
    entry ``record`` keeps for every field."""

    __slots__ = ("name", "type", "default", "default_factory", "init", "repr", "compare")

    def __init__(self, default: Any = MISSING, default_factory: Any = MISSING,
                 init: bool = True, repr: bool = True, compare: bool = True) -> None:
        if default is not MISSING and default_factory is not MISSING:
            raise ValueError("cannot specify both default and default_factory")
        self.name = ""
        self.type: Any = None
        self.default = default
        self.default_factory = default_factory
        self.init = init
        self.repr = repr
        self.compare = compare

    def has_default(self) -> bool:
        return self.default is not MISSING or self.default_factory is not MISSING


def field(*, default: Any = MISSING, default_factory: Callable[[], Any] | Any = MISSING,
          init: bool = True, repr: bool = True, compare: bool = True) -> Any:
    """A field with a default factory, or kept out of ``__init__``, ``repr`` or equality
    (as ``dataclasses.field``)."""
    return Field(default, default_factory, init, repr, compare)


def _frozen_setattr(self: object, name: str, value: object) -> None:
    from dataclasses import FrozenInstanceError

    raise FrozenInstanceError(f"cannot assign to field {name!r}")


def _frozen_delattr(self: object, name: str) -> None:
    from dataclasses import FrozenInstanceError

    raise FrozenInstanceError(f"cannot delete field {name!r}")


def _is_classvar(annotation: Any) -> bool:
    text = annotation if isinstance(annotation, str) else getattr(annotation, "__name__", "")
    return text.split("[", 1)[0].strip() in ("ClassVar", "typing.ClassVar")


def _as_field(value: Any, dc: Any) -> Field:
    """A ``dataclasses.field(...)`` in a record's body read as ``field(...)``."""
    if value.metadata or value.kw_only not in (dc.MISSING, False) or value.hash is not None:
        raise TypeError("record fields take default, default_factory, init, repr and "
                        "compare only")
    missing = dc.MISSING
    return Field(MISSING if value.default is missing else value.default,
                 MISSING if value.default_factory is missing else value.default_factory,
                 value.init, value.repr, value.compare)


def _fields_of(cls: type) -> dict[str, Field]:
    """The class's fields in order: inherited record fields first, then its own annotations
    (a field declared again keeps its place and takes the new default), as dataclasses does."""
    fields: dict[str, Field] = {}
    for base in reversed(cls.__mro__[1:]):
        for f in base.__dict__.get("__record_fields__", ()):
            fields[f.name] = f
    body = cls.__dict__
    # dataclasses is loaded already when a body holds one of its fields.
    dc = sys.modules.get("dataclasses")
    for name, annotation in body.get("__annotations__", {}).items():
        if "ClassVar" in str(annotation) and _is_classvar(annotation):
            continue
        value = body.get(name, MISSING)
        if dc is not None and isinstance(value, dc.Field):
            value = _as_field(value, dc)
        f = value if isinstance(value, Field) else Field(default=value)
        f.name, f.type = name, annotation
        if isinstance(value, Field):  # the class attribute becomes the plain default
            if f.default is MISSING:
                delattr(cls, name)
            else:
                setattr(cls, name, f.default)
        if f.default is not MISSING and type(f.default).__hash__ is None:
            raise ValueError(f"mutable default {type(f.default)} for field {name} is not "
                             "allowed: use default_factory")
        fields[name] = f
    seen_default = ""
    for f in fields.values():
        if not f.init:
            continue
        if f.has_default():
            seen_default = f.name
        elif seen_default:
            raise TypeError(f"non-default argument {f.name!r} follows default argument")
    return fields


def _init(qual: str, fields: tuple[Field, ...]) -> Callable[..., None]:
    names = tuple(f.name for f in fields if f.init)
    known = frozenset(names)
    # What an absent argument becomes: a value, or a factory to call (marked by the flag).
    absent: dict[str, tuple[bool, Any]] = {}
    for f in fields:
        if f.default is not MISSING:
            absent[f.name] = (False, f.default)
        elif f.default_factory is not MISSING:
            absent[f.name] = (True, f.default_factory)
    # Fields outside __init__ still get their default, as dataclasses does.
    later = tuple((f.name, absent[f.name]) for f in fields if not f.init and f.name in absent)
    assign = object.__setattr__

    def __init__(self: object, *args: Any, **kwargs: Any) -> None:
        if len(args) > len(names):
            raise TypeError(f"{qual}.__init__() takes {len(names) + 1} positional arguments "
                            f"but {len(args) + 1} were given")
        given = dict(zip(names, args))
        for key, value in kwargs.items():
            if key not in known:
                raise TypeError(f"{qual}.__init__() got an unexpected keyword argument {key!r}")
            if key in given:
                raise TypeError(f"{qual}.__init__() got multiple values for argument {key!r}")
            given[key] = value
        for name in names:
            if name in given:
                assign(self, name, given[name])
            elif name in absent:
                call, value = absent[name]
                assign(self, name, value() if call else value)
            else:
                missing = [n for n in names if n not in given and n not in absent]
                raise TypeError(f"{qual}.__init__() missing {len(missing)} required positional "
                                f"argument{'s' if len(missing) > 1 else ''}: "
                                + ", ".join(repr(n) for n in missing))
        for name, (call, value) in later:
            assign(self, name, value() if call else value)

    return __init__


class _DataclassFields:
    """``__dataclass_fields__``, built on first use so that the ``dataclasses`` helpers
    (fields, replace, asdict, is_dataclass) accept a record; the dataclass of the same fields
    that ``dataclasses.make_dataclass`` builds lends its Field objects."""

    def __get__(self, obj: object, owner: type) -> dict[str, Any]:
        import dataclasses

        def spec(f: Field) -> Any:
            return dataclasses.field(
                default=dataclasses.MISSING if f.default is MISSING else f.default,
                default_factory=(dataclasses.MISSING if f.default_factory is MISSING
                                 else f.default_factory),
                init=f.init, repr=f.repr, compare=f.compare)

        fields: tuple[Field, ...] = getattr(owner, "__record_fields__")
        twin = dataclasses.make_dataclass(
            owner.__name__, [(f.name, f.type, spec(f)) for f in fields],
            init=False, repr=False, eq=False)
        table: dict[str, Any] = dict(twin.__dataclass_fields__)  # type: ignore[attr-defined]
        type.__setattr__(owner, "__dataclass_fields__", table)
        return table


@dataclass_transform(frozen_default=True, field_specifiers=(field, Field))
def record(cls: T) -> T:
    """Make ``cls`` a frozen record (see the module docstring)."""
    body = cls.__dict__
    for hook in ("__post_init__", "__slots__"):
        if hook in body:
            raise TypeError(f"{cls.__qualname__}: record does not support {hook}; "
                            "use dataclasses.dataclass(frozen=True)")
    for name in ("__setattr__", "__delattr__"):
        if name in body:
            raise TypeError(f"{cls.__qualname__}: a record is frozen; it cannot define {name}")
    fields = tuple(_fields_of(cls).values())
    compared = tuple(f.name for f in fields if f.compare)
    shown = tuple(f.name for f in fields if f.repr)
    qual = cls.__qualname__

    def key(self: object) -> tuple[Any, ...]:
        return tuple([getattr(self, n) for n in compared])

    def __eq__(self: object, other: object) -> bool:
        if other.__class__ is self.__class__:
            return key(self) == key(other)
        return NotImplemented

    def __hash__(self: object) -> int:
        return hash(key(self))

    def __repr__(self: object) -> str:
        return f"{qual}(" + ", ".join(f"{n}={getattr(self, n)!r}" for n in shown) + ")"

    # As dataclasses does: a method the class body wrote stays (a __repr__ that hides a
    # secret, say); so does an explicit __hash__ (a body's __eq__ alone sets it to None).
    explicit_hash = "__hash__" in body and not (body["__hash__"] is None and "__eq__" in body)
    own: dict[str, Any] = {"__init__": _init(qual, fields), "__eq__": __eq__,
                           "__repr__": __repr__}
    if not explicit_hash:
        own["__hash__"] = __hash__
    for name, method in own.items():
        if name in body and name != "__hash__":
            continue
        method.__qualname__ = f"{qual}.{name}"
        setattr(cls, name, method)
    setattr(cls, "__setattr__", _frozen_setattr)
    setattr(cls, "__delattr__", _frozen_delattr)
    setattr(cls, "__record_fields__", fields)
    setattr(cls, "__match_args__", tuple(f.name for f in fields if f.init))
    setattr(cls, "__dataclass_fields__", _DataclassFields())
    return cls


def replace(obj: R, /, **changes: Any) -> R:
    """A copy of the record ``obj`` with ``changes`` (as ``dataclasses.replace``, without
    importing it)."""
    fields: tuple[Field, ...] = type(obj).__record_fields__  # type: ignore[attr-defined]
    for f in fields:
        if not f.init:
            if f.name in changes:
                raise ValueError(f"field {f.name} is declared with init=False, it cannot be "
                                 "specified with replace()")
        elif f.name not in changes:
            changes[f.name] = getattr(obj, f.name)
    return type(obj)(**changes)


def field_names(cls_or_obj: Any) -> tuple[str, ...]:
    """The names of a record's fields, in order."""
    fields: tuple[Field, ...] = cls_or_obj.__record_fields__
    return tuple(f.name for f in fields)
