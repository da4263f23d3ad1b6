"""Army lists as players export them, read into one shape (``pipeline.lists.model.ArmyList``)
and matched to the database's datasheets (``pipeline.lists.match``).

``read_list(path)`` reads a file of any known format (``pipeline.lists.detect.FORMATS``), detected
from its content. Importers only read text (no database, no network); a list that cannot be
read is an ``ArmyListError`` naming the file and the line.
"""

from __future__ import annotations

from pathlib import Path

from pipeline.errors import InputError
from pipeline.limits import MAX_LIST_BYTES, MAX_LIST_NUMBER, MAX_LIST_UNITS, read_bounded
from pipeline.lists.detect import FORMATS, detect_format, importer
from pipeline.lists.errors import ArmyListError
from pipeline.lists.model import ArmyList

__all__ = ["ArmyList", "ArmyListError", "FORMATS", "detect_format", "parse_list", "read_list"]


def parse_list(data: bytes, fmt: str | None = None) -> ArmyList:
    """The army list in ``data`` (a file's bytes), read as ``fmt`` or as the format its content
    shows. Raises ``ArmyListError`` (message: ``line N: ...``) for an unknown format, text that
    is not UTF-8, or a list its importer cannot read."""
    if len(data) > MAX_LIST_BYTES:
        raise ArmyListError(f"{len(data)} bytes: at most {MAX_LIST_BYTES} bytes in one army list")
    text = None
    if data[:4] != b"PK\x03\x04":  # all but a zipped roster is text: UTF-8 first
        try:
            text = data.decode("utf-8")
        except UnicodeDecodeError as exc:
            line = data[:exc.start].count(b"\n") + 1
            raise ArmyListError(f"line {line}: not UTF-8 text (byte {exc.start}); save the list as UTF-8") from None
    fmt = fmt or detect_format(data)
    if fmt is None:
        raise ArmyListError(
            "line 1: not an army list of a known format (" + ", ".join(FORMATS)
            + "); export the list again as text from the Warhammer app, New Recruit, ListForge or War Organ, "
            "or as a BattleScribe roster (.ros/.rosz)")
    if fmt not in FORMATS:
        raise ArmyListError(f"no list format {fmt!r}; the formats are: " + ", ".join(FORMATS))
    if fmt == "battlescribe":
        return check_list(importer(fmt)(data))
    if text is None:
        raise ArmyListError(f"line 1: a zip file is read as a BattleScribe roster only, not as {fmt}")
    return check_list(importer(fmt)(text))


def check_list(army: ArmyList) -> ArmyList:
    """``army`` if it is within the limits of one list: at most ``MAX_LIST_UNITS`` units, and
    every points value and model or wargear count at most ``MAX_LIST_NUMBER``; else an
    ``ArmyListError`` naming the line and the limit."""
    if len(army.units) > MAX_LIST_UNITS:
        raise ArmyListError(f"line {army.units[MAX_LIST_UNITS].line}: more than {MAX_LIST_UNITS} units: at most "
                            f"{MAX_LIST_UNITS} units in one army list; this is no army list")
    for what, value in (("declared points", army.declared_points), ("points limit", army.points_limit)):
        if value is not None and abs(value) > MAX_LIST_NUMBER:
            raise ArmyListError(f"line 1: {what} {value}: at most {MAX_LIST_NUMBER:,}; correct the list's header")
    for unit in army.units:
        numbers = [("points", unit.points)] + [("points of an Enhancement", e.points) for e in unit.enhancements]
        numbers += [(f"models of {m.name!r}", m.count) for m in unit.models]
        numbers += [(f"count of {w.name!r}", w.count) for m in unit.models for w in m.wargear]
        numbers += [(f"count of {w.name!r}", w.count) for w in unit.wargear]
        for what, value in numbers:
            if value is not None and abs(value) > MAX_LIST_NUMBER:
                raise ArmyListError(f"line {unit.line}: {unit.name!r}: {what} {value}: at most {MAX_LIST_NUMBER:,} "
                                    "in one army list; correct the number")
    return army


def read_list(path: Path | str, fmt: str | None = None) -> ArmyList:
    """The army list in the file at ``path`` (``parse_list``). Raises ``ArmyListError``
    naming the file for a file that cannot be read, is not a regular file (a FIFO, a device),
    is over ``MAX_LIST_BYTES`` (read up to that bound, whatever its size says) or is not a list."""
    path = Path(path)
    try:
        data = read_bounded(path, MAX_LIST_BYTES, "exported army list")
    except InputError as exc:
        raise ArmyListError(str(exc)) from None
    try:
        return parse_list(data, fmt)
    except ArmyListError as exc:
        raise ArmyListError(f"{path}, {exc}") from None
