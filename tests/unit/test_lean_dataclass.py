"""The lean dataclass behaves as the standard one, case for case.

Each case is one class body made twice, by :func:`dataclasses.dataclass` and by the lean
decorator (its implementation itself, so the comparison holds on every Python, also where the
module hands out the standard decorator); what the two classes do is then compared.
"""

from __future__ import annotations

import dataclasses
import math
import pickle
import re
from collections.abc import Callable
from typing import Any

import pytest
from promptdeck.core import lean_dataclass
from promptdeck.core.lean_dataclass import _dataclass

Decorator = Callable[..., Any]


def _twice(body: Callable[[Decorator], type]) -> tuple[type, type]:
    return body(dataclasses.dataclass), body(_dataclass)


def _plain(dc: Decorator) -> type:
    @dc
    class Point:
        x: int
        y: int = 0
        tags: list[str] = dataclasses.field(default_factory=list)

    return Point


def _frozen(dc: Decorator) -> type:
    @dc(frozen=True)
    class Key:
        name: str
        size: float = 0.0
        note: str = dataclasses.field(default="", compare=False)
        secret: str = dataclasses.field(default="", repr=False)
        loose: int = dataclasses.field(default=0, hash=False)

    return Key


def _one_field(dc: Decorator) -> type:
    @dc(frozen=True)
    class One:
        value: float

    return One


def _no_fields(dc: Decorator) -> type:
    @dc(frozen=True)
    class Empty:
        """No fields at all."""

    return Empty


def _own_eq(dc: Decorator) -> type:
    @dc(frozen=True)
    class OwnEq:
        a: int

        def __eq__(self, other: object) -> bool:
            return True

    return OwnEq


def _own_hash(dc: Decorator) -> type:
    @dc
    class OwnHash:
        a: int

        def __hash__(self) -> int:
            return 7

    return OwnHash


def _own_repr(dc: Decorator) -> type:
    @dc(frozen=True)
    class OwnRepr:
        a: int

        def __repr__(self) -> str:
            return "mine"

    return OwnRepr


def _no_eq(dc: Decorator) -> type:
    @dc(frozen=True, eq=False, repr=False)
    class Bare:
        a: int

    return Bare


def _family(dc: Decorator) -> type:
    @dc(frozen=True)
    class Base:
        a: int

    @dc(frozen=True)
    class Child(Base):
        b: str = "b"

    return Child


CASES = [_plain, _frozen, _one_field, _no_fields, _own_eq, _own_hash, _own_repr, _no_eq]
ARGUMENTS: dict[str, tuple[tuple[Any, ...], tuple[Any, ...]]] = {
    "_plain": ((1, 2), (1, 3)),
    "_frozen": (("n", 1.5, "x", "s", 1), ("n", 1.5, "other note", "t", 2)),
    "_one_field": ((1.0,), (2.0,)),
    "_no_fields": ((), ()),
    "_own_eq": ((1,), (2,)),
    "_own_hash": ((1,), (2,)),
    "_own_repr": ((1,), (2,)),
    "_no_eq": ((1,), (1,)),
    "_family": ((1, "x"), (1, "y")),
}


def _behaviour(cls: type, first: tuple[Any, ...], second: tuple[Any, ...]) -> dict[str, Any]:
    one, same, other = cls(*first), cls(*first), cls(*second)
    seen: dict[str, Any] = {
        "repr": re.sub(r" at 0x[0-9a-f]+", "", repr(one)).replace(cls.__qualname__, "C"),
        "eq same": one == same,
        "eq other": one == other,
        "ne other": one != other,
        "eq foreign": one.__eq__(object()),
        "hash": getattr(cls, "__hash__", None) is None,
        "fields": [f.name for f in dataclasses.fields(cls)],
        "match": getattr(cls, "__match_args__", None),
    }
    if cls.__hash__ is not None:
        seen["hash same"] = hash(one) == hash(same)
        seen["hash identity"] = hash(one) == object.__hash__(one)
    return seen


@pytest.mark.parametrize("body", [*CASES, _family], ids=lambda body: body.__name__)
def test_each_case_behaves_as_the_standard_dataclass(body: Callable[[Decorator], type]) -> None:
    standard, lean = _twice(body)
    first, second = ARGUMENTS[body.__name__]
    assert _behaviour(lean, first, second) == _behaviour(standard, first, second)


def test_the_hash_takes_the_fields_the_standard_one_takes() -> None:
    standard, lean = _twice(_frozen)
    # loose (hash=False) and note (compare=False) are left out of both.
    args = ("n", 1.5, "x", "s", 1)
    assert hash(lean(*args)) == hash(standard(*args)) == hash(("n", 1.5, "s"))


def test_nan_compares_as_in_a_tuple() -> None:
    standard, lean = _twice(_one_field)
    nan = math.nan
    assert (lean(nan) == lean(nan)) == (standard(nan) == standard(nan))
    assert lean(nan) != lean(float("nan"))


def test_a_class_is_never_equal_to_its_subclass() -> None:
    _, lean = _twice(_family)
    base = lean.__mro__[1]
    assert base(1) != lean(1)
    assert lean(1) != base(1)


def test_a_recursive_repr_stops_as_the_standard_one_does() -> None:
    standard, lean = _twice(_plain)
    shown = []
    for cls in (standard, lean):
        point = cls(1)
        point.tags.append(point)
        shown.append(repr(point).replace(cls.__qualname__, "C"))
    assert shown[0] == shown[1] == "C(x=1, y=0, tags=[...])"


def test_frozen_stays_frozen_and_replace_and_pickle_work() -> None:
    _, lean = _twice(_frozen)
    key = lean("n", 1.5)
    with pytest.raises(dataclasses.FrozenInstanceError):
        key.name = "m"
    assert dataclasses.replace(key, name="m").name == "m"
    globals()["Key"] = lean  # pickle finds classes by module and name
    lean.__qualname__ = "Key"
    try:
        assert pickle.loads(pickle.dumps(key)) == key
    finally:
        del globals()["Key"]


def test_the_module_hands_out_one_of_the_two() -> None:
    assert lean_dataclass.dataclass in (_dataclass, dataclasses.dataclass)
