"""The dice expression (``D6``, ``2D6+3``, a fixed ``3``): a named domain type without pydantic.

``DiceExpr`` is a frozen dataclass, so that the attack engine and the command line use it
without importing pydantic; a record field of this type (``WeaponProfile.attacks``) is still
validated by pydantic (it validates a dataclass field by its fields, then runs its checks:
``extra="forbid"`` by ``__pydantic_config__``). ``schemas.types`` re-exports it with the other
named types.
"""

from __future__ import annotations

from dataclasses import MISSING, dataclass, fields
from fractions import Fraction
from typing import ClassVar


@dataclass(frozen=True)
class DiceExpr:
    """A dice expression ``NdS+M`` such as ``D6``, ``2D6+3`` or a fixed ``3``.

    ``dice_count`` dice of ``dice_sides`` faces plus ``modifier``; a fixed value has
    ``dice_count = 0``. ``text`` keeps the canonical printed form.

    >>> DiceExpr(text="D6+2", dice_count=1, dice_sides=6, modifier=2).mean
    Fraction(11, 2)

    A die has at least 2 sides: ``dice_count >= 1`` with ``dice_sides < 2`` is a validation
    error (a ``ValueError``; in a record, pydantic's ``ValidationError``), and so is a count or
    sides below 0 or a field of another type:

    >>> DiceExpr(text="D0", dice_count=1, dice_sides=0)
    Traceback (most recent call last):
    ...
    ValueError: dice expression 'D0': 1 dice of 0 sides; a die has at least 2 sides (D3, D6)
    """

    __pydantic_config__: ClassVar[dict] = {"extra": "forbid"}

    text: str
    dice_count: int
    dice_sides: int
    modifier: int = 0

    def __post_init__(self) -> None:
        for name, wanted in _TYPES:
            if type(getattr(self, name)) is not wanted:
                raise ValueError(f"dice expression {self.text!r}: {name} {getattr(self, name)!r} is not "
                                 f"{wanted.__name__}")
        for name in ("dice_count", "dice_sides"):
            if getattr(self, name) < 0:
                raise ValueError(f"dice expression {self.text!r}: {name} {getattr(self, name)} is below 0")
        if self.dice_count and self.dice_sides < 2:
            raise ValueError(f"dice expression {self.text!r}: {self.dice_count} dice of {self.dice_sides} "
                             "sides; a die has at least 2 sides (D3, D6)")

    @classmethod
    def model_construct(cls, **values) -> "DiceExpr":
        """A ``DiceExpr`` of ``values`` without its checks (as pydantic's ``model_construct``,
        kept from when this was a pydantic model): what a program may hand the engine, which
        checks its dice again (``pipeline.engine.exact``).

        >>> DiceExpr.model_construct(text="D0", dice_count=1, dice_sides=0)
        DiceExpr(text='D0', dice_count=1, dice_sides=0, modifier=0)
        """
        expr = object.__new__(cls)
        for field in fields(cls):
            if field.name in values or field.default is not MISSING:  # a field not given stays unset
                object.__setattr__(expr, field.name, values.get(field.name, field.default))
        return expr

    @property
    def mean(self) -> Fraction:
        """Exact mean value."""
        return Fraction(self.dice_count * (self.dice_sides + 1), 2) + self.modifier

    @property
    def minimum(self) -> int:
        return self.dice_count + self.modifier

    @property
    def maximum(self) -> int:
        return self.dice_count * self.dice_sides + self.modifier

    @property
    def is_fixed(self) -> bool:
        return self.dice_count == 0

    def distribution(self) -> dict[int, Fraction]:
        """Exact probability of each value, as ``{value: probability}``.

        >>> DiceExpr(text="D3", dice_count=1, dice_sides=3, modifier=0).distribution()
        {1: Fraction(1, 3), 2: Fraction(1, 3), 3: Fraction(1, 3)}
        """
        dist: dict[int, Fraction] = {self.modifier: Fraction(1)}
        for _ in range(self.dice_count):
            nxt: dict[int, Fraction] = {}
            for value, p in dist.items():
                for face in range(1, self.dice_sides + 1):
                    nxt[value + face] = nxt.get(value + face, Fraction(0)) + p / self.dice_sides
            dist = nxt
        return dict(sorted(dist.items()))

    def __str__(self) -> str:
        return self.text


#: The type of each field, checked when a ``DiceExpr`` is made.
_TYPES = (("text", str), ("dice_count", int), ("dice_sides", int), ("modifier", int))
