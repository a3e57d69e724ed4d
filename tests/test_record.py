"""infra/record.py: a ``@record`` class behaves as ``@dataclass(frozen=True)`` does.

Each check runs the same class body under both decorators and compares what users see:
construction, defaults, equality, hashing, repr, immutability, errors, and the
``dataclasses`` helpers the project uses (fields, replace, asdict).
"""

from __future__ import annotations

import dataclasses
import pickle
from dataclasses import field
from typing import Any, Callable

import pytest

from infra.record import record


def _pair(body: Callable[[Callable[[type], type]], type]) -> tuple[type, type]:
    return body(record), body(dataclasses.dataclass(frozen=True))


def _point(decorate: Callable[[type], type]) -> type:
    class Point:
        x: int
        y: int = 2
        tags: tuple[str, ...] = ()
        notes: list[str] = field(default_factory=list, compare=False, repr=False)

    return decorate(Point)


POINT, REF = _pair(_point)


@record
class Kept:
    a: int
    b: tuple[str, ...] = ()


@pytest.mark.parametrize("args,kwargs", [((1,), {}), ((1, 3), {}), ((), {"x": 1, "y": 5}),
                                         ((1,), {"tags": ("a",)}), ((1, 2, ("b",), ["n"]), {})])
def test_same_values_repr_and_equality_as_a_frozen_dataclass(args: Any, kwargs: Any) -> None:
    mine, ref = POINT(*args, **kwargs), REF(*args, **kwargs)
    assert dataclasses.asdict(mine) == dataclasses.asdict(ref)
    assert repr(mine) == repr(ref)
    assert mine == POINT(*args, **kwargs)
    assert hash(mine) == hash(ref)  # both hash the tuple of compared fields


def test_equality_skips_fields_outside_compare_and_other_classes() -> None:
    assert POINT(1, notes=["a"]) == POINT(1, notes=["b"])
    assert POINT(1) != POINT(2)
    assert POINT(1) != REF(1)  # a different class is never equal, as with dataclasses
    assert POINT(1).__eq__(object()) is NotImplemented


def test_default_factory_gives_each_instance_its_own_value() -> None:
    a, b = POINT(1), POINT(1)
    assert a.notes == [] and a.notes is not b.notes


def test_frozen() -> None:
    p = POINT(1)
    with pytest.raises(dataclasses.FrozenInstanceError, match="'x'"):
        p.x = 3  # type: ignore[misc]
    with pytest.raises(dataclasses.FrozenInstanceError):
        del p.x  # type: ignore[misc]
    with pytest.raises(dataclasses.FrozenInstanceError):
        p.new = 1  # type: ignore[attr-defined]


@pytest.mark.parametrize("args,kwargs,message", [
    ((), {}, r"missing 1 required positional argument: 'x'"),
    ((1, 2, (), [], 5), {}, r"takes 5 positional arguments but 6 were given"),
    ((1,), {"z": 1}, r"unexpected keyword argument 'z'"),
    ((1,), {"x": 1}, r"multiple values for argument 'x'"),
])
def test_bad_arguments_fail_as_dataclasses_do(args: Any, kwargs: Any, message: str) -> None:
    with pytest.raises(TypeError, match=message):
        POINT(*args, **kwargs)
    with pytest.raises(TypeError):
        REF(*args, **kwargs)


def test_dataclasses_helpers_work() -> None:
    p = POINT(1, tags=("a",))
    assert dataclasses.is_dataclass(p)
    assert [f.name for f in dataclasses.fields(p)] == ["x", "y", "tags", "notes"]
    q = dataclasses.replace(p, y=9)
    assert (q.x, q.y, q.tags) == (1, 9, ("a",)) and p.y == 2
    assert POINT.__match_args__ == ("x", "y", "tags", "notes")
    kept = Kept(1, ("a",))
    assert pickle.loads(pickle.dumps(kept)) == kept


def test_subclass_adds_fields_after_the_base() -> None:
    def body(decorate: Callable[[type], type]) -> type:
        base = decorate(type("Base", (), {"__annotations__": {"a": "int"}}))
        return decorate(type("Child", (base,), {"__annotations__": {"b": "int"}, "b": 0}))

    mine, ref = _pair(body)
    assert repr(mine(1, 2)) == repr(ref(1, 2))
    assert mine(1) == mine(a=1, b=0) and hash(mine(1)) == hash(ref(1))


def test_fields_outside_init_still_get_their_default() -> None:
    def body(decorate: Callable[[type], type]) -> type:
        class Counted:
            a: int
            seen: list[int] = field(default_factory=list, init=False)

        return decorate(Counted)

    mine, ref = _pair(body)
    assert mine(1).seen == ref(1).seen == []
    with pytest.raises(TypeError):
        mine(1, [])


def test_refuses_what_it_does_not_do() -> None:
    class Checked:
        a: int

        def __post_init__(self) -> None:
            pass

    with pytest.raises(TypeError, match="__post_init__"):
        record(Checked)


def test_project_classes_are_records() -> None:
    """The hot path's classes are records (bench/cold_dry_run.py measures why)."""
    from infra.catalog.tables import Accelerator
    from infra.contract.outputs import StackOutputs
    from submit.render.spec import WorkloadSpec

    for cls in (Accelerator, StackOutputs, WorkloadSpec):
        assert cls.__setattr__ is not object.__setattr__
        assert "__init__" in cls.__dict__ and cls.__init__.__code__.co_filename.endswith(
            "record.py")


def test_methods_the_class_body_writes_are_kept() -> None:
    def body(decorate: Callable[[type], type]) -> type:
        class Hidden:
            value: str

            def __repr__(self) -> str:
                return "Hidden(value=***)"

        return decorate(Hidden)

    mine, ref = _pair(body)
    assert repr(mine("s3cret")) == repr(ref("s3cret")) == "Hidden(value=***)"
    assert mine("a") == mine("a") and hash(mine("a")) == hash(mine("a"))

    def keyed(decorate: Callable[[type], type]) -> type:
        class Keyed:
            a: int
            b: int

            def __eq__(self, other: object) -> bool:
                return isinstance(other, Keyed) and other.a == self.a

            def __hash__(self) -> int:
                return hash(self.a)

        return decorate(Keyed)

    mine, ref = _pair(keyed)
    assert mine(1, 2) == mine(1, 3) and hash(mine(1, 2)) == hash(mine(1, 3)) == hash(ref(1, 9))


def test_its_own_field_replace_and_field_names() -> None:
    from typing import ClassVar

    from infra.record import field as rfield
    from infra.record import field_names, replace

    @record
    class Job:
        LIMIT: ClassVar[int] = 3  # a class variable, not a field
        name: str
        tags: dict[str, str] = rfield(default_factory=dict)
        size: int = 1

    a = Job("a")
    assert field_names(Job) == field_names(a) == ("name", "tags", "size")
    b = replace(a, size=2)
    assert (b.name, b.size, a.size) == ("a", 2, 1) and b.tags is a.tags  # kept, as dataclasses.replace does
    assert dataclasses.replace(a, name="c") == Job("c")  # the dataclasses helpers too
    assert dataclasses.asdict(a) == {"name": "a", "tags": {}, "size": 1}
    assert Job.size == 1 and Job.LIMIT == 3 and "tags" not in Job.__dict__


def test_class_bodies_dataclasses_would_refuse_are_refused() -> None:
    with pytest.raises(ValueError, match="mutable default"):
        record(type("Bad", (), {"__annotations__": {"a": "list[int]"}, "a": [],
                                "__module__": __name__}))
    with pytest.raises(TypeError, match="non-default argument 'b' follows default"):
        record(type("Bad", (), {"__annotations__": {"a": "int", "b": "int"}, "a": 1,
                                "__module__": __name__}))


def test_frozen_types_are_records() -> None:
    """One way to write a frozen type: ``@record`` (a frozen dataclass costs start-up time:
    bench/cold_dry_run.py). Mutable dataclasses stay dataclasses."""
    from conftest import ROOT

    found = [str(p.relative_to(ROOT)) for pkg in ("infra", "submit")
             for p in (ROOT / pkg).rglob("*.py")
             if "@dataclass(frozen=True)" in p.read_text() or "NamedTuple)" in p.read_text()]
    assert found == []


def test_a_subclass_that_is_no_record_is_named_and_may_set_its_own_attributes() -> None:
    def body(decorate: Callable[[type], type]) -> type:
        base = decorate(type("Base", (), {"__annotations__": {"a": "int"}}))
        return type("Plain", (base,), {})

    mine, ref = _pair(body)
    assert repr(mine(1)) == repr(ref(1)) == "Plain(a=1)"
    for cls in (mine, ref):
        obj = cls(1)
        obj.note = "kept"  # the frozen dataclass refuses fields only, on a plain subclass
        assert obj.note == "kept"
        with pytest.raises(dataclasses.FrozenInstanceError):
            obj.a = 2


def test_a_record_shown_inside_itself_is_three_dots() -> None:
    def body(decorate: Callable[[type], type]) -> type:
        return decorate(type("Loop", (), {"__annotations__": {"items": "list[object]"}}))

    mine, ref = _pair(body)
    a, b = mine([]), ref([])
    a.items.append(a)
    b.items.append(b)
    assert repr(a) == repr(b) == "Loop(items=[...])"


def test_signature_and_doc_are_the_dataclass_ones() -> None:
    import inspect

    def body(decorate: Callable[[type], type]) -> type:
        class Sig:
            a: int
            b: str = "x"
            c: list[int] = field(default_factory=list)
            d: int = field(default=0, init=False)

        return decorate(Sig)

    mine, ref = _pair(body)
    assert str(inspect.signature(mine)) == str(inspect.signature(ref))
    assert mine.__doc__ == ref.__doc__ == "Sig(a: 'int', b: 'str' = 'x', c: 'list[int]' = <factory>)"
    assert Kept.__doc__ == "Kept(a: 'int', b: 'tuple[str, ...]' = ())"


def test_record_docstring_kept() -> None:
    """A class body's own docstring stays."""

    @record
    class Told:
        """Told."""
        a: int

    assert Told.__doc__ == "Told."


def test_match_args_the_body_wrote_stays() -> None:
    def body(decorate: Callable[[type], type]) -> type:
        return decorate(type("M", (), {"__annotations__": {"a": "int", "b": "int"},
                                       "__match_args__": ("b",)}))

    mine, ref = _pair(body)
    assert mine.__match_args__ == ref.__match_args__ == ("b",)


def test_records_and_frozen_dataclasses_extend_each_other() -> None:
    @record
    class Base:
        a: int

    @dataclasses.dataclass(frozen=True)
    class Child(Base):
        b: int = 0

    assert repr(Child(1, 2)) == "test_records_and_frozen_dataclasses_extend_each_other.<locals>.Child(a=1, b=2)"
    assert dataclasses.fields(Base)[0].name == "a"

    @dataclasses.dataclass(frozen=True)
    class DBase:
        a: int
        ignored: dataclasses.InitVar[int] = 0

    @record
    class RChild(DBase):
        b: int = 0

    assert (RChild(1, 2).a, RChild(1, 2).b) == (1, 2)
    with pytest.raises(TypeError, match="cannot inherit non-frozen dataclass from a frozen one"):
        dataclasses.dataclass(type("Thawed", (Base,), {"__annotations__": {"c": "int"}}))


@pytest.mark.parametrize("annotation", ["dataclasses.InitVar[int]", "InitVar[int]", "KW_ONLY",
                                        "dataclasses.KW_ONLY"])
def test_initvar_and_kw_only_are_refused_not_made_fields(annotation: str) -> None:
    with pytest.raises(TypeError, match="InitVar or KW_ONLY"):
        record(type("Pseudo", (), {"__annotations__": {"a": "int", "b": annotation}}))
    with pytest.raises(TypeError, match="InitVar or KW_ONLY"):
        record(type("Pseudo", (), {"__annotations__": {"a": dataclasses.InitVar[int]}}))


def test_a_record_never_equals_one_of_a_subclass() -> None:
    def body(decorate: Callable[[type], type]) -> tuple[type, type]:
        base = decorate(type("Base", (), {"__annotations__": {"a": "int"}}))
        return base, decorate(type("Child", (base,), {}))

    (mine, mine_child), (ref, ref_child) = body(record), body(dataclasses.dataclass(frozen=True))
    for base, child in ((mine, mine_child), (ref, ref_child)):
        assert base(1) != child(1) and child(1) != base(1)
        assert base(1).__eq__(child(1)) is NotImplemented


def test_a_field_declared_again_keeps_its_place() -> None:
    def body(decorate: Callable[[type], type]) -> type:
        base = decorate(type("Base", (), {"__annotations__": {"a": "int", "b": "int"},
                                          "b": 1}))
        return decorate(type("Child", (base,), {"__annotations__": {"c": "int", "a": "int"},
                                                "c": 2, "a": 5}))

    mine, ref = _pair(body)
    assert repr(mine()) == repr(ref()) == "Child(a=5, b=1, c=2)"
    assert mine.__match_args__ == ref.__match_args__ == ("a", "b", "c")
    assert mine(7, 8, 9) == mine(a=7, b=8, c=9)
