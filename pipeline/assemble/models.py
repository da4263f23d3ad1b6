"""A printed model line -> ``ModelProfile``, and an invulnerable save with its note, for every source.

The one reading of a model line (``PrintedModel``):

- M: inches (``6"``; ``20+"`` is 20; BattleScribe's ``20"+`` is read as ``20+"`` with the flag
  ``move_plus_after_inches``); ``-`` is none;
- T, W, OC: whole numbers; a starred value (``5*``) keeps the number, flag ``starred_characteristic``;
- Sv: a roll target, ``-`` none; a save and an invulnerable save in one cell (``3+/4++``,
  ``3+ (4++)``) give both, flag ``save_and_invulnerable_in_one_cell``; Ld: a 2D6 roll target;
- the invulnerable save: ``read_invulnerable`` (its ``*`` note gives its scope, and is kept as
  printed in ``invulnerable_save_note``);
- a characteristic the source does not print is None with a ``data_gaps`` row
  (``not printed by the source``), as is one printed as an empty cell (``printed as an empty
  cell``: BattleScribe's Aestred Thurga has an empty Sv); one that cannot be read is None with a ``data_gaps`` row naming
  the printed value and why. The line itself is kept: its other values are good.
"""

from __future__ import annotations

import re
from typing import NamedTuple

from pipeline.assemble.collector import entity_key
from pipeline.assemble.printed import PrintedModel
from pipeline.assemble.weapons import Assembled, Gap, Note
from pipeline.errors import NormaliseError
from pipeline.normalise import characteristics as ch
from pipeline.normalise.text import clean_line
from schemas.records import ModelProfile

_MOVE_PLUS_AFTER = re.compile(r'^(\d+)"\+$')
#: A save and an invulnerable save printed in one cell: ``3+/4++``, ``3+ (4++)``, ``2+/4+*``.
_SAVE_AND_INVULNERABLE = re.compile(r"^(?P<save>\d\+|-)\s*(?:/|\()\s*(?P<inv>\d\+)\+?(?P<star>\*)?\s*\)?$")

#: ``PrintedModel`` field -> the characteristic's printed label (for gaps and flags).
LABELS: dict[str, str] = {
    "move": "M", "toughness": "T", "save": "Sv", "wounds": "W", "leadership": "Ld",
    "objective_control": "OC",
}


class Invulnerable(NamedTuple):
    """An invulnerable save read with its note: value, scope, and ``(flag, detail)`` pairs."""

    value: int | None
    scope: str | None
    flags: tuple[tuple[str, str], ...]


def read_invulnerable(value: str | None, note: str | None = None) -> Invulnerable:
    """An invulnerable save as printed (``4+``, ``4``, ``3+*``, ``-``) with its ``*`` note.

    The note restricts the save (``* Against ranged attacks only`` -> scope ``ranged``; a model
    named, ``* Traitor Enforcer model only.``, is kept as the scope) unless it names another roll
    target (``* 4+ against melee attacks`` on a 6+ save: the 6+ stays unconditional) or is about
    re-rolls. Every note is also kept as an ``invulnerable_save_note`` flag (the attack engine
    reads "N+ against melee attacks" from it); a note with no save is
    ``invulnerable_note_without_save``.

    >>> read_invulnerable("4*", "Against ranged attacks only")[:2]
    (4, 'ranged')
    >>> read_invulnerable("6", "* 4+ against melee attacks")[:2]
    (6, None)
    >>> read_invulnerable("3+*", "* Ranged attacks only")[:2], read_invulnerable("-")[:2]
    ((3, 'ranged'), (None, None))

    Raises ``NormaliseError`` for a value that is not a roll target.
    """
    v = clean_line(value or "")
    text = clean_line((note or "").replace("\n", " "))
    if not text:
        save = ch.invulnerable_save(v)
        return Invulnerable(save.value, save.scope, ())
    flags: tuple[tuple[str, str], ...] = (("invulnerable_save_note", text),)
    base = v.rstrip("*").strip()
    if base in ("", "-"):
        return Invulnerable(None, None, flags + (("invulnerable_note_without_save", text),))
    stated = {int(x) for x in re.findall(r"(\d)\+", text)}
    target = ch.roll_target(base)
    if "re-roll" in text.lower() or (stated and stated != {target}):
        save = ch.invulnerable_save(base)
    else:
        save = ch.invulnerable_save(base + "*", text)
    return Invulnerable(save.value, save.scope, flags)


def _none_or(text: str, read) -> int | None:
    t = clean_line(text)
    return None if t == "-" else read(t)


_READERS = {
    "move": ch.distance,
    "toughness": lambda t: ch.characteristic_int(t, "T"),
    "save": lambda t: _none_or(t, ch.roll_target),
    "wounds": lambda t: ch.characteristic_int(t, "W"),
    "leadership": lambda t: _none_or(t, ch.leadership),
    "objective_control": lambda t: ch.characteristic_int(t, "OC"),
}


def assemble_model(
    printed: PrintedModel, source_id: str, datasheet_id: str, datasheet_name: str | None = None
) -> Assembled:
    """Read one printed model line (see the module docstring for the rules).

    Returns the ``ModelProfile`` with its flags and data gaps (``Assembled.gaps``). A line that
    prints no model name is the datasheet's own model: it takes ``datasheet_name``, with the flag
    ``model_name_from_datasheet``. Raises ``NormaliseError`` for a line without a model name
    when no datasheet name is given.

    >>> a = assemble_model(PrintedModel("line 4", 1, "Battle Sister", '6"', "3", "3+", "1", "7+",
    ...                                 "1", "6+"), "s", "10e/x/y")
    >>> m = a.records[0]; (m.move_inches, m.toughness, m.save, m.invulnerable_save, m.leadership)
    (6, 3, 3, 6, 7)
    >>> m = assemble_model(PrintedModel("l", 1, "Terminator", '5"', "5", "2+/4++", "3", "6+", "1"),
    ...                    "s", "10e/x/y").records[0]; (m.save, m.invulnerable_save)
    (2, 4)
    """
    name = clean_line(printed.name)
    entity = f"{datasheet_id}|{printed.line}"  # = entity_key of the ModelProfile below
    notes: list[Note] = []
    if not name:
        if not datasheet_name:
            raise NormaliseError("model line without a model name")
        name = clean_line(datasheet_name)
        notes.append(Note("model_profiles", entity, "model_name_from_datasheet",
                          f"the line prints no model name: the datasheet's, {name!r}, is used"))
    gaps: list[tuple[str, str]] = []
    values: dict[str, int | None] = {}
    invulnerable_text = printed.invulnerable_save
    both = _SAVE_AND_INVULNERABLE.match(clean_line(printed.save or "").replace(" ", ""))
    if both and printed.invulnerable_save in (None, "", "-"):
        invulnerable_text = both.group("inv") + (both.group("star") or "")
        notes.append(Note("model_profiles", entity, "save_and_invulnerable_in_one_cell",
                          f"Sv={printed.save!r} read as Sv {both.group('save')} and InSv {invulnerable_text}"))
    for field_name, label in LABELS.items():
        text = getattr(printed, field_name)
        if field_name == "save" and both:
            text = both.group("save")
        if text is None:
            values[field_name] = None
            gaps.append((field_name, "not printed by the source"))
            continue
        text = clean_line(text)
        if not text:
            values[field_name] = None
            gaps.append((field_name, "printed as an empty cell"))
            continue
        if field_name == "move" and _MOVE_PLUS_AFTER.fullmatch(text):
            moved = _MOVE_PLUS_AFTER.sub(r'\1+"', text)
            notes.append(Note("model_profiles", entity, "move_plus_after_inches",
                              f"M={text!r} read as {moved!r}"))
            text = moved
        if field_name in ("toughness", "wounds", "objective_control") and text.endswith("*"):
            notes.append(Note("model_profiles", entity, "starred_characteristic", f"{label}={text!r}"))
        try:
            values[field_name] = _READERS[field_name](text)
        except NormaliseError as err:
            values[field_name] = None
            gaps.append((field_name, f"value {text!r} not loaded: {err}"))
    invulnerable = Invulnerable(None, None, ())
    if invulnerable_text is not None or printed.invulnerable_save_note:
        try:
            invulnerable = read_invulnerable(invulnerable_text, printed.invulnerable_save_note)
        except NormaliseError as err:
            gaps.append(("invulnerable_save", f"value {printed.invulnerable_save!r} not loaded: {err}"))
    notes += [Note("model_profiles", entity, code, detail) for code, detail in invulnerable.flags]
    record = ModelProfile(
        source_id=source_id, locator=printed.locator, datasheet_id=datasheet_id, line=printed.line,
        model_name=name, move_inches=values["move"],
        move_text=clean_line(printed.move) or None if printed.move is not None else None,
        toughness=values["toughness"], save=values["save"],
        invulnerable_save=invulnerable.value, invulnerable_save_scope=invulnerable.scope,
        wounds=values["wounds"], leadership=values["leadership"],
        objective_control=values["objective_control"],
        invulnerable_save_note=clean_line((printed.invulnerable_save_note or "").replace("\n", " ")) or None,
    )
    assert entity == entity_key(record)
    return Assembled([record], notes, [Gap("model_profiles", entity, f, reason) for f, reason in gaps])
