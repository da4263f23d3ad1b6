"""A printed datasheet -> ``Datasheet``, the same way for every source.

The one reading (``PrintedDatasheet``): the name and role as printed, spaces folded and ends
stripped, the role and legend None when empty (the legend as printed); the Starting Strength is the model count
printed with the name (``(10 MODELS)``), else the sum of the unit composition's model counts when
every row is a fixed count (``1 Canoness``), else None (a range, ``OR``, a line that is no model
line: the size is the player's choice, see ``unit_composition``).
"""

from __future__ import annotations

from typing import Iterable

from pipeline.assemble.printed import PrintedDatasheet
from pipeline.normalise.text import clean_line
from schemas.records import Datasheet, UnitComposition


def starting_strength(model_count: str | None, composition: Iterable[UnitComposition]) -> int | None:
    """The Starting Strength of a datasheet (module docstring); ``composition``: its rows.

    >>> starting_strength("10", [])
    10
    >>> def row(low, high):
    ...     return UnitComposition(source_id="s", locator="l", datasheet_id="d", line=1, model_name="m",
    ...                            min_models=low, max_models=high, text="t")
    >>> starting_strength(None, [row(1, 1), row(9, 9)]), starting_strength(None, [row(1, 1), row(4, 9)])
    (10, None)
    """
    if model_count:
        return int(model_count)
    rows = list(composition)
    if rows and all(r.min_models is not None and r.min_models == r.max_models for r in rows):
        return sum(r.min_models or 0 for r in rows)
    return None


def assemble_datasheet(printed: PrintedDatasheet, source_id: str, datasheet_id: str,
                       composition: Iterable[UnitComposition] = ()) -> Datasheet:
    """The ``Datasheet`` of a printed datasheet with id ``datasheet_id`` (``pipeline.assemble.ids``)
    and its unit composition rows. Raises ``ValueError`` for a model count that is not a number.

    >>> d = assemble_datasheet(PrintedDatasheet("line 4", " Canoness\\n", "adepta-sororitas", 10,
    ...                        model_count="1"), "s", "10e/adepta-sororitas/canoness")
    >>> d.name, d.starting_strength, d.role
    ('Canoness', 1, None)
    """
    return Datasheet(
        source_id=source_id, locator=printed.locator, datasheet_id=datasheet_id,
        name=clean_line(printed.name), faction_id=printed.faction_id, edition=printed.edition,
        game_mode=printed.game_mode,  # type: ignore[arg-type]
        starting_strength=starting_strength(printed.model_count, composition),
        role=clean_line(printed.role or "") or None, legend=printed.legend or None,
        external_id=printed.external_id,
    )
