"""What changed in a datasheet between two editions: characteristics, weapons, abilities,
keywords and points (``wh40k unit-diff``).

The two datasheets are found by name (``pipeline.normalise.names.name_key``, as ``wh40k unit``
finds one), one in each edition. Their parts are lined up by name as a reader lines them up:
model lines and weapons by ``name_key`` with the plural read as the singular (``Battle
Sisters`` / ``Battle Sister``), abilities and keywords by ``name_key``; printed text is compared
as read (``pipeline.merge.as_read``: case, spacing, quote style and the order of a weapon's
abilities do not count). Every difference is one ``Change``; nothing is left out because it is
small.
"""

from __future__ import annotations

from dataclasses import asdict, dataclass
from typing import Any, Callable, Iterable

import duckdb

from pipeline import query
from pipeline.errors import InputError, NotFoundError
from pipeline.merge import as_read
from pipeline.normalise.names import name_key

#: The parts of a datasheet that ``unit_diff`` compares, in the order it reports them.
PARTS = ("characteristics", "weapons", "abilities", "keywords", "points")

#: A model line's characteristics as printed on a datasheet: (label, how to print it from a
#: ``model_profiles`` row).
CHARACTERISTICS: tuple[tuple[str, Callable[[dict], str | None]], ...] = (
    ("M", lambda p: p["move_text"] or (f'{p["move_inches"]}"' if p["move_inches"] is not None else None)),
    ("T", lambda p: _text(p["toughness"])),
    ("Sv", lambda p: _roll(p["save"])),
    ("InSv", lambda p: _roll(p["invulnerable_save"]) and _roll(p["invulnerable_save"]) + (
        f" ({p['invulnerable_save_scope']} attacks)" if p["invulnerable_save_scope"] else "")),
    ("W", lambda p: _text(p["wounds"])),
    ("Ld", lambda p: _roll(p["leadership"])),
    ("OC", lambda p: _text(p["objective_control"])),
)

#: A weapon profile's fields as ``query.weapons`` gives them (label, column).
WEAPON_FIELDS: tuple[tuple[str, str], ...] = (
    ("range", "range"), ("A", "A"), ("skill", "skill"), ("S", "S"), ("AP", "AP"), ("D", "D"),
    ("abilities", "abilities"),
)


@dataclass(frozen=True)
class Change:
    """One difference between the two datasheets.

    ``part``: one of ``PARTS``. ``item``: the model line, weapon (``Boltgun (ranged)``), ability
    (``Defenders of the Faith (datasheet)``), keyword or points line it is about. ``change``:
    ``added``, ``removed`` or ``changed``. ``field``: the field that changed (``T``, ``S``,
    ``text``), None for an item added or removed. ``old`` and ``new``: the values as printed
    (for an item added or removed, its summary on one side, None on the other). ``marked``: for
    a changed wording, the new text with ``[-removed-]`` and ``{+added+}`` words.
    """

    part: str
    item: str
    change: str
    field: str | None
    old: str | None
    new: str | None
    marked: str | None = None


@dataclass(frozen=True)
class UnitDiff:
    """The two datasheets compared (rows of ``datasheets``) and their ``Change`` list."""

    old: dict[str, Any]
    new: dict[str, Any]
    changes: tuple[Change, ...]

    def as_dict(self) -> dict[str, Any]:
        """JSON-ready: ``from`` and ``to`` (datasheet id, name, edition, game mode, source) and
        ``changes``, one object per ``Change``."""
        def sheet(d: dict[str, Any]) -> dict[str, Any]:
            return {k: d[k] for k in ("datasheet_id", "name", "edition", "game_mode", "source_id")}
        return {"from": sheet(self.old), "to": sheet(self.new), "changes": [asdict(c) for c in self.changes]}


def _text(value: object) -> str | None:
    return None if value is None else str(value)


def _roll(value: object) -> str | None:
    return None if value is None else f"{value}+"


def unit_diff(con: duckdb.DuckDBPyConnection, name: str, from_edition: int, to_edition: int,
              mode: str | None = None) -> UnitDiff:
    """The changes of the datasheet ``name`` (a name or a datasheet id) from ``from_edition`` to
    ``to_edition``; ``mode`` narrows to matched or combat-patrol sheets (None: matched play first,
    as ``query.find_datasheet`` orders them).

    Raises ``InputError`` when the two editions are the same, and ``NotFoundError`` when the
    unit is unknown (with close names) or has no datasheet in one of the editions (naming the
    editions it has).
    """
    if from_edition == to_edition:
        raise InputError(f"--from {from_edition} and --to {to_edition} are the same edition; "
                         "compare two editions, e.g. --from 10 --to 11")
    first, _ = query.find_datasheet(con, name, mode=mode)  # a datasheet id names its unit
    sheets = []
    for edition in (from_edition, to_edition):
        try:
            sheets.append(query.find_datasheet(con, first["name"], edition=edition, mode=mode)[0])
        except NotFoundError as exc:
            raise NotFoundError(f"{exc}; unit-diff compares a unit's datasheets of two editions") from None
    old, new = sheets
    changes = [
        *diff_characteristics(_profiles(con, old), _profiles(con, new)),
        *diff_weapons(query.weapons(con, datasheet_id=old["datasheet_id"]),
                      query.weapons(con, datasheet_id=new["datasheet_id"])),
        *diff_abilities(_abilities(con, old), _abilities(con, new)),
        *diff_keywords(_keywords(con, old), _keywords(con, new)),
        *diff_points(_points(con, old), _points(con, new)),
    ]
    return UnitDiff(old, new, tuple(changes))


def _select(con: duckdb.DuckDBPyConnection, sql: str, sheet: dict[str, Any]) -> list[dict[str, Any]]:
    cursor = con.execute(sql, [sheet["datasheet_id"]])
    names = [d[0] for d in cursor.description]
    return [dict(zip(names, row)) for row in cursor.fetchall()]


def _profiles(con, sheet):
    return _select(con, "SELECT * FROM model_profiles WHERE datasheet_id = ? ORDER BY line", sheet)


def _abilities(con, sheet):
    return _select(con, "SELECT kind, name, parameter, text FROM abilities WHERE datasheet_id = ? "
                        "ORDER BY kind, name", sheet)


def _keywords(con, sheet):
    return _select(con, "SELECT keyword, is_faction_keyword FROM keywords WHERE datasheet_id = ? "
                        "ORDER BY is_faction_keyword, keyword", sheet)


def _points(con, sheet):
    return _select(con, "SELECT * FROM unit_costs WHERE datasheet_id = ? ORDER BY line", sheet)


def pair_by(old: Iterable[dict], new: Iterable[dict], key: Callable[[dict], object],
            by_order: bool = False) -> tuple[list[tuple[dict, dict]], list[dict], list[dict]]:
    """Rows of two lists lined up by ``key``: (pairs, only in ``old``, only in ``new``), each in
    the order of its list. A key that several rows of one list share pairs them in order. With
    ``by_order``, rows left over on both sides are then paired in order (a unit's one model line
    named after the unit in one edition and after its model in the other).

    >>> pairs, gone, added = pair_by([{"n": "a"}, {"n": "b"}], [{"n": "b"}, {"n": "c"}], lambda r: r["n"])
    >>> pairs, gone, added
    ([({'n': 'b'}, {'n': 'b'})], [{'n': 'a'}], [{'n': 'c'}])
    >>> pair_by([{"n": "a"}], [{"n": "c"}], lambda r: r["n"], by_order=True)[0]
    [({'n': 'a'}, {'n': 'c'})]
    """
    waiting: dict[object, list[dict]] = {}
    for row in new:
        waiting.setdefault(key(row), []).append(row)
    pairs, gone = [], []
    for row in old:
        matches = waiting.get(key(row))
        if matches:
            pairs.append((row, matches.pop(0)))
        else:
            gone.append(row)
    taken = {id(b) for _, b in pairs}
    added = [row for row in new if id(row) not in taken]
    if by_order:
        pairs.extend(zip(gone, added))
        n = min(len(gone), len(added))
        gone, added = gone[n:], added[n:]
    return pairs, gone, added


def _model_key(row: dict) -> str:
    return name_key(row["model_name"], ignore_plural=True)


def diff_characteristics(old: list[dict], new: list[dict]) -> list[Change]:
    """Per model line (lined up by model name, then in order): each characteristic whose printed
    value differs (``T 3 -> 4``), a renamed line (field ``name``), and lines added or removed.

    >>> line = dict(model_name="Battle Sister", move_text='6"', move_inches=6, toughness=3, save=3,
    ...             invulnerable_save=6, invulnerable_save_scope=None, wounds=1, leadership=7,
    ...             objective_control=2)
    >>> [(c.item, c.field, c.old, c.new) for c in diff_characteristics([line], [{**line, "toughness": 4}])]
    [('Battle Sister', 'T', '3', '4')]
    """
    pairs, gone, added = pair_by(old, new, _model_key, by_order=True)
    changes = []
    for a, b in pairs:
        if _model_key(a) != _model_key(b):
            changes.append(Change("characteristics", b["model_name"], "changed", "name",
                                  a["model_name"], b["model_name"]))
        for label, show in CHARACTERISTICS:
            if show(a) != show(b):
                changes.append(Change("characteristics", b["model_name"], "changed", label, show(a), show(b)))
    changes += [Change("characteristics", r["model_name"], "removed", None, _profile_line(r), None) for r in gone]
    changes += [Change("characteristics", r["model_name"], "added", None, None, _profile_line(r)) for r in added]
    return changes


def _profile_line(row: dict) -> str:
    return " ".join(f"{label} {show(row) or '-'}" for label, show in CHARACTERISTICS)


def _weapon_key(row: dict) -> tuple:
    return (name_key(row["weapon_name"], ignore_plural=True), row["kind"], name_key(row["profile_name"] or ""))


def _weapon_item(row: dict) -> str:
    profile = f" - {row['profile_name']}" if row["profile_name"] else ""
    return f"{row['weapon_name']}{profile} ({row['kind']})"


def _weapon_value(label: str, row: dict) -> object:
    value = row[label]
    return as_read(value or "", "list") if label == "abilities" else _text(value)


def diff_weapons(old: list[dict], new: list[dict]) -> list[Change]:
    """Weapon profiles (rows of ``query.weapons``) lined up by weapon name, melee or ranged, and
    profile name: each field that differs (``S 6 -> 7``; abilities as a list, in any order),
    and profiles added or removed (with their profile line).

    >>> bolter = {"weapon_name": "Boltgun", "profile_name": "", "kind": "ranged", "range": '24"', "A": "1",
    ...           "skill": "3+", "S": 4, "AP": 0, "D": "1", "abilities": "RAPID FIRE 1"}
    >>> [(c.item, c.field, c.old, c.new) for c in diff_weapons([bolter], [{**bolter, "abilities": "Rapid fire 1, assault"}])]
    [('Boltgun (ranged)', 'abilities', 'RAPID FIRE 1', 'Rapid fire 1, assault')]
    """
    pairs, gone, added = pair_by(old, new, _weapon_key)
    changes = []
    for a, b in pairs:
        for label, column in WEAPON_FIELDS:
            if _weapon_value(column, a) != _weapon_value(column, b):
                changes.append(Change("weapons", _weapon_item(b), "changed", label,
                                      _text(a[column]), _text(b[column])))
    changes += [Change("weapons", _weapon_item(r), "removed", None, _weapon_line(r), None) for r in gone]
    changes += [Change("weapons", _weapon_item(r), "added", None, None, _weapon_line(r)) for r in added]
    return changes


def _weapon_line(row: dict) -> str:
    """A weapon profile on one line, as printed.

    >>> _weapon_line({"kind": "ranged", "range": '12"', "A": "D6", "skill": "N/A", "S": 4, "AP": 0, "D": "1",
    ...               "abilities": "ignores cover, torrent"})
    '12" A D6 BS N/A S 4 AP 0 D 1 [ignores cover, torrent]'
    """
    skill = "WS" if row["kind"] == "melee" else "BS"
    line = f"{row['range']} A {row['A']} {skill} {row['skill']} S {row['S']} AP {row['AP']} D {row['D']}"
    return line + (f" [{row['abilities']}]" if row["abilities"] else "")


def diff_abilities(old: list[dict], new: list[dict]) -> list[Change]:
    """Abilities lined up by name (and kind, where a name has several): a changed kind,
    parameter or wording (compared as read; ``marked`` shows the words), abilities added or
    removed (with their text, or the parameter of a named rule such as ``Deadly Demise D3``).

    >>> old = [{"kind": "datasheet", "name": "Vigil", "parameter": None, "text": "Stays under your control."}]
    >>> new = [{"kind": "datasheet", "name": "Vigil", "parameter": None, "text": "Remains under your control."}]
    >>> [(c.item, c.field, c.marked) for c in diff_abilities(old, new)]
    [('Vigil (datasheet)', 'text', '[-Stays-] {+Remains+} under your control.')]
    """
    from pipeline.rules import mark_ops, word_diff

    by_kind, gone_kind, added_kind = pair_by(old, new, lambda r: (name_key(r["name"]), r["kind"]))
    renamed, gone, added = pair_by(gone_kind, added_kind, lambda r: name_key(r["name"]))
    changes = []
    for a, b in by_kind + renamed:
        item = f"{b['name']} ({b['kind']})"
        if a["kind"] != b["kind"]:
            changes.append(Change("abilities", item, "changed", "kind", a["kind"], b["kind"]))
        if (a["parameter"] or None) != (b["parameter"] or None):
            changes.append(Change("abilities", item, "changed", "parameter", a["parameter"], b["parameter"]))
        if a["text"] and b["text"] and as_read(a["text"]) != as_read(b["text"]):
            changes.append(Change("abilities", item, "changed", "text", a["text"], b["text"],
                                  mark_ops(word_diff(a["text"], b["text"]))))
        elif bool(a["text"]) != bool(b["text"]):
            changes.append(Change("abilities", item, "changed", "text", a["text"], b["text"]))
    changes += [Change("abilities", f"{r['name']} ({r['kind']})", "removed", None, _ability_text(r), None)
                for r in gone]
    changes += [Change("abilities", f"{r['name']} ({r['kind']})", "added", None, None, _ability_text(r))
                for r in added]
    return changes


def _ability_text(row: dict) -> str:
    return row["text"] or " ".join(filter(None, (row["name"], row["parameter"])))


def diff_keywords(old: list[dict], new: list[dict]) -> list[Change]:
    """Keywords (and faction keywords) added or removed, by ``name_key``; a keyword that became
    or stopped being a faction keyword (field ``faction keyword``).

    >>> kw = lambda k, f=False: {"keyword": k, "is_faction_keyword": f}
    >>> [(c.item, c.change) for c in diff_keywords([kw("Grenades"), kw("Infantry")], [kw("INFANTRY"), kw("Smoke")])]
    [('Grenades', 'removed'), ('Smoke', 'added')]
    """
    pairs, gone, added = pair_by(old, new, lambda r: name_key(r["keyword"]))
    changes = [Change("keywords", b["keyword"], "changed", "faction keyword",
                      str(a["is_faction_keyword"]).lower(), str(b["is_faction_keyword"]).lower())
               for a, b in pairs if a["is_faction_keyword"] != b["is_faction_keyword"]]
    changes += [Change("keywords", r["keyword"], "removed", None, _keyword_kind(r), None) for r in gone]
    changes += [Change("keywords", r["keyword"], "added", None, None, _keyword_kind(r)) for r in added]
    return changes


def _keyword_kind(row: dict) -> str:
    return "faction keyword" if row["is_faction_keyword"] else "keyword"


def _points_item(row: dict) -> str:
    item = row["description"]
    if row.get("from_unit", 1) != 1:
        item += f" (from unit {row['from_unit']})"
    if row.get("condition"):
        item += f" ({row['condition']})"
    return item


def diff_points(old: list[dict], new: list[dict]) -> list[Change]:
    """Points lines lined up by what they are for (the unit size as read, the Nth unit, the
    condition): a cost that changed (``10 models: 105 -> 110``), lines added or removed.

    >>> line = {"description": "10 models", "cost_points": 105, "is_addon": False, "from_unit": 1, "condition": None}
    >>> [(c.item, c.old, c.new) for c in diff_points([line], [{**line, "cost_points": 110}])]
    [('10 models', '105', '110')]
    """
    def key(r: dict) -> tuple:
        return as_read(r["description"]), r.get("from_unit", 1), r.get("condition")

    def cost(r: dict) -> str:
        return f"+{r['cost_points']}" if r["is_addon"] else str(r["cost_points"])

    pairs, gone, added = pair_by(old, new, key)
    changes = [Change("points", _points_item(b), "changed", "points", cost(a), cost(b))
               for a, b in pairs if cost(a) != cost(b)]
    changes += [Change("points", _points_item(r), "removed", None, cost(r), None) for r in gone]
    changes += [Change("points", _points_item(r), "added", None, None, cost(r)) for r in added]
    return changes
