"""Named domain types shared by records, normalisers and the attack engine.

Each type is a small frozen pydantic model or an annotated primitive. Composite types
(``DiceExpr``) are flattened into several columns when a table is derived from a record
(see ``schemas.tables``): ``attacks: DiceExpr`` becomes ``attacks_text``, ``attacks_dice_count``,
``attacks_dice_sides`` and ``attacks_modifier``.
"""

from __future__ import annotations

from fractions import Fraction
from typing import Annotated, Literal

from pydantic import BaseModel, ConfigDict, Field, model_validator

Edition = Literal[10, 11]
GameMode = Literal["matched", "combat-patrol"]
AbilityKind = Literal["core", "faction", "datasheet", "wargear", "detachment", "other"]

#: A roll target such as ``3+`` stored as the number 3 (2..7; 7 means "cannot succeed").
RollTarget = Annotated[int, Field(ge=2, le=7)]
#: Leadership as a roll target on 2D6 (``6+`` -> 6; 2..12).
Leadership = Annotated[int, Field(ge=2, le=12)]
#: Armour Penetration as a signed integer: ``-1`` is AP -1; 10th-edition AP is never positive.
ArmourPenetration = Annotated[int, Field(le=0, ge=-6)]


class DiceExpr(BaseModel):
    """A dice expression ``NdS+M`` such as ``D6``, ``2D6+3`` or a fixed ``3``.

    ``dice_count`` dice of ``dice_sides`` faces plus ``modifier``; a fixed value has
    ``dice_count = 0``. ``text`` keeps the canonical printed form.

    >>> DiceExpr(text="D6+2", dice_count=1, dice_sides=6, modifier=2).mean
    Fraction(11, 2)

    A die has at least 2 sides: ``dice_count >= 1`` with ``dice_sides < 2`` is a validation
    error (a ``ValueError``).
    """

    model_config = ConfigDict(extra="forbid", frozen=True)

    text: str
    dice_count: int = Field(ge=0)
    dice_sides: int = Field(ge=0)
    modifier: int = 0

    @model_validator(mode="after")
    def _dice_have_sides(self) -> "DiceExpr":
        if self.dice_count and self.dice_sides < 2:
            raise ValueError(f"dice expression {self.text!r}: {self.dice_count} dice of {self.dice_sides} "
                             "sides; a die has at least 2 sides (D3, D6)")
        return self

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
