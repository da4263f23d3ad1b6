"""A printed unit-composition line -> ``UnitComposition`` rows, the same way for every source.

The one reading of a line (``PrintedComposition``), by ``pipeline.normalise.composition``:

- a model line is one row per model group, in print order (``1 Shock Trooper Sergeant and
  9 Shock Troopers`` is two), each with the whole printed line as its ``text``; a group's name
  with a ``*`` (a note elsewhere on the datasheet) is flagged ``composition_footnote_marker``;
- a line that is no model line (``OR`` between alternative compositions, ``One of the
  following:``, ``10 MODELS MAXIMUM``) is one row with no model name and no counts, flagged
  ``composition_text_line``;
- counts a source gives apart from any text (BattleScribe) are one row as given, its text
  composed as the line would read (``composition_count``: ``9 Battle Sisters``, ``0-1 ...``,
  ``6+ ...``) when the source prints none.

Rows are numbered by the caller, from 1 per datasheet in print order.
"""

from __future__ import annotations

from pipeline.assemble.printed import PrintedComposition
from pipeline.assemble.weapons import Assembled, Note
from pipeline.normalise.composition import model_groups
from schemas.records import UnitComposition


def composition_count(least: int, most: int | None) -> str:
    """How a composition line's count reads: ``9``, ``0-1``, ``6+`` (no maximum).

    >>> composition_count(9, 9), composition_count(0, 1), composition_count(6, None)
    ('9', '0-1', '6+')
    """
    if most is None:
        return f"{least}+"
    return str(least) if least == most else f"{least}-{most}"


def assemble_composition(printed: PrintedComposition, source_id: str, datasheet_id: str,
                         line: int) -> Assembled:
    """The ``UnitComposition`` rows of one printed line, numbered from ``line``, with their flags
    (module docstring); each flag's locator is its row's.

    >>> rows = assemble_composition(PrintedComposition("l", "1 Sister Superior and 4-9 Battle Sisters"),
    ...                             "s", "10e/x/y", 1).records
    >>> [(r.line, r.model_name, r.min_models, r.max_models) for r in rows]
    [(1, 'Sister Superior', 1, 1), (2, 'Battle Sisters', 4, 9)]
    >>> a = assemble_composition(PrintedComposition("l", "OR"), "s", "10e/x/y", 3)
    >>> (a.records[0].model_name, a.records[0].min_models), [n.code for n in a.notes]
    (('', None), ['composition_text_line'])
    """
    models = printed.models if printed.models is not None else printed.text
    text = printed.text
    if printed.counts is not None:
        least, most, name = printed.counts
        groups: list[tuple[str, int | None, int | None, bool]] = [(name, least, most, False)]
        text = text or f"{composition_count(least, most)} {name}"
    else:
        read = model_groups(models)
        groups = [("", None, None, False)] if read is None else [
            (g.model_name, g.min_models, g.max_models, g.footnote) for g in read]
    out = Assembled()
    for number, (name, least, most, footnote) in enumerate(groups, start=line):
        locator = printed.locator.replace("{line}", str(number))
        out.records.append(UnitComposition(
            source_id=source_id, locator=locator, datasheet_id=datasheet_id, line=number,
            model_name=name, min_models=least, max_models=most, text=text))
        entity = f"{datasheet_id}|{number}"
        if printed.counts is None and least is None:
            out.notes.append(Note("unit_composition", entity, "composition_text_line",
                                  f"{models!r} is not a model line", locator))
        elif footnote:
            out.notes.append(Note("unit_composition", entity, "composition_footnote_marker",
                                  f"{models!r}: the '*' refers to a note", locator))
    return out
