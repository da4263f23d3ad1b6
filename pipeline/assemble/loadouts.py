"""A printed loadout line -> ``WargearLoadout``, the same way for every source.

A loadout line is printed ``<models> is/are equipped with: <equipment>.`` (``6 Battle Sisters
are equipped with: bolt pistol; boltgun.``; ``This model is equipped with: ...``; also
``... are both equipped with`` and ``... is additionally equipped with``), with or without a
list bullet (``- ``). The one reading:

- ``models``: the words before ``is/are ... equipped with``, as printed;
- ``model_count``: the number those words start with, else the count a phrase gives
  (``LOADOUT_MODEL_COUNTS``: ``This model`` is 1), else None (``Every model``: the unit's size);
- ``equipment``: the list after the colon, without the closing full stop.
"""

from __future__ import annotations

import re
from typing import NamedTuple

from pipeline.limits import MAX_NUMBER_DIGITS
from pipeline.normalise.text import clean_line
from schemas.records import WargearLoadout

_EQUIPPED = re.compile(
    r"^(?:[-•]\s+)?(?P<models>.+?)\s+(?:is|are)(?:\s+(?:both|additionally))?\s+equipped\s+with:?\s*"
    r"(?P<equipment>.*?)\s*\.?$",
    re.IGNORECASE,
)

#: Model phrases of a loadout line that say how many models they are (case-folded).
LOADOUT_MODEL_COUNTS: dict[str, int] = {"this model": 1}


class LoadoutLine(NamedTuple):
    """A loadout line split: the models as printed, their count (None: not stated), the equipment."""

    models: str
    model_count: int | None
    equipment: str


def read_loadout_line(text: str) -> LoadoutLine | None:
    """Split a printed loadout line, or None when it is not one.

    >>> read_loadout_line("6 Battle Sisters are equipped with: bolt pistol; boltgun.")
    LoadoutLine(models='6 Battle Sisters', model_count=6, equipment='bolt pistol; boltgun')
    >>> read_loadout_line("- This model is equipped with: condemnor boltgun").model_count
    1
    >>> read_loadout_line("Every model is equipped with: lasgun; close combat weapon.").model_count is None
    True
    >>> read_loadout_line("Designer's note: none") is None
    True
    """
    m = _EQUIPPED.match(clean_line(text))
    if not m:
        return None
    models = m.group("models").strip()
    count = re.match(rf"^(\d{{1,{MAX_NUMBER_DIGITS}}})\s", models)  # a longer number is no count
    model_count = int(count.group(1)) if count else LOADOUT_MODEL_COUNTS.get(models.casefold())
    return LoadoutLine(models, model_count, m.group("equipment").strip().rstrip(".").strip())


def assemble_loadout(
    text: str, *, source_id: str, locator: str, datasheet_id: str, line: int, printed: str | None = None
) -> WargearLoadout | None:
    """The ``WargearLoadout`` of one printed loadout line (``read_loadout_line``), numbered
    ``line``; None when ``text`` is not a loadout line. ``printed`` is the line's text as stored
    (default: ``text`` without its bullet)."""
    read = read_loadout_line(text)
    if read is None:
        return None
    stored = printed if printed is not None else re.sub(r"^[-•]\s+", "", clean_line(text))
    return WargearLoadout(
        source_id=source_id, locator=locator, datasheet_id=datasheet_id, line=line,
        models=read.models, model_count=read.model_count, equipment=read.equipment, text=stored,
    )
