"""Named domain types shared by records, normalisers and the attack engine.

Each type is an annotated primitive or a small frozen value (``DiceExpr``, a dataclass of
``schemas.dice`` that the engine imports without pydantic). Composite types
(``DiceExpr``) are flattened into several columns when a table is derived from a record
(see ``schemas.tables``): ``attacks: DiceExpr`` becomes ``attacks_text``, ``attacks_dice_count``,
``attacks_dice_sides`` and ``attacks_modifier``.
"""

from __future__ import annotations

from typing import Annotated, Literal

from pydantic import Field

from schemas.dice import DiceExpr  # noqa: F401  (re-exported: the named types are this module's)

Edition = Literal[10, 11]
GameMode = Literal["matched", "combat-patrol"]
AbilityKind = Literal["core", "faction", "datasheet", "wargear", "detachment", "other"]

#: A roll target such as ``3+`` stored as the number 3 (2..7; 7 means "cannot succeed").
RollTarget = Annotated[int, Field(ge=2, le=7)]
#: Leadership as a roll target on 2D6 (``6+`` -> 6; 2..12).
Leadership = Annotated[int, Field(ge=2, le=12)]
#: Armour Penetration as a signed integer: ``-1`` is AP -1; 10th-edition AP is never positive.
ArmourPenetration = Annotated[int, Field(le=0, ge=-6)]
