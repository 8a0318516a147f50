"""``dataclass``: the standard decorator, with ``__repr__``, ``__eq__`` and ``__hash__`` shared by
every class instead of compiled for each one.

Before Python 3.13, :func:`dataclasses.dataclass` compiles every method it writes apart (one
``exec`` each): six for a frozen class, about 0.8 ms a class on a 2-vCPU machine. The app
loads some 110 of promptdeck's classes before its first frame, so the compiling alone cost it
more than a trivial Textual app spends drawing its own. Here the standard decorator still
writes what depends on the class's shape (``__init__``, and a frozen class's ``__setattr__``
and ``__delattr__``); the comparison, the hash and the representation are three functions
written once, which read the class's fields (:func:`dataclasses.fields`, looked up once per
class). They behave as the generated ones do, case for case (``tests/unit/test_lean_dataclass``
compares them): the same fields compared, hashed and shown, ``NotImplemented`` for another
class, the recursion guard of ``repr``, and the same rules for when ``__hash__`` is added, set
to ``None`` or left alone.

Type checkers see :func:`dataclasses.dataclass` itself, so every check they make of a
dataclass holds. Python 3.13 compiles a class's methods in one go: there this module hands out
the standard decorator unchanged. What is still compiled, here and there, a command compiles
once per machine (:mod:`promptdeck.core.tokens.generated_code` remembers the code).
"""

from __future__ import annotations

import dataclasses
import reprlib
import sys
from collections.abc import Callable
from operator import attrgetter
from typing import TYPE_CHECKING, Any

__all__ = ["dataclass"]

_Values = Callable[[Any], tuple[Any, ...]]


def _values_of(names: tuple[str, ...]) -> _Values:
    """A function giving an object's values of ``names`` as a tuple (what the generated
    methods compare and hash: a tuple even of one field, so ``nan`` compares as it does
    there)."""
    if not names:
        return lambda _obj: ()
    if len(names) == 1:
        one = attrgetter(names[0])
        return lambda obj: (one(obj),)
    return attrgetter(*names)  # a tuple for two names or more


class _Plan:
    """What the shared methods read of one class: the fields shown, compared and hashed."""

    __slots__ = ("compared", "hashed", "shown")

    def __init__(self, cls: type) -> None:
        fields = dataclasses.fields(cls)
        self.shown = tuple(f.name for f in fields if f.repr)
        self.compared = _values_of(tuple(f.name for f in fields if f.compare))
        hashed = (f.name for f in fields if (f.compare if f.hash is None else f.hash))
        self.hashed = _values_of(tuple(hashed))


_PLANS: dict[type, _Plan] = {}


def _plan(cls: type) -> _Plan:
    plan = _PLANS.get(cls)
    if plan is None:
        plan = _PLANS[cls] = _Plan(cls)
    return plan


@reprlib.recursive_repr()
def _repr(self: Any) -> str:
    cls = type(self)
    shown = ", ".join(f"{name}={getattr(self, name)!r}" for name in _plan(cls).shown)
    return f"{cls.__qualname__}({shown})"


def _eq(self: Any, other: object) -> Any:  # a bool, or NotImplemented
    if other.__class__ is self.__class__:
        compared = _plan(type(self)).compared
        return compared(self) == compared(other)
    return NotImplemented


def _hash(self: Any) -> int:
    return hash(_plan(type(self)).hashed(self))


def _lean(
    cls: type,
    *,
    init: bool,
    repr: bool,
    eq: bool,
    frozen: bool,
    kw_only: bool,
    match_args: bool,
) -> type:
    own = cls.__dict__
    class_hash = own.get("__hash__", dataclasses.MISSING)
    # As dataclasses decides it: a __hash__ = None that Python added for a class's own __eq__
    # is not one the class chose.
    explicit_hash = not (
        class_hash is dataclasses.MISSING or (class_hash is None and "__eq__" in own)
    )
    defines_repr, defines_eq = "__repr__" in own, "__eq__" in own
    made: type = dataclasses.dataclass(
        cls, init=init, repr=False, eq=False, frozen=frozen, kw_only=kw_only,
        match_args=match_args,
    )  # fmt: skip
    if repr and not defines_repr:
        made.__repr__ = _repr  # type: ignore[assignment]
    if eq:
        if not defines_eq:
            made.__eq__ = _eq  # type: ignore[assignment]
        if not explicit_hash:
            made.__hash__ = _hash if frozen else None  # type: ignore[assignment]
    return made


def _dataclass(
    cls: type | None = None,
    /,
    *,
    init: bool = True,
    repr: bool = True,
    eq: bool = True,
    order: bool = False,
    unsafe_hash: bool = False,
    frozen: bool = False,
    match_args: bool = True,
    kw_only: bool = False,
    slots: bool = False,
    weakref_slot: bool = False,
) -> Any:
    """:func:`dataclasses.dataclass`, its comparison, hash and representation shared."""

    def wrap(cls: type) -> type:
        if order or unsafe_hash or slots or weakref_slot:  # rare: the standard way
            return dataclasses.dataclass(
                cls, init=init, repr=repr, eq=eq, order=order, unsafe_hash=unsafe_hash,
                frozen=frozen, match_args=match_args, kw_only=kw_only, slots=slots,
                weakref_slot=weakref_slot,
            )  # fmt: skip
        return _lean(
            cls, init=init, repr=repr, eq=eq, frozen=frozen, kw_only=kw_only,
            match_args=match_args,
        )  # fmt: skip

    return wrap if cls is None else wrap(cls)


if TYPE_CHECKING or sys.version_info >= (3, 13):
    from dataclasses import dataclass
else:
    dataclass = _dataclass
