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
class body writes kept, inheritance either way between records and frozen dataclasses,
a repr named after the instance's class ("..." for a record inside itself), pickling and
copying. ``dataclasses.fields``, ``replace``, ``asdict`` and ``is_dataclass`` work on
records too: ``__dataclass_fields__`` and ``__dataclass_params__`` are built from the same
table the first time one of them asks (importing ``dataclasses`` then); so are
``inspect.signature(cls)`` and the ``__doc__`` of a class without a docstring (importing
``inspect``). Type checkers see a frozen dataclass (``dataclass_transform``, PEP 681).

Where it differs (tests/test_record.py holds the rest to the dataclass behaviour):
``__post_init__``, ``InitVar``, ``KW_ONLY``, ``slots``, ``order`` and ``kw_only`` are refused,
not offered: a class that needs them uses ``dataclasses.dataclass``.
``inspect.signature(cls.__init__)`` shows ``(self, *args, **kwargs)`` (the class's own
signature is right). mypy checks the keywords of ``dataclasses.replace`` against the fields
but not those of this module's ``replace``. A dataclass that extends a record is a
dataclass: this module's ``replace`` and ``field_names`` see only the record's fields there.
"""

from __future__ import annotations

import sys
from _thread import get_ident
from typing import Any, Callable, TypeVar

if sys.version_info >= (3, 11):
    from typing import dataclass_transform
else:  # typing has it from 3.11 (PEP 681), frozen_default from 3.12 (accepted as a keyword
    # before); typing_extensions 4.5.0 has both. The project supports 3.10 (pyproject.toml).
    from typing_extensions import dataclass_transform

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


def _frozen(cls: Any, names: frozenset[str]) -> tuple[Callable[..., None], Callable[..., None]]:
    """``__setattr__`` and ``__delattr__`` of a frozen class, as dataclasses writes them: a
    field, or any name on the record's own class, is refused; a subclass that is no record
    may set attributes of its own."""

    def __setattr__(self: Any, name: str, value: object) -> None:
        if type(self) is cls or name in names:
            from dataclasses import FrozenInstanceError

            raise FrozenInstanceError(f"cannot assign to field {name!r}")
        super(cls, self).__setattr__(name, value)

    def __delattr__(self: Any, name: str) -> None:
        if type(self) is cls or name in names:
            from dataclasses import FrozenInstanceError

            raise FrozenInstanceError(f"cannot delete field {name!r}")
        super(cls, self).__delattr__(name)

    return __setattr__, __delattr__


_repr_running: set[tuple[int, int]] = set()


def _is_classvar(annotation: Any) -> bool:
    text = annotation if isinstance(annotation, str) else getattr(annotation, "__name__", "")
    return text.split("[", 1)[0].strip() in ("ClassVar", "typing.ClassVar")


def _is_pseudo_field(annotation: Any) -> bool:
    """``InitVar[...]`` and ``KW_ONLY``: dataclasses reads them as no field (an argument of
    ``__post_init__``, keyword-only fields after), which a record does not offer."""
    if isinstance(annotation, str):
        head = annotation.split("[", 1)[0].strip().rsplit(".", 1)[-1]
    else:
        head = getattr(annotation, "__name__", "") or type(annotation).__name__
    return head in ("InitVar", "KW_ONLY")


def _as_field(value: Any, dc: Any) -> Field:
    """A ``dataclasses.field(...)`` in a record's body read as ``field(...)``."""
    if value.metadata or value.kw_only not in (dc.MISSING, False) or value.hash is not None:
        raise TypeError("record fields take default, default_factory, init, repr and "
                        "compare only")
    missing = dc.MISSING
    return Field(MISSING if value.default is missing else value.default,
                 MISSING if value.default_factory is missing else value.default_factory,
                 value.init, value.repr, value.compare)


def _base_fields(base: type) -> tuple[Field, ...]:
    """The fields a base class declares: a record's table, or a dataclass's fields (a record
    may extend a frozen dataclass, as a frozen dataclass may)."""
    own = base.__dict__
    if "__record_fields__" in own:
        return own["__record_fields__"]  # type: ignore[no-any-return]
    table = own.get("__dataclass_fields__")
    if not isinstance(table, dict):  # a plain class, or a record's lazy table not built yet
        return ()
    import dataclasses as dc

    fields = []
    for value in table.values():
        if value._field_type is not dc._FIELD:  # type: ignore[attr-defined]  # ClassVar, InitVar
            continue
        f = _as_field(value, dc)
        f.name, f.type = value.name, value.type
        fields.append(f)
    return tuple(fields)


def _fields_of(cls: type) -> dict[str, Field]:
    """The class's fields in order: inherited record fields first, then its own annotations
    (a field declared again keeps its place and takes the new default), as dataclasses does."""
    fields: dict[str, Field] = {}
    for base in reversed(cls.__mro__[1:]):
        for f in _base_fields(base):
            fields[f.name] = f
    body = cls.__dict__
    # dataclasses is loaded already when a body holds one of its fields.
    dc = sys.modules.get("dataclasses")
    for name, annotation in body.get("__annotations__", {}).items():
        if "ClassVar" in str(annotation) and _is_classvar(annotation):
            continue
        if _is_pseudo_field(annotation):
            raise TypeError(f"{cls.__qualname__}.{name}: record does not support InitVar or "
                            "KW_ONLY; use dataclasses.dataclass(frozen=True)")
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


class _Lazy:
    """A class attribute of a record that ``dataclasses`` or ``inspect`` reads, built when one
    of them asks (importing it then): ``__dataclass_fields__`` and ``__dataclass_params__``
    (so fields, replace, asdict, is_dataclass accept a record, and a dataclass may extend
    one), ``__signature__`` (the fields as ``__init__``'s parameters) and, for a class body
    without a docstring, ``__doc__`` (its name and signature, as dataclasses writes it)."""

    def __init__(self, name: str, init: Callable[..., None] | None) -> None:
        self.name = name
        self.init = init  # the __init__ record wrote (None: the class body wrote its own)

    def __get__(self, obj: object, owner: type) -> Any:
        if self.name == "__signature__":
            return self._signature(owner)
        if self.name == "__doc__":
            import inspect

            try:
                text = str(inspect.signature(owner)).replace(" -> None", "")
            except (TypeError, ValueError):
                text = ""
            return owner.__name__ + text
        import dataclasses

        def spec(f: Field) -> Any:
            return dataclasses.field(
                default=dataclasses.MISSING if f.default is MISSING else f.default,
                default_factory=(dataclasses.MISSING if f.default_factory is MISSING
                                 else f.default_factory),
                init=f.init, repr=f.repr, compare=f.compare)

        # The frozen dataclass of the same fields lends its Field objects and parameters.
        fields: tuple[Field, ...] = getattr(owner, "__record_fields__")
        twin = dataclasses.make_dataclass(
            owner.__name__, [(f.name, f.type, spec(f)) for f in fields], frozen=True)
        table: dict[str, Any] = dict(twin.__dataclass_fields__)  # type: ignore[attr-defined]
        type.__setattr__(owner, "__dataclass_fields__", table)
        type.__setattr__(owner, "__dataclass_params__", getattr(twin, "__dataclass_params__"))
        return getattr(owner, self.name)

    def _signature(self, owner: type) -> Any:
        if self.init is None or owner.__init__ is not self.init:  # type: ignore[misc]
            return None  # inspect reads the __init__ a class body wrote
        import dataclasses
        import inspect

        params = []
        for f in getattr(owner, "__record_fields__"):
            if not f.init:
                continue
            default: Any = inspect.Parameter.empty
            if f.default is not MISSING:
                default = f.default
            elif f.default_factory is not MISSING:
                default = dataclasses._HAS_DEFAULT_FACTORY  # type: ignore[attr-defined]
            params.append(inspect.Parameter(f.name, inspect.Parameter.POSITIONAL_OR_KEYWORD,
                                            default=default, annotation=f.type))
        return inspect.Signature(params, return_annotation=None)


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
        # Named after the instance's class (a subclass that is no record, say); a record
        # reached again while it is being shown is "...", as dataclasses does.
        running = (id(self), get_ident())
        if running in _repr_running:
            return "..."
        _repr_running.add(running)
        try:
            return (f"{self.__class__.__qualname__}("
                    + ", ".join(f"{n}={getattr(self, n)!r}" for n in shown) + ")")
        finally:
            _repr_running.discard(running)

    # As dataclasses does: a method the class body wrote stays (a __repr__ that hides a
    # secret, say); so does an explicit __hash__ (a body's __eq__ alone sets it to None).
    written_init = "__init__" in body
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
    frozen_set, frozen_del = _frozen(cls, frozenset(f.name for f in fields))
    setattr(cls, "__setattr__", frozen_set)
    setattr(cls, "__delattr__", frozen_del)
    setattr(cls, "__record_fields__", fields)
    if "__match_args__" not in body:
        setattr(cls, "__match_args__", tuple(f.name for f in fields if f.init))
    init = None if written_init else own["__init__"]
    for lazy in ("__dataclass_fields__", "__dataclass_params__", "__signature__"):
        setattr(cls, lazy, _Lazy(lazy, init))
    if body.get("__doc__") is None:
        setattr(cls, "__doc__", _Lazy("__doc__", init))
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
