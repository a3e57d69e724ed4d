"""``@record``: a frozen dataclass that costs nothing to define.

Every typed value of the project (config, catalog rows, the outputs contract, specs) is a
frozen dataclass. ``dataclasses.dataclass(frozen=True)`` writes six methods per class as
source text and compiles each with ``exec``; for the 27 classes a ``submit workload create
--dry-run`` loads that was about 15 ms of a 100 ms process (bench/cold_dry_run.py, issue 26).
``record`` gives the same class without compiling anything: it lets ``dataclasses`` collect
the fields (so ``dataclasses.fields``, ``replace``, ``asdict`` and ``field(...)`` work as
before) but asks it for no methods, and sets ``__init__``, ``__eq__``, ``__hash__``,
``__repr__`` and the frozen ``__setattr__``/``__delattr__`` from closures that read the field
table. They behave as the generated ones do: keyword or positional arguments in field order,
defaults and default factories, equality and hashing over the compared fields of the same
class, ``FrozenInstanceError`` on assignment. Type checkers see a frozen dataclass
(``dataclass_transform``, PEP 681). Classes that need more (``__post_init__``, ``slots``,
``order``, ``kw_only``) use ``dataclasses.dataclass``: ``record`` refuses them.
"""

from __future__ import annotations

import dataclasses
from typing import Any, Callable, TypeVar, dataclass_transform

T = TypeVar("T", bound=type)

_MISSING: Any = dataclasses.MISSING


def _frozen_setattr(self: object, name: str, value: object) -> None:
    raise dataclasses.FrozenInstanceError(f"cannot assign to field {name!r}")


def _frozen_delattr(self: object, name: str) -> None:
    raise dataclasses.FrozenInstanceError(f"cannot delete field {name!r}")


def _init(cls: type, fields: tuple[dataclasses.Field[Any], ...]) -> Callable[..., None]:
    init = [f for f in fields if f.init]
    names = tuple(f.name for f in init)
    known = frozenset(names)
    # What an absent argument becomes: a value, or a factory to call (marked by the flag).
    absent: dict[str, tuple[bool, Any]] = {}
    for f in fields:
        if f.default is not _MISSING:
            absent[f.name] = (False, f.default)
        elif f.default_factory is not _MISSING:
            absent[f.name] = (True, f.default_factory)
    # Fields outside __init__ still get their default, as dataclasses does.
    later = tuple((f.name, absent[f.name]) for f in fields if not f.init and f.name in absent)
    qual = cls.__qualname__
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
                                f"argument"
                                f"{'s' if len(missing) > 1 else ''}: "
                                + ", ".join(repr(n) for n in missing))
        for name, (call, value) in later:
            assign(self, name, value() if call else value)

    return __init__


@dataclass_transform(frozen_default=True, field_specifiers=(dataclasses.field,))
def record(cls: T) -> T:
    """Make ``cls`` a frozen dataclass (see the module docstring)."""
    for hook in ("__post_init__", "__slots__"):
        if hook in cls.__dict__:
            raise TypeError(f"{cls.__qualname__}: record does not support {hook}; "
                            "use dataclasses.dataclass(frozen=True)")
    if cls.__doc__ is None:
        # dataclasses would build one from inspect.signature, which costs more than the rest.
        cls.__doc__ = f"{cls.__name__}: a record."
    dataclasses.dataclass(cls, init=False, repr=False, eq=False)
    fields = dataclasses.fields(cls)
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
    body = cls.__dict__
    explicit_hash = "__hash__" in body and not (body["__hash__"] is None and "__eq__" in body)
    own: dict[str, Any] = {"__init__": _init(cls, fields), "__eq__": __eq__,
                           "__repr__": __repr__}
    if not explicit_hash:
        own["__hash__"] = __hash__
    for name, method in own.items():
        if name in body and name != "__hash__":
            continue
        method.__qualname__ = f"{qual}.{name}"
        setattr(cls, name, method)
    for name in ("__setattr__", "__delattr__"):
        if name in body:
            raise TypeError(f"{qual}: a record is frozen; it cannot define {name}")
    setattr(cls, "__setattr__", _frozen_setattr)
    setattr(cls, "__delattr__", _frozen_delattr)
    return cls
