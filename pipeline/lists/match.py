"""Matching an army list's units, models, weapons and Enhancements to the database.

Every comparison goes through ``name_score`` (the project's ``name_key``: case, accents,
quotes, hyphens, British and American spelling, and the plural for models and weapons; then
the similarity of what is left). A name is matched when its best candidate scores at least
``MIN_SCORE``; otherwise it is named as unmatched, never dropped.

Units are looked for among the datasheets of the list's edition (matched play before Combat
Patrol; the list's faction first); models among the datasheet's model lines and profiles;
weapons and wargear among the datasheet's weapon profiles and wargear abilities. French lists
print unit, model and weapon names in English (the Warhammer app's French export does), so
only labels are translated (``labels.toml``); a French unit name would be unmatched.
"""

from __future__ import annotations

import difflib
import re
from collections import Counter
from dataclasses import dataclass
from functools import lru_cache
from typing import Any

import duckdb

from pipeline.lists.model import ArmyList, Attachment, ListedUnit, ModelLine, Wargear
from pipeline.normalise.names import name_key

#: The lowest score of a match: below it a name is unmatched.
MIN_SCORE = 0.8


def name_score(printed: str, candidate: str) -> float:
    """How well a printed name matches a candidate, from 0 to 1: 1 for the same name to a
    reader (``name_key``), 0.95 for the same name but for the plural, 0.9 when the words of one
    are all in the other (``Crisis Shas’vre`` in ``Crisis Sunforge Shas’vre``), else the
    similarity of the two keys (difflib's ratio, rounded to two places).

    >>> name_score("Thunder Hammer", "Thunder hammer"), name_score("Pathfinders", "Pathfinder")
    (1.0, 0.95)
    >>> name_score("Crisis Shas’vre", "Crisis Sunforge Shas'vre")
    0.9
    >>> name_score("Khorne Berserkers", "Khorne Berzerkers")
    0.94
    """
    a, b = name_key(printed), name_key(candidate)
    if a == b:
        return 1.0
    a, b = name_key(printed, ignore_plural=True), name_key(candidate, ignore_plural=True)
    if a == b:
        return 0.95
    wa, wb = set(a.split()), set(b.split())
    if wa and wb and (wa <= wb or wb <= wa) and min(len(wa), len(wb)) >= 2:
        return 0.9
    return round(difflib.SequenceMatcher(None, a, b).ratio(), 2)


#: The score of a name whose words are all in one candidate's, or the candidate's all in its,
#: when no candidate scores ``MIN_SCORE`` and no other candidate is so related.
WORDS_SCORE = 0.85


def _words(name: str) -> set[str]:
    return set(name_key(name, ignore_plural=True).split())


def only_related(printed: str, candidates: list[str]) -> str | None:
    """The one candidate whose words are all words of ``printed`` or which has all of
    ``printed``'s words (``Primaris Captain`` and ``Captain``, ``Rhino`` and ``Chaos Rhino``,
    ``Jakhal chainblades`` and ``Chainblades``); None when none or several are.

    >>> only_related("Primaris Captain", ["Captain", "Captain Sicarius", "Lieutenant"])
    'Captain'
    >>> only_related("Rhino", ["Chaos Rhino", "Sororitas Rhino"]) is None
    True
    """
    words = _words(printed)
    related = [c for c in candidates if words and _words(c) and (_words(c) <= words or words <= _words(c))]
    return related[0] if len(set(related)) == 1 else None


@lru_cache(maxsize=65536)
def _keys(name: str) -> tuple[str, str, frozenset[str], Counter]:
    plural = name_key(name, ignore_plural=True)
    return name_key(name), plural, frozenset(plural.split()), Counter(plural)


def could_score(printed: str, candidate: str) -> bool:
    """False only when ``name_score(printed, candidate)`` is below ``MIN_SCORE`` for sure
    (neither key the same, nor the words of one in the other, and difflib's quick upper bounds
    below it): a cheap test before the full comparison, the same result.

    >>> could_score("Khorne Berserkers", "Khorne Berzerkers"), could_score("Rhino", "Leman Russ Battle Tank")
    (True, False)
    """
    a, b = _keys(printed), _keys(candidate)
    if a[0] == b[0] or a[1] == b[1] or (a[2] and b[2] and (a[2] <= b[2] or b[2] <= a[2])):
        return True
    total = len(a[1]) + len(b[1])  # difflib's real_quick_ratio and quick_ratio, without its set-up
    if not total or 2 * min(len(a[1]), len(b[1])) < MIN_SCORE * total:
        return False
    return 2 * sum((a[3] & b[3]).values()) >= MIN_SCORE * total


def _best(printed: str, candidates: list[str]) -> tuple[str | None, float]:
    """The best candidate and its score (None, 0.0 when there is none); below ``MIN_SCORE``,
    the only candidate related by words (``only_related``) at ``WORDS_SCORE``."""
    scored = sorted(((name_score(printed, c), c) for c in candidates), key=lambda p: -p[0])
    if scored and scored[0][0] < MIN_SCORE:
        related = only_related(printed, candidates)
        if related is not None:
            return related, WORDS_SCORE
    return (scored[0][1], scored[0][0]) if scored else (None, 0.0)


@dataclass(frozen=True)
class MatchedWargear:
    """A printed wargear item and what it is on the datasheet: ``kind`` ``weapon`` (a weapon
    profile, ``matched`` its name), ``wargear`` (a wargear ability) or None (unmatched)."""

    printed: str
    count: int
    matched: str | None
    kind: str | None
    score: float


@dataclass(frozen=True)
class MatchedModel:
    """A model line and the datasheet model it is (``matched`` None: unmatched)."""

    printed: str
    count: int
    matched: str | None
    score: float
    wargear: tuple[MatchedWargear, ...]
    line: int


@dataclass(frozen=True)
class MatchedUnit:
    """A listed unit and its datasheet (``datasheet_id`` None: unmatched)."""

    unit: ListedUnit
    datasheet_id: str | None
    datasheet_name: str | None
    score: float
    models: tuple[MatchedModel, ...]
    wargear: tuple[MatchedWargear, ...]
    enhancements: tuple[tuple[str, str | None, float], ...]  # (printed, matched, score)


@dataclass(frozen=True)
class MatchedAttachment:
    """An Attached unit with whether the database's leader links allow each Leader to lead
    that Bodyguard (``allowed`` None: a unit is unmatched; ``can_lead``: the units it can)."""

    leader: int
    bodyguard: int
    allowed: bool | None
    can_lead: tuple[str, ...]


@dataclass(frozen=True)
class MatchedList:
    """A list matched to the database: ``edition`` used, ``faction_id`` found (None: not found),
    the units in list order, the Attached units, ``unmatched`` (every name not found, as
    ``unit 'X' (line 12)``) and ``notes``."""

    army: ArmyList
    edition: int
    faction_id: str | None
    units: tuple[MatchedUnit, ...]
    attachments: tuple[MatchedAttachment, ...]
    unmatched: tuple[str, ...]
    notes: tuple[str, ...]


def _rows(con: duckdb.DuckDBPyConnection, sql: str, params: list[Any]) -> list[dict[str, Any]]:
    cursor = con.execute(sql, params)
    names = [d[0] for d in cursor.description]
    return [dict(zip(names, row)) for row in cursor.fetchall()]


def _faction_id(con: duckdb.DuckDBPyConnection, faction: str | None) -> str | None:
    if not faction:
        return None
    from pipeline.lists.text import _labels

    rows = con.execute("SELECT faction_id, name FROM factions").fetchall()
    aliases = {name_key(k): v for k, v in _labels()["faction_aliases"].items()}
    parts = [faction] + [p.strip() for p in faction.split(" - ")]
    parts = [aliases.get(name_key(p), p) for p in parts]
    for part in parts:
        for fid, fname in rows:
            if name_key(fname) == name_key(part) or fid == part:
                return fid
    return None


class _Sheets:
    """The datasheets of one edition and their parts, read once per list."""

    def __init__(self, con: duckdb.DuckDBPyConnection, edition: int) -> None:
        self.con = con
        self.edition = edition
        self.sheets = _rows(con, "SELECT datasheet_id, name, faction_id, game_mode FROM datasheets "
                                 "WHERE edition = ? ORDER BY (game_mode = 'combat-patrol'), datasheet_id", [edition])
        self._models: dict[str, list[str]] = {}
        self._gear: dict[str, tuple] = {}
        self.profiles: dict[str, set] = {}

    def find(self, name: str, faction_id: str | None, faction: str | None) -> tuple[dict | None, float]:
        names = [name]
        if faction:  # ListForge prints "World Eaters Forgefiend"
            for part in [faction] + faction.split(" - "):
                if name_key(name).startswith(name_key(part) + " "):
                    names.append(name[len(part):].strip())
        best: tuple[int, float, int, dict | None] = (0, 0.0, 0, None)
        for candidate in names:
            for order, sheet in enumerate(self.sheets):
                if not could_score(candidate, sheet["name"]):
                    continue
                score = name_score(candidate, sheet["name"])
                if score < MIN_SCORE:
                    continue
                # the list's own faction first (ListForge's "World Eaters Rhino" is their Chaos
                # Rhino, not another faction's Rhino), then the score, then matched play
                key = (sheet["faction_id"] == faction_id, score, sheet["game_mode"] != "combat-patrol")
                if best[3] is None or key > best[:3]:
                    best = (*key, sheet)  # type: ignore[assignment]
        if best[3] is not None and (best[0] or faction_id is None):
            return best[3], best[1]
        # no name of the faction scores MIN_SCORE: its one datasheet related by words
        # ("Primaris Captain": "Captain"), before another faction's datasheet of the name
        own = [s for s in self.sheets if faction_id is None or s["faction_id"] == faction_id]
        for candidate in names:
            related = only_related(candidate, list(dict.fromkeys(s["name"] for s in own)))
            if related is not None:
                sheet = next(s for s in own if s["name"] == related)  # matched play first (the order read)
                return sheet, WORDS_SCORE
        return best[3], best[1]

    def models(self, datasheet_id: str) -> list[str]:
        """The model names of a datasheet (read once per datasheet: a list repeats units)."""
        if datasheet_id not in self._models:
            self._models[datasheet_id] = self._read_models(datasheet_id)
        return self._models[datasheet_id]

    def _read_models(self, datasheet_id: str) -> list[str]:
        rows = self.con.execute(
            "SELECT model_name FROM unit_composition WHERE datasheet_id = ? UNION ALL "
            "SELECT model_name FROM model_profiles WHERE datasheet_id = ?", [datasheet_id, datasheet_id]).fetchall()
        return list(dict.fromkeys(r[0] for r in rows if r[0]))

    def gear(self, datasheet_id: str) -> tuple[list[str], list[str]]:
        """The weapon names and wargear names of a datasheet, and its weapon profiles in
        ``self.profiles`` (read once per datasheet)."""
        if datasheet_id not in self._gear:
            self._gear[datasheet_id] = (self._read_gear(datasheet_id), self.profiles)
        (weapons, wargear), self.profiles = self._gear[datasheet_id]
        return weapons, wargear

    def _read_gear(self, datasheet_id: str) -> tuple[list[str], list[str]]:
        weapons = [r[0] for r in self.con.execute(
            "SELECT DISTINCT weapon_name FROM weapon_profiles WHERE datasheet_id = ? ORDER BY 1", [datasheet_id]).fetchall()]
        self.profiles = {}
        for row in self.con.execute(
                "SELECT weapon_name, CASE WHEN is_melee THEN 'melee' ELSE CAST(range_inches AS VARCHAR) END, "
                "attacks_text, skill, strength, armour_penetration, damage_text FROM weapon_profiles "
                "WHERE datasheet_id = ?", [datasheet_id]).fetchall():
            self.profiles.setdefault(row[0], set()).add(tuple(str(v).lower() for v in row[1:]))
        wargear = [r[0] for r in self.con.execute(
            "SELECT DISTINCT name FROM abilities WHERE datasheet_id = ? AND kind = 'wargear' ORDER BY 1",
            [datasheet_id]).fetchall()]
        return weapons, wargear


#: The score of a weapon matched by its printed characteristics, not its name.
PROFILE_SCORE = 0.85


def profile_key(printed: tuple[str, ...]) -> tuple[str, ...] | None:
    """Printed characteristics (range, A, BS/WS, S, AP, D) as the database's columns compare:
    ``12"`` is ``12``, ``2+`` is ``2``; None when they are not six.

    >>> profile_key(('Melee', '3', '4+', '6', '0', '1')), profile_key(('24"', '2', '2+', '4', '-1', '2'))
    (('melee', '3', '4', '6', '0', '1'), ('24', '2', '2', '4', '-1', '2'))
    """
    if len(printed) != 6 or not all(printed):
        return None
    rng, attacks, skill, strength, ap, damage = (p.strip().lower() for p in printed)
    return (rng.rstrip('"').strip(), attacks, skill.rstrip("+"), strength, ap.lstrip("+"), damage)


def _by_profile(item: Wargear, profiles: dict[str, set]) -> MatchedWargear | None:
    """An item whose printed characteristics are one weapon profile's of the datasheet
    (BattleScribe's ``Armoured Tracks`` on an Impulsor whose sheet calls that profile
    ``Armoured hull``); of several such weapons the closest name."""
    key = profile_key(item.profile)
    same = [name for name, keys in profiles.items() if key is not None and key in keys]
    if not same:
        return None
    best = max(same, key=lambda name: (name_score(item.name, name), name))
    return MatchedWargear(item.name, item.count, best, "weapon", PROFILE_SCORE)


def _match_gear(item: Wargear, weapons: list[str], wargear: list[str],
                profiles: dict[str, set] | None = None) -> list[MatchedWargear]:
    """A printed item as weapons or wargear; an item that matches nothing whole but whose parts
    joined by ``and`` / ``&`` each do (War Organ's ``lacerator & daemonic claw``) is its parts;
    ``A with B`` that matches nothing whole is ``A`` when ``A`` matches (``B`` describes it); a
    name that matches nothing but printed characteristics that are a weapon's is that weapon
    (``profiles``: weapon name -> its ``profile_key``s)."""
    weapon, w_score = _best(item.name, weapons)
    gear, g_score = _best(item.name, wargear)
    head, with_, _ = item.name.partition(" with ")
    if with_ and head.strip() and max(w_score, g_score) < 0.95:
        # "Gun drone with twin pulse carbine" is the drone, its gun described (not a Pulse carbine,
        # whose words it has): its head, when the head matches
        found = _match_gear(Wargear(head.strip(), item.count), weapons, wargear)
        if all(m.kind for m in found):
            return [MatchedWargear(item.name, m.count, m.matched, m.kind, m.score) for m in found]
    if max(w_score, g_score) >= MIN_SCORE:
        if w_score >= g_score:
            return [MatchedWargear(item.name, item.count, weapon, "weapon", w_score)]
        return [MatchedWargear(item.name, item.count, gear, "wargear", g_score)]
    by_profile = _by_profile(item, profiles or {})
    if by_profile is not None:
        return [by_profile]
    head, with_, _ = item.name.partition(" with ")
    if with_ and head.strip():  # War Organ's "Gun drone with twin pulse carbine": the drone, its gun described
        found = _match_gear(Wargear(head.strip(), item.count), weapons, wargear)
        if all(m.kind for m in found):
            return [MatchedWargear(item.name, m.count, m.matched, m.kind, m.score) for m in found]
    parts = [p.strip() for p in re.split(r"\s+(?:and|&)\s+|\s+with\s+", item.name) if p.strip()]
    if len(parts) > 1:
        matched = [_match_gear(Wargear(p, item.count), weapons, wargear) for p in parts]
        if all(m[0].kind for m in matched):
            return [m for ms in matched for m in ms]
    return [MatchedWargear(item.name, item.count, None, None, max(w_score, g_score))]


def _match_models(unit: ListedUnit, sheet_models: list[str], weapons: list[str], wargear: list[str],
                  unit_score: float, profiles: dict[str, set] | None = None) -> tuple[MatchedModel, ...]:
    out = []
    for model in unit.models:
        matched, score = _best(model.name, sheet_models)
        if score < MIN_SCORE and " w/ " in model.name:  # "Khorne Berserker w/ alternate weapons"
            matched, score = _best(model.name.split(" w/ ")[0], sheet_models)
        if score < MIN_SCORE and len(sheet_models) == 1 and len(unit.models) == 1:
            matched, score = sheet_models[0], unit_score  # the unit's one model, printed by the unit's name
        if score < MIN_SCORE:
            matched = None
        gear = tuple(m for item in model.wargear for m in _match_gear(item, weapons, wargear, profiles))
        out.append(MatchedModel(model.name, model.count, matched, score, gear, model.line))
    return tuple(out)


def _enhancements_among_gear(models: tuple[MatchedModel, ...], unit_gear: tuple[MatchedWargear, ...],
                             names: list[str]):
    """Items that match no weapon or wargear but are an Enhancement's name (but for the plural;
    New Recruit's markdown prints ``Favoured of Khorne`` among the weapons): taken out of the
    wargear, as Enhancements (printed, matched, score)."""
    found: list[tuple[str, str | None, float]] = []
    by_key = {}
    for n in names:
        by_key.setdefault(name_key(n, ignore_plural=True), n)

    def keep(item: MatchedWargear) -> bool:
        match = None if item.kind is not None else by_key.get(name_key(item.printed, ignore_plural=True))
        if match is None:
            return True
        found.append((item.printed, match, name_score(item.printed, match)))
        return False

    models = tuple(MatchedModel(m.printed, m.count, m.matched, m.score, tuple(w for w in m.wargear if keep(w)), m.line)
                   for m in models)
    return models, tuple(w for w in unit_gear if keep(w)), found


def match_list(con: duckdb.DuckDBPyConnection, army: ArmyList, edition: int) -> MatchedList:
    """Match every unit of ``army`` to a datasheet of ``edition`` (module docstring).

    Returns a ``MatchedList``; nothing is raised for a name that matches nothing (it is in
    ``unmatched``)."""
    sheets = _Sheets(con, edition)
    faction_id = _faction_id(con, army.faction)
    notes: list[str] = []
    if army.faction and faction_id is None:
        notes.append(f"faction {army.faction!r} is not a faction of the database; units are matched in every faction")
    enhancement_names = [r[0] for r in con.execute("SELECT DISTINCT name FROM enhancements").fetchall()]
    units: list[MatchedUnit] = []
    unmatched: list[str] = []
    for unit in army.units:
        sheet, score = sheets.find(unit.name, faction_id, army.faction)
        if sheet is None:
            unmatched.append(f"unit {unit.name!r} (line {unit.line})")
            units.append(MatchedUnit(unit, None, None, score, tuple(
                MatchedModel(m.name, m.count, None, 0.0, tuple(MatchedWargear(w.name, w.count, None, None, 0.0)
                                                               for w in m.wargear), m.line) for m in unit.models),
                tuple(MatchedWargear(w.name, w.count, None, None, 0.0) for w in unit.wargear),
                tuple((e.name, None, 0.0) for e in unit.enhancements)))
            continue
        weapons, wargear = sheets.gear(sheet["datasheet_id"])
        models = _match_models(unit, sheets.models(sheet["datasheet_id"]), weapons, wargear, score, sheets.profiles)
        unit_gear = tuple(m for item in unit.wargear for m in _match_gear(item, weapons, wargear, sheets.profiles))
        models, unit_gear, printed_enhancements = _enhancements_among_gear(models, unit_gear, enhancement_names)
        enhancements = list(printed_enhancements)
        for e in unit.enhancements:
            found, e_score = _best(e.name, enhancement_names)
            enhancements.append((e.name, found if e_score >= MIN_SCORE else None, e_score))
            if e_score < MIN_SCORE:
                unmatched.append(f"enhancement {e.name!r} of {unit.name!r} (line {unit.line})")
        for m in models:
            if m.matched is None:
                unmatched.append(f"model {m.printed!r} of {unit.name!r} (line {m.line})")
            for w in m.wargear:
                if w.kind is None:
                    unmatched.append(f"wargear {w.printed!r} of {m.printed!r} in {unit.name!r} (line {m.line})")
        for w in unit_gear:
            if w.kind is None:
                unmatched.append(f"wargear {w.printed!r} of {unit.name!r} (line {unit.line})")
        units.append(MatchedUnit(unit, sheet["datasheet_id"], sheet["name"], score, models, unit_gear,
                                 tuple(enhancements)))
    return MatchedList(army, edition, faction_id, tuple(units), _attachments(con, army, units),
                       tuple(unmatched), tuple(notes))


def _can_lead(con: duckdb.DuckDBPyConnection, datasheet_id: str) -> list[tuple[str, str]]:
    """(bodyguard datasheet id, its name) of every unit the datasheet's leader links let it lead."""
    return con.execute(
        "SELECT l.bodyguard_datasheet_id, coalesce(d.name, l.bodyguard_name) FROM leader_links l "
        "LEFT JOIN datasheets d ON d.datasheet_id = l.bodyguard_datasheet_id "
        "WHERE l.leader_datasheet_id = ? ORDER BY 2", [datasheet_id]).fetchall()


def _decide_roles(con: duckdb.DuckDBPyConnection, attachment: Attachment,
                  units: list[MatchedUnit]) -> tuple[tuple[int, ...], int]:
    """The Leaders and the Bodyguard of an Attached unit whose list prints no roles: the one
    unit every other unit of it can lead by the leader links; else the importer's guess."""
    members = (*attachment.leaders, attachment.bodyguard)
    sheets = {i: units[i].datasheet_id for i in members}
    if None in sheets.values():
        return attachment.leaders, attachment.bodyguard
    leads = {i: {r[0] for r in _can_lead(con, sheets[i])} for i in members}
    guards = [g for g in members if all(sheets[g] in leads[i] for i in members if i != g)]
    if len(guards) != 1:
        return attachment.leaders, attachment.bodyguard
    return tuple(i for i in members if i != guards[0]), guards[0]


def _attachments(con: duckdb.DuckDBPyConnection, army: ArmyList, units: list[MatchedUnit]) -> tuple[MatchedAttachment, ...]:
    out = []
    for attachment in army.attachments:
        leaders, bodyguard = attachment.leaders, attachment.bodyguard
        if not attachment.roles_printed:
            leaders, bodyguard = _decide_roles(con, attachment, units)
        guard = units[bodyguard]
        for leader_index in leaders:
            leader = units[leader_index]
            if leader.datasheet_id is None or guard.datasheet_id is None:
                out.append(MatchedAttachment(leader_index, bodyguard, None, ()))
                continue
            rows = _can_lead(con, leader.datasheet_id)
            allowed = any(r[0] == guard.datasheet_id for r in rows) if rows else None
            out.append(MatchedAttachment(leader_index, bodyguard, allowed,
                                         tuple(dict.fromkeys(r[1] for r in rows if r[1]))))
    return tuple(out)
