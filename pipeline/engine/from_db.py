"""Engine inputs from the database: an attacking datasheet's weapons, a target datasheet.

The attacker's default weapons are its loadout for the phase: each ``wargear_loadouts`` line
says how many models carry which weapons ("2 shuriken cannons" is two per model); a model with
Pistols and other ranged weapons fires the other ranged weapons (Pistol, 10th edition). A unit
whose loadout has no weapon of the phase fires nothing by default: the caller names the weapons.
The target's invulnerable save follows its scope (ranged or melee attacks only, one model type).
"""

from __future__ import annotations

import re
from collections import Counter
from typing import TYPE_CHECKING, Literal, Sequence

from pipeline import limits
from pipeline.engine.profiles import Context, Target, Weapon
from pipeline.errors import InputError, NotFoundError
from pipeline.frozen_record import FrozenRecord
from pipeline.limits import limit_error
from pipeline.normalise.characteristics import make_dice
from pipeline.normalise import composition
from pipeline.normalise.names import name_key
from pipeline.normalise.text import slug
from pipeline.normalise.weapon_abilities import ParsedWeaponAbility
from pipeline.query import _rows, _suggest

if TYPE_CHECKING:
    import duckdb

Phase = Literal["shooting", "fight"]


class DatasheetRows(FrozenRecord):
    """The rows of one datasheet a target is read from (``target_from_datasheet``), each in the
    order the readers take them: ``model_profiles`` (dicts, by line), ``composition`` ((model_name,
    min_models, max_models, text) by line), ``unit_costs`` (descriptions), ``keywords``,
    ``ability_names``, ``feel_no_pain`` (dicts, by ability name and scope) and the invulnerable
    save notes of its model lines (``data_flags`` details by model line)."""

    model_profiles: list[dict]
    composition: list[tuple]
    unit_costs: list[str]
    keywords: list[str]
    ability_names: list[str]
    feel_no_pain: list[dict]
    invulnerable_save_notes: dict[int, list[str]]


def read_datasheet_rows(con: duckdb.DuckDBPyConnection, datasheet_ids: Sequence[str] | None = None,
                        edition: int | None = None) -> dict[str, DatasheetRows]:
    """The ``DatasheetRows`` of the datasheets ``datasheet_ids`` (or of every datasheet of
    ``edition``), by datasheet_id: one query per table, however many datasheets (a datasheet
    without rows in a table gets an empty list)."""
    if datasheet_ids is not None:
        where, params = "datasheet_id IN (SELECT unnest(?::VARCHAR[]))", [list(datasheet_ids)]
    else:
        where, params = "datasheet_id IN (SELECT datasheet_id FROM datasheets WHERE edition = ?)", [edition]
        datasheet_ids = [i for (i,) in con.execute(f"SELECT datasheet_id FROM datasheets WHERE {where}", params).fetchall()]
    parts: dict[str, dict] = {i: {"model_profiles": [], "composition": [], "unit_costs": [], "keywords": [],
                                  "ability_names": [], "feel_no_pain": [], "invulnerable_save_notes": {}}
                              for i in datasheet_ids}
    for row in _rows(con.execute(f"SELECT * FROM model_profiles WHERE {where} ORDER BY datasheet_id, line", params)):
        parts[row["datasheet_id"]]["model_profiles"].append(row)
    for ds, *rest in con.execute("SELECT datasheet_id, model_name, min_models, max_models, text FROM unit_composition "
                                 f"WHERE {where} ORDER BY datasheet_id, line", params).fetchall():
        parts[ds]["composition"].append(tuple(rest))
    for table, column, key in (("unit_costs", "description", "unit_costs"), ("keywords", "keyword", "keywords"),
                               ("abilities", "name", "ability_names")):
        for ds, value in con.execute(f"SELECT datasheet_id, {column} FROM {table} WHERE {where}", params).fetchall():
            parts[ds][key].append(value)
    for row in _rows(con.execute(f"SELECT * FROM feel_no_pain WHERE {where} ORDER BY datasheet_id, ability_name, scope",
                                 params)):
        parts[row["datasheet_id"]]["feel_no_pain"].append(row)
    for key, detail in con.execute(
            "SELECT entity_key, detail FROM data_flags WHERE table_name = 'model_profiles' "
            "AND flag = 'invulnerable_save_note'").fetchall():
        ds, _, line = key.rpartition("|")
        if ds in parts and line.isdigit():
            parts[ds]["invulnerable_save_notes"].setdefault(int(line), []).append(detail)
    return {ds: DatasheetRows(**part) for ds, part in parts.items()}


def _abilities(con: duckdb.DuckDBPyConnection, datasheet_id: str) -> dict[tuple, list[ParsedWeaponAbility]]:
    out: dict[tuple, list[ParsedWeaponAbility]] = {}
    for r in _rows(con.execute(
        "SELECT * FROM weapon_abilities WHERE datasheet_id = ? ORDER BY position", [datasheet_id]
    )):
        value = None
        if r["value_text"] is not None:
            value = make_dice(r["value_dice_count"], r["value_dice_sides"], r["value_modifier"])
        key = (r["weapon_name"], r["is_melee"], r["profile_name"])
        out.setdefault(key, []).append(ParsedWeaponAbility(
            r["name"], r["target_keyword"], r["threshold"], value, r["condition"], r["raw_text"], ()))
    return out


def model_count(con: duckdb.DuckDBPyConnection, datasheet: dict,
                rows: "DatasheetRows | None" = None) -> tuple[int | None, str]:
    """The unit's smallest legal size and where it came from (``normalise.composition.unit_size``).

    In order: the model count the datasheet prints (``(10 MODELS)``), the smallest ``N models``
    points line (``unit_costs``), the sum of the minimums of the composition's first alternative;
    otherwise None, and the second value says what is missing (never 1 assumed). ``rows``: the
    datasheet's rows read before (``read_datasheet_rows``) instead of a query.
    """
    if rows is None:
        ds_id = datasheet["datasheet_id"]
        points = [d for (d,) in con.execute("SELECT description FROM unit_costs WHERE datasheet_id = ?", [ds_id]).fetchall()]
        lines = [(text, name, low) for name, low, text in con.execute(
            "SELECT model_name, min_models, text FROM unit_composition WHERE datasheet_id = ? ORDER BY line",
            [ds_id]).fetchall()]
    else:
        points, lines = rows.unit_costs, [(text, name, low) for name, low, _, text in rows.composition]
    return composition.unit_size(datasheet.get("starting_strength"), points, lines)


def no_model_count(datasheet: dict, why: str, option: str) -> InputError:
    """The error for a unit with no model count in the database when its size is needed:
    names the missing value (``why``, from ``model_count``), its gap and the option to give."""
    return InputError(
        f"{datasheet['name']} ({datasheet['datasheet_id']}) has no model count in the database ({why}; "
        f"its data_gaps row: table datasheets, field starting_strength); give the number of models with {option}"
    )


def _models(n: int) -> str:
    """``"1 model"``, ``"5 models"``.

    >>> _models(1), _models(0)
    ('1 model', '0 models')
    """
    return f"{n} model{'' if n == 1 else 's'}"


def _model_key(name: str) -> str:
    """A model name compared singular or plural, word by word ("Boyz" and "Boy", "Sisters
    Novitiate" and "Sister Novitiate", "Guardsmen" and "Guardsman"); a last word "model" is
    left out ("Every Grenadier model").

    >>> _model_key("Sisters Novitiate") == _model_key("Sister Novitiate")
    True
    >>> _model_key("Boyz") == _model_key("Boy"), _model_key("Grenadier model")
    (True, 'grenadier')
    """
    words = slug(name).split("-")
    if len(words) > 1 and words[-1] in ("model", "models"):
        words = words[:-1]
    out = []
    for w in words:
        if w.endswith("men"):
            w = w[:-3] + "man"
        elif w.endswith("z") and len(w) > 3:
            w = w[:-1]
        elif w.endswith("s") and not w.endswith("ss"):
            w = w[:-1]
        out.append(w)
    return "-".join(out)


def _model_type_counts(con: duckdb.DuckDBPyConnection, datasheet_id: str, unit_size: int,
                       rows: "DatasheetRows | None" = None) -> dict[str, int]:
    """Number of each model type in a unit of ``unit_size`` models, keyed by ``_model_key``.

    The composition's first option (up to an ``OR`` line or a model type named again) gives each
    type its minimum (``9 Kasrkin Troopers``); models the minimums leave out of ``unit_size`` go
    to the types in order, each up to its maximum (Fortis Kill Team: 1 Sergeant and 2-9
    Intercessors at 10 models -> 9 Intercessors).
    """
    counts: dict[str, int] = {}
    highs: dict[str, int | None] = {}
    lines = rows.composition if rows is not None else con.execute(
        "SELECT model_name, min_models, max_models, text FROM unit_composition WHERE datasheet_id = ? ORDER BY line",
        [datasheet_id]).fetchall()
    for name, low, high, text in lines:
        if text.strip().upper() == "OR":
            break
        if not name or low is None:
            continue
        key = _model_key(name)
        if key in counts:
            break
        counts[key], highs[key] = low, high
    spare = unit_size - sum(counts.values())
    for key in counts:
        if spare <= 0:
            break
        room = spare if highs[key] is None else max(0, min(spare, highs[key] - counts[key]))
        counts[key] += room
        spare -= room
    return counts


def _line_models(models_text: str, model_count: int | None, types: dict[str, int]) -> int | None:
    """How many models a loadout line speaks of, or None when it names models the composition
    does not have (or "every model", which is whatever models the other lines leave).

    ``6 Battle Sisters`` -> 6; ``Every Kasrkin Trooper`` / ``Each Retributor`` -> that type's
    number in the composition (``_model_type_counts``); ``This model``, ``The Sister Superior``,
    ``One ...`` -> 1; ``The Kill Team Sergeant and every Kill Team Intercessor`` -> the sum.

    >>> _line_models("Every Boy", None, {"boss-nob": 1, "boy": 9})
    9
    >>> _line_models("The Sergeant and every Intercessor", None, {"sergeant": 1, "intercessor": 4})
    5
    >>> _line_models("Every Proctor-Exactant and Exaction Vigilant", None, {"proctor-exactant": 1,
    ...              "exaction-vigilant": 9})
    10
    >>> _line_models("Every Blue Horror added to this unit", None, {"pink-horror": 10}) is None
    True
    """
    if model_count is not None:
        return model_count
    if re.fullmatch(r"(?i)(this|the)\s+unit", models_text.strip()):
        return None
    total = 0
    every = False
    for part in re.split(r"(?i)\s+and\s+", models_text.strip()):
        m = re.match(r"(?i)(every|each)\s+(.+)", part.strip())
        if m:
            every, who = True, m.group(2)
        elif every and not re.match(r"(?i)(the|this|one|an?|\d+)\b", part.strip()):
            who = part.strip()  # "Every Proctor-Exactant and Exaction Vigilant"
        else:
            every = False
            total += 1
            continue
        if re.match(r"(?i)(other\s+)?models?\b", who):
            return None
        n = types.get(_model_key(who))
        if n is None:
            return None
        total += n
    return total


def line_model_counts(con: duckdb.DuckDBPyConnection, datasheet: dict, unit_size: int) -> tuple[list[int], list[str]]:
    """The number of models of each ``wargear_loadouts`` line of ``datasheet`` (in line order) at
    ``unit_size`` models, and notes on the counts that could not be read as printed.

    Each line is counted by ``_line_models``. A line "additionally equipped" adds equipment to
    models another line counts, so it takes none of the unit's models; the other lines together
    never count more than ``unit_size`` models: a line that would is cut to the models left, a
    line naming no model of the composition ("Every Blue Horror added ... using the Split
    ability") or "every model" next to other lines gets the models the other lines leave, and
    models no line speaks of are named (they fire nothing by default).
    """
    name = datasheet["name"]
    rows = con.execute(
        "SELECT models, model_count, text FROM wargear_loadouts WHERE datasheet_id = ? ORDER BY line",
        [datasheet["datasheet_id"]]).fetchall()
    types = _model_type_counts(con, datasheet["datasheet_id"], unit_size)
    extra = [bool(re.search(r"(?i)\badditionally\b", raw or "")) for _, _, raw in rows]
    counts = [_line_models(m, c, types) for m, c, _ in rows]
    known = sum(n for n, x in zip(counts, extra) if n is not None and not x)
    notes: list[str] = []
    used = 0
    out: list[int] = []
    for (models, _, _), n, x in zip(rows, counts, extra):
        if n is None:
            n = max(0, unit_size - known) if any(not e for e, c in zip(extra, counts) if c is not None) \
                else unit_size
            if not re.match(r"(?i)(every|each)\s+models?\b", models.strip()) or n != unit_size:
                notes.append(f"{name}: loadout line {models!r} matches no model of the unit's composition; "
                             f"counted as {n} model{'s' if n != 1 else ''} (the models no other line covers)")
        if x:
            out.append(n)
            continue
        if used + n > unit_size:
            cut = max(0, unit_size - used)
            notes.append(f"{name}: loadout line {models!r} counted as {cut} model{'s' if cut != 1 else ''}, "
                         f"not {n}: the lines before it already count {used} of the unit's {unit_size}")
            n = cut
        used += n
        out.append(n)
    if rows and used < unit_size:
        left = unit_size - used
        notes.append(f"{name}: {left} of its {unit_size} models have no loadout line, so fire nothing by "
                     "default; choose their weapons with --weapon" if left != 1 else
                     f"{name}: 1 of its {unit_size} models has no loadout line, so fires nothing by "
                     "default; choose its weapons with --weapon")
    return out, notes


#: Number words a loadout item may start with ("two shuriken cannons").
_NUMBER_WORDS = {"one": 1, "two": 2, "three": 3, "four": 4, "five": 5, "six": 6, "seven": 7, "eight": 8,
                 "nine": 9, "ten": 10, "eleven": 11, "twelve": 12}
_COUNTED_ITEM = re.compile(
    r"(?i)\s*(?:(\d+)\s*[x×]\s+|(\d+|" + "|".join(_NUMBER_WORDS) + r")\s+)(\S.*?)\s*")
#: Cyrillic letters that look like Latin ones, found inside weapon names of the export
#: ("Сombi-bolter" with a Cyrillic С); matched as the Latin letter.
_CONFUSABLES = str.maketrans("АВСЕНКМОРТХаеорсух", "ABCEHKMOPTXaeopcyx")
#: Loadout items that name no equipment.
_NOTHING = {"nothing", "none", "-"}


def loadout_item(text: str) -> tuple[int, str]:
    """The count and the weapon name of one loadout item (the count is 1 when none is printed).

    >>> loadout_item("2 godhammer lascannons")
    (2, 'godhammer lascannons')
    >>> loadout_item("two shuriken cannons")
    (2, 'shuriken cannons')
    >>> loadout_item("3x heavy bolters")
    (3, 'heavy bolters')
    >>> loadout_item(" tentaclids ")
    (1, 'tentaclids')
    """
    m = _COUNTED_ITEM.fullmatch(text)
    if not m:
        return 1, text.strip()
    raw = m.group(1) or m.group(2)
    return (int(raw) if raw.isdigit() else _NUMBER_WORDS[raw.lower()]), m.group(3)


def _name_keys(name: str) -> tuple[str, ...]:
    """The keys under which a printed name may match a weapon profile name: as printed, then
    singular forms of its last word, then its plural (a loadout says "2 lascannons" of the
    profile "Lascannon", or "2 Godhammer lascannon" of the profile "Godhammer lascannons").

    >>> _name_keys("godhammer lascannons")
    ('godhammer-lascannons', 'godhammer-lascannon')
    >>> _name_keys("stinger salvoes")
    ('stinger-salvoes', 'stinger-salvoe', 'stinger-salvo')
    >>> _name_keys("Hornet pulse laser")
    ('hornet-pulse-laser', 'hornet-pulse-lasers')
    >>> _name_keys("Сombi-bolters")[1]  # a Cyrillic С reads as C
    'combi-bolter'
    """
    key = slug(name.translate(_CONFUSABLES))
    keys = [key]
    if key.endswith("ies"):
        keys.append(key[:-3] + "y")
    if key.endswith("s"):
        keys.append(key[:-1])
        if key.endswith("es"):
            keys.append(key[:-2])
    else:
        keys.append(key + "s")
    return tuple(dict.fromkeys(keys))


def _weapon_key(name: str) -> str:
    return slug(name.translate(_CONFUSABLES))


def match_weapon(name: str, weapon_names: Sequence[str] | set[str]) -> str | None:
    """The weapon profile name that a printed name (a loadout item or ``--weapon``) means, or
    None: equal as printed (case, apostrophes and punctuation aside), else in the singular or
    the plural.

    >>> match_weapon("lascannons", ["Lascannon", "Twin lascannon"])
    'Lascannon'
    >>> match_weapon("twin power fist", ["Twin power fists"])
    'Twin power fists'
    >>> match_weapon("combi-weapon", ["Combi-bolter"]) is None
    True
    """
    by_key = {_weapon_key(n): n for n in weapon_names}
    return next((by_key[k] for k in _name_keys(name) if k in by_key), None)


class Loadout(FrozenRecord):
    """A datasheet's default weapons in one phase, read from its loadout lines.

    ``fired``: weapon name -> how many of it the unit fires (the models of each line times the
    count of the item, "2 shuriken cannons" -> 2 per model), in the order of the weapon names;
    ``per_model``: weapon name -> how many one model carries (the largest count over the lines);
    ``unmatched``: items naming neither a weapon profile of the datasheet (either phase) nor one
    of its abilities (wargear such as a storm shield): a weapon whose profile row is missing or
    was rejected at build, or a name the source misspelt (left out when the closest profile
    name is a weapon of the other phase only); ``withheld``: (Pistol, unmatched item)
    for Pistols not fired in the shooting phase because their bearer also carries an unmatched
    item, which may be the ranged weapon it fires instead (Pistol, 10th edition); ``items``:
    every line as printed, ``"<models>: <equipment>"``, for messages; ``notes``: lines whose
    model count was not read as printed.
    """

    fired: dict[str, int]
    per_model: dict[str, int]
    unmatched: tuple[str, ...]
    items: tuple[str, ...]
    withheld: tuple[tuple[str, str], ...] = ()
    notes: tuple[str, ...] = ()  # model counts of lines not read as printed (``line_model_counts``)
    #: fight phase: (line as printed, models, {melee weapon: count per model}) for lines whose models
    #: carry several melee weapons without [EXTRA ATTACKS]; each model fights with one of them
    alternatives: tuple[tuple[str, int, dict[str, int]], ...] = ()


def read_loadout(con: duckdb.DuckDBPyConnection, datasheet: dict, phase: Phase, unit_size: int) -> Loadout:
    """The default weapons of ``datasheet`` in ``phase`` at ``unit_size`` models (``Loadout``).

    Each ``wargear_loadouts`` line counts its models (``_line_models``); each item its weapons
    (``loadout_item``), matched to a profile by ``match_weapon``. In the shooting phase a model
    with Pistols and other ranged weapons fires the other ranged weapons (Pistol, 10th edition);
    an item that matches no profile counts as such another weapon, so a Pistol is never fired in
    place of a weapon whose profile is missing (``Loadout.withheld``). In the fight phase a model
    fights with one melee weapon plus those with [EXTRA ATTACKS] (Fight phase, Making Attacks,
    10th edition): a line with several other melee weapons goes to ``Loadout.alternatives``.
    """
    ds_id = datasheet["datasheet_id"]
    is_melee = phase == "fight"
    kinds: dict[str, set[bool]] = {}
    for name, melee in con.execute(
        "SELECT DISTINCT weapon_name, is_melee FROM weapon_profiles WHERE datasheet_id = ? ORDER BY weapon_name",
        [ds_id]).fetchall():
        kinds.setdefault(name, set()).add(melee)
    abilities = {_weapon_key(n) for (n,) in con.execute(
        "SELECT DISTINCT name FROM abilities WHERE datasheet_id = ?", [ds_id]).fetchall()}
    pistols = {n for (n,) in con.execute(
        "SELECT DISTINCT weapon_name FROM weapon_abilities WHERE datasheet_id = ? AND name = 'PISTOL'",
        [ds_id]).fetchall()}
    extra_attacks = {n for (n,) in con.execute(
        "SELECT DISTINCT weapon_name FROM weapon_abilities WHERE datasheet_id = ? AND name = 'EXTRA ATTACKS' "
        "AND is_melee", [ds_id]).fetchall()}
    alternatives: list[tuple[str, int, dict[str, int]]] = []
    line_counts, count_notes = line_model_counts(con, datasheet, unit_size)
    fired: Counter[str] = Counter()
    per_model: dict[str, int] = {}
    unmatched: list[str] = []
    withheld: list[tuple[str, str]] = []
    items: list[str] = []
    for line, n in zip(_rows(con.execute(
        "SELECT models, model_count, equipment FROM wargear_loadouts WHERE datasheet_id = ? ORDER BY line", [ds_id]
    )), line_counts):
        items.append(f"{line['models']}: {line['equipment']}")
        carried: dict[str, int] = {}
        line_unmatched: list[str] = []
        for item in re.split(r"[;,]", line["equipment"]):
            if not item.strip() or item.strip().lower() in _NOTHING:
                continue
            count, name = loadout_item(item)
            weapon = match_weapon(name, kinds)
            if weapon is None:
                if not any(k in abilities for k in _name_keys(name)) and is_melee in _closest_kinds(name, kinds):
                    line_unmatched.append(item.strip())
                continue
            if is_melee in kinds[weapon]:
                carried[weapon] = carried.get(weapon, 0) + count
        unmatched += line_unmatched
        if phase == "shooting":
            if line_unmatched and carried and all(w in pistols for w in carried):
                withheld += [(w, line_unmatched[0]) for w in carried]
                carried = {}
            elif any(w not in pistols for w in carried):
                carried = {w: c for w, c in carried.items() if w not in pistols}
        if phase == "fight":
            for weapon, count in carried.items():
                per_model[weapon] = max(per_model.get(weapon, 0), count)
            one_of = {w: c for w, c in carried.items() if w not in extra_attacks}
            if len(one_of) > 1:
                alternatives.append((f"{line['models']}: {line['equipment']}", n, one_of))
                carried = {w: c for w, c in carried.items() if w in extra_attacks}
        for weapon, count in carried.items():
            fired[weapon] += n * count
            per_model[weapon] = max(per_model.get(weapon, 0), count)
    order = list(kinds)
    return Loadout(
        fired={w: fired[w] for w in sorted(fired, key=order.index) if fired[w] > 0},
        per_model=per_model, unmatched=tuple(dict.fromkeys(unmatched)), items=tuple(items),
        withheld=tuple(dict.fromkeys(withheld)), notes=tuple(count_notes), alternatives=tuple(alternatives),
    )


def _closest_kinds(name: str, kinds: dict[str, set[bool]]) -> set[bool]:
    """``is_melee`` values of the weapon profile whose name is closest to an unmatched ``name``
    ({True} for "crushing teeth and jaws" next to "Crushing teeth and claws"); both when none is
    close."""
    import difflib  # for an unmatched name alone

    by_key = {_weapon_key(n): n for n in kinds}
    close = difflib.get_close_matches(_weapon_key(name), list(by_key), n=1, cutoff=0.6)
    return kinds[by_key[close[0]]] if close else {False, True}


def _unmatched_note(con: duckdb.DuckDBPyConnection, datasheet: dict, item: str, weapon_names: Sequence[str]) -> str:
    """Says that loadout item ``item`` fires nothing, with close weapon names and the rejected rows
    of the datasheet's source that name it (a weapon profile rejected at build)."""
    _, name = loadout_item(item)
    text = (f"{datasheet['name']}: loadout item {item!r} matches no weapon profile of the datasheet, "
            "so it is not fired")
    hint = _suggest(name, list(weapon_names))
    if hint:
        text += f" (close names: {hint}; choose one with --weapon)"
    keys = _name_keys(name)
    ext = datasheet.get("external_id")
    for r in _rows(con.execute(
        "SELECT table_name, locator, reason, raw_text FROM rejects WHERE source_id = ? "
        "AND (lower(table_name) LIKE '%weapon%' OR lower(table_name) LIKE '%wargear%') ORDER BY locator",
        [datasheet["source_id"]]
    )):
        if ext and not r["raw_text"].startswith(ext + "|"):
            continue
        if any(f"-{k}-" in f"-{_weapon_key(r['raw_text'])}-" for k in keys):
            text += f"; its profile row was rejected at build ({r['locator']}: {r['reason']})"
            break
    return text


def _uniform_loadout(con: duckdb.DuckDBPyConnection, datasheet_id: str) -> bool:
    """True when every loadout line is about every model (so a unit size scales all of it)."""
    lines = con.execute("SELECT models FROM wargear_loadouts WHERE datasheet_id = ?", [datasheet_id]).fetchall()
    return all(re.match(r"(?i)(every|each)\s+models?\b", m) for (m,) in lines)


def _split_choice(name: str) -> tuple[str, str | None]:
    """``"Plasma pistol (supercharge)"`` or ``"plasma pistol: supercharge"`` -> name, profile."""
    m = re.fullmatch(r"\s*(.+?)\s*(?:\((.+)\)|:\s*(.+))\s*", name)
    if m:
        return m.group(1), (m.group(2) or m.group(3)).strip()
    return name.strip(), None


def _no_default_weapons(datasheet: dict, kind: str, loadout: Loadout, weapon_names: Sequence[str]) -> InputError:
    """The error for a unit whose loadout fires no weapon of the phase (never every profile)."""
    if loadout.items:
        why = f"its loadout ({'; '.join(loadout.items)}) has no {kind} weapon it fires"
        if loadout.unmatched:
            why += "; items with no weapon profile: " + ", ".join(repr(i) for i in loadout.unmatched)
        if loadout.withheld:
            why += "; Pistols not fired in place of such an item: " + ", ".join(dict.fromkeys(
                w for w, _ in loadout.withheld))
    else:
        why = "the database has no loadout for it"
    return InputError(
        f"{datasheet['name']} fires no {kind} weapon by default: {why}; choose the weapons with --weapon, "
        f"the number fired first when not every model has it (--weapon \"2 {weapon_names[0].lower()}\"), "
        f"or with --models N; its {kind} weapons: {', '.join(weapon_names)}"
    )


def attacker_weapons(
    con: duckdb.DuckDBPyConnection,
    datasheet: dict,
    phase: Phase,
    weapon_names: Sequence[str] = (),
    models: int | None = None,
    notes: list[str] | None = None,
    target: Target | None = None,
    context: Context | None = None,
) -> list[Weapon]:
    """The weapons a datasheet fires in a phase; ``Weapon.models`` is how many of each are fired
    (models times the weapons each carries).

    Without ``weapon_names`` the unit fires its loadout for the phase (``read_loadout``) at its
    smallest size (``model_count``); "2 shuriken cannons" on every model fires 2 per model.
    ``models`` sets the unit's size only when every loadout line is about every model; otherwise
    it needs ``weapon_names``. A loadout with no weapon of the phase is an ``InputError`` asking
    for ``--weapon`` (the unit never fires every profile it has by default); loadout items that
    match no weapon profile are named in ``notes``.

    ``weapon_names`` picks weapons by name (case-insensitive, singular or plural), each with an
    optional count first (``"2 heavy bolters"``: that many are fired) and an optional profile
    (``"Plasma pistol (supercharge)"``; else the first profile is fired, with a note). Without a
    count, a named weapon is fired by ``models`` models (times the number one model carries in
    the loadout), else as often as the loadout fires it, else (an optional weapon, not in the
    loadout) by 1 model, said in ``notes``.
    Raises ``NotFoundError`` (with close names) for a weapon or profile the datasheet does not
    have, and ``InputError`` when the datasheet has no weapon for the phase, or no model count in
    the database (``model_count``) while neither ``models`` nor a number with every weapon is
    given (never 1 model assumed).

    In the fight phase each model fights with one melee weapon plus any with [EXTRA ATTACKS]
    (10th edition): where a loadout line gives its models several, the one with the highest
    expected damage against ``target`` (in ``context``) is used, said in ``notes`` (the first
    when no target is given); ``weapon_names`` overrides the choice.
    """
    notes = notes if notes is not None else []
    if models is not None and models < 1:
        raise InputError(f"--models {models}: a unit has at least 1 model")
    if models is not None and models > limits.MAX_MODELS_PER_WEAPON:
        raise limit_error(f"--models {models}", f"at most {limits.MAX_MODELS_PER_WEAPON} models fire one weapon",
                          "give a smaller --models")
    if models is not None and not weapon_names and not _uniform_loadout(con, datasheet["datasheet_id"]):
        raise InputError(
            f"--models {models}: the loadout of {datasheet['name']} gives different models different "
            "weapons; choose the weapons to fire with --weapon (each fired by --models models)"
        )
    is_melee = phase == "fight"
    kind = "melee" if is_melee else "ranged"
    profiles = _rows(con.execute(
        "SELECT * FROM weapon_profiles WHERE datasheet_id = ? AND is_melee = ? ORDER BY weapon_name, profile_name",
        [datasheet["datasheet_id"], is_melee]))
    if not profiles:
        raise InputError(
            f"{datasheet['name']} has no {kind} weapons; "
            f"try the {'shooting' if is_melee else 'fight'} phase (--phase) or another unit"
        )
    by_weapon: dict[str, list[dict]] = {}
    for p in profiles:
        by_weapon.setdefault(p["weapon_name"], []).append(p)
    size, how = model_count(con, datasheet)
    unit_size = models if models is not None else size
    if unit_size is None:
        if not weapon_names or not all(_COUNTED_ITEM.fullmatch(w) for w in weapon_names):
            raise no_model_count(datasheet, how, '--models N (or give each --weapon its number: --weapon "2 boltguns")')
        # every weapon is fired as often as its number says: the unit's size and loadout are not needed
        unit_size, loadout = 0, Loadout(fired={}, per_model={}, unmatched=(), items=())
    else:
        if models is None and how != "printed model count":
            notes.append(f"{datasheet['name']}: {_models(unit_size)} ({how})")
        loadout = read_loadout(con, datasheet, phase, unit_size)
    all_weapons = [n for (n,) in con.execute(
        "SELECT DISTINCT weapon_name FROM weapon_profiles WHERE datasheet_id = ? ORDER BY 1",
        [datasheet["datasheet_id"]]).fetchall()]
    if not weapon_names:
        notes.extend(loadout.notes)
        for item in loadout.unmatched:
            notes.append(_unmatched_note(con, datasheet, item, all_weapons))
        for pistol, item in loadout.withheld:
            notes.append(f"{datasheet['name']}: {pistol} not fired: its bearer also carries {item!r}, which "
                         "may be the ranged weapon it fires instead (Pistol); choose with --weapon")
    chosen: list[tuple[dict, int]] = []  # (profile, number fired)
    named_profiles: set[int] = set()
    if weapon_names:
        for asked in weapon_names:
            count, asked_name = loadout_item(asked) if _COUNTED_ITEM.fullmatch(asked) else (None, asked)
            name, profile = _split_choice(asked_name)
            match = match_weapon(name, list(by_weapon))
            if match is None and profile is not None:
                match = match_weapon(asked_name, list(by_weapon))
                profile = None
            if match is None:
                hint = _suggest(name, sorted(by_weapon))
                raise NotFoundError(
                    f"{datasheet['name']} has no {kind} weapon {asked!r}; "
                    + (f"close names: {hint}; " if hint else "")
                    + f"its {kind} weapons: {', '.join(sorted(by_weapon))}"
                )
            options = by_weapon[match]
            picked = options[0]
            if profile is not None:
                named = [p for p in options if slug(p["profile_name"]) == slug(profile)]
                if not named:
                    names = [p["profile_name"] for p in options if p["profile_name"]]
                    raise NotFoundError(
                        f"{match} has no profile {profile!r}; "
                        + (f"its profiles: {', '.join(names)}" if names else "it has a single profile")
                    )
                picked = named[0]
                named_profiles.add(id(picked))
            if count is not None:
                if count < 1:
                    raise InputError(f"--weapon {asked!r}: the number of weapons fired is at least 1")
                if count > limits.MAX_MODELS_PER_WEAPON:
                    raise limit_error(f"--weapon {asked!r}", f"at most {limits.MAX_MODELS_PER_WEAPON} of one "
                                      "weapon are fired", "give a smaller number")
                n = count
            elif models is not None:
                n = models * loadout.per_model.get(match, 1)
            elif match in loadout.fired or any(match in o for _, _, o in loadout.alternatives):
                n = loadout.fired.get(match, 0) + sum(k * o[match] for _, k, o in loadout.alternatives if match in o)
            else:
                n = 1
                if unit_size > 1:
                    notes.append(
                        f"{match}: not in the default loadout of {datasheet['name']}, so fired by 1 model; "
                        f"give the number first (--weapon \"2 {match.lower()}\") or use --models N"
                    )
            chosen.append((picked, n))
    abilities = _abilities(con, datasheet["datasheet_id"])
    if not weapon_names:
        if not loadout.fired and not loadout.alternatives:
            raise _no_default_weapons(datasheet, kind, loadout, sorted(by_weapon))
        fired = dict(loadout.fired)
        for line, n, options in loadout.alternatives:
            best = _best_melee_weapon(datasheet, line, n, options, by_weapon, abilities, target, context, notes)
            fired[best] = fired.get(best, 0) + n * options[best]
        chosen = [(by_weapon[w][0], n) for w, n in sorted(fired.items(), key=lambda x: list(by_weapon).index(x[0]))
                  if n > 0]
    weapons: list[Weapon] = []
    no_strength = [(p, n) for p, n in chosen if not p["strength"]]
    for p, n in no_strength:
        why = _no_strength(con, datasheet, p)
        if weapon_names:
            raise InputError(why + "; the engine needs a fixed Strength: choose another weapon")
        notes.append(why + ": not fired")
    chosen = [(p, n) for p, n in chosen if p["strength"]]
    if not chosen:
        raise _no_default_weapons(datasheet, kind, loadout, sorted(by_weapon))
    for p, n in chosen:
        others = [o["profile_name"] for o in by_weapon[p["weapon_name"]] if o is not p]
        if others and id(p) not in named_profiles:
            notes.append(
                f"{p['weapon_name']}: fired with its {p['profile_name']!r} profile; its other profiles "
                f"({', '.join(others)}) are chosen with --weapon \"{p['weapon_name']} ({others[0]})\""
            )
        weapons.append(_weapon(p, n, abilities))
    return weapons


def _no_strength(con: duckdb.DuckDBPyConnection, datasheet: dict, p: dict) -> str:
    """Why a weapon profile has no Strength: its ``strength_not_fixed`` flag (a dice roll such as
    ``S 2D6``, not stored), else the source gave none."""
    key = f"{datasheet['datasheet_id']}|{p['weapon_name']}|{'melee' if p['is_melee'] else 'ranged'}|{p['profile_name']}"
    flag = con.execute(
        "SELECT detail FROM data_flags WHERE table_name = 'weapon_profiles' AND entity_key = ? "
        "AND flag = 'strength_not_fixed'", [key]).fetchone()
    name = p["weapon_name"] + (f" ({p['profile_name']})" if p["profile_name"] else "")
    if flag:
        m = re.match(r"S='(.+?)'", flag[0])
        value = m.group(1) if m else flag[0]
        return (f"{datasheet['name']}: {name} has Strength {value}, a dice roll the database does not store "
                f"(flag strength_not_fixed at {p['locator']})")
    return f"{datasheet['name']}: {name} has no Strength in the database ({p['locator']})"


def _weapon(p: dict, n: int, abilities: dict[tuple, list[ParsedWeaponAbility]]) -> Weapon:
    """The engine weapon of a ``weapon_profiles`` row, fired ``n`` times."""
    return Weapon.from_abilities(
        name=p["weapon_name"] + (f" ({p['profile_name']})" if p["profile_name"] else ""),
        attacks=make_dice(p["attacks_dice_count"], p["attacks_dice_sides"], p["attacks_modifier"]),
        skill=p["skill"], strength=p["strength"] or 0,
        armour_penetration=p["armour_penetration"],
        damage=make_dice(p["damage_dice_count"], p["damage_dice_sides"], p["damage_modifier"]),
        abilities=abilities.get((p["weapon_name"], p["is_melee"], p["profile_name"]), []),
        is_melee=p["is_melee"], models=n,
    )


def _best_melee_weapon(datasheet: dict, line: str, n: int, options: dict[str, int],
                       by_weapon: dict[str, list[dict]], abilities: dict[tuple, list[ParsedWeaponAbility]],
                       target: Target | None, context: Context | None, notes: list[str]) -> str:
    """The melee weapon the ``n`` models of a loadout line fight with, out of ``options`` (weapon ->
    count per model): the highest expected damage against ``target`` (each weapon's first
    profile); the first when there is no target. The choice goes to ``notes``."""
    from pipeline.engine import exact

    names = list(options)
    who = _models(n)
    if target is None:
        notes.append(f"{datasheet['name']}: the {who} of {line!r} fight with one melee weapon (10th edition): "
                     f"{names[0]} (the first; no target to compare them); choose with --weapon")
        return names[0]
    expected = {}
    for w in names:
        if (by_weapon[w][0]["strength"] or 0) < 1:
            continue
        result = exact.resolve([_weapon(by_weapon[w][0], n * options[w], abilities)], target, context)
        expected[w] = result.damage.mean
    if not expected:
        return names[0]
    best = max(expected, key=lambda w: (expected[w], -names.index(w)))
    others = ", ".join(f"{w} {expected[w]:.4f}" for w in names if w != best and w in expected)
    notes.append(f"{datasheet['name']}: the {who} of {line!r} fight with one melee weapon each (10th edition, "
                 f"except [EXTRA ATTACKS] weapons): {best}, the highest expected damage against {target.name} "
                 f"({expected[best]:.4f}; {others}); choose another with --weapon")
    return best


#: Scopes of an invulnerable save (``model_profiles.invulnerable_save_scope``) that limit it to
#: one kind of attack: the phase whose attacks it applies against.
_SCOPE_PHASE: dict[str, Phase] = {"ranged": "shooting", "melee": "fight"}
_ONLY_MODEL = re.compile(r"(?i)\s*(.+?)\s+(?:models?\s+)?only\.?\s*")
_EXCLUDING_MODEL = re.compile(r"(?i)\s*excluding\s+(?:the\s+)?(.+?)\.?\s*")
_SEE_ABILITY = re.compile(r"(?i)\s*see\s+(.+?)\s*(?:ability)?\s*(?:\(below\))?\.?\s*")


def _same_model(a: str, b: str) -> bool:
    return slug(a).rstrip("s") == slug(b).rstrip("s")


def invulnerable_save_against(line: dict, phase: Phase) -> tuple[int | None, str | None]:
    """The invulnerable save of a model line against the attacks of ``phase``, and a note when
    its scope (``invulnerable_save_scope``) decided it.

    Scopes, from the datasheets' footnotes: None (every attack); ``ranged`` ("* Ranged attacks
    only": shooting phase only) and ``melee`` (fight phase only); "<model> only." /
    "<model> models only." (applies when ``line`` is that model's profile, which the target
    gives to all its models); "Excluding the <model>." (applies unless ``line`` is that model);
    "See <ability> (below)" (conditional on an ability the engine does not model: not applied).
    Any other scope is not applied, and the note says so.

    >>> invulnerable_save_against({"model_name": "Rangers", "invulnerable_save": 5,
    ...                            "invulnerable_save_scope": "ranged"}, "fight")[0] is None
    True
    >>> invulnerable_save_against({"model_name": "Rangers", "invulnerable_save": 5,
    ...                            "invulnerable_save_scope": "ranged"}, "shooting")
    (5, None)
    >>> invulnerable_save_against({"model_name": "IBRAM GAUNT", "invulnerable_save": 5,
    ...                            "invulnerable_save_scope": "Ibram Gaunt only."}, "shooting")[0]
    5
    """
    value, scope, model = line.get("invulnerable_save"), line.get("invulnerable_save_scope"), line["model_name"]
    if value is None or scope is None:
        return value, None
    if scope in _SCOPE_PHASE:
        if _SCOPE_PHASE[scope] == phase:
            return value, None
        return None, (f"its {value}+ invulnerable save is against {scope} attacks only, "
                      f"so it does not apply in the {phase} phase")
    if m := _SEE_ABILITY.fullmatch(scope):
        return None, (f"its {value}+ invulnerable save depends on {m.group(1)} ({scope!r}), which the engine "
                      f"does not model: not applied (give the target inline with inv{value}+ if it holds)")
    if m := _ONLY_MODEL.fullmatch(scope):
        if _same_model(m.group(1), model):
            return value, (f"its {value}+ invulnerable save is for {m.group(1)} only ({scope!r}); "
                           f"the target gives every model the {model} profile")
        return None, f"its {value}+ invulnerable save is for {m.group(1)} only ({scope!r}), not {model}: not applied"
    if m := _EXCLUDING_MODEL.fullmatch(scope):
        if _same_model(m.group(1), model):
            return None, f"its {value}+ invulnerable save excludes {model} ({scope!r}): not applied"
        return value, f"its {value}+ invulnerable save applies to the {model} models ({scope!r})"
    return None, f"its {value}+ invulnerable save has a scope the engine cannot read ({scope!r}): not applied"


def _usable_lines(con: duckdb.DuckDBPyConnection, datasheet: dict,
                  rows: "DatasheetRows | None" = None) -> tuple[list[dict], list[dict]]:
    """A datasheet's model lines and those with characteristics (T and W); raises ``InputError``
    when none has them (the source lost them), naming an inline profile to use instead."""
    lines = rows.model_profiles if rows is not None else _rows(con.execute(
        "SELECT * FROM model_profiles WHERE datasheet_id = ? ORDER BY line", [datasheet["datasheet_id"]]))
    usable = [ln for ln in lines if ln["toughness"] and ln["wounds"]]
    if not usable:
        raise InputError(
            f"{datasheet['name']} ({datasheet['datasheet_id']}) has no model characteristics in the "
            "database (its source lost them); give the target as an inline profile, "
            'e.g. --target "T3 Sv3+ W1 x10 INFANTRY"'
        )
    return lines, usable


def target_from_datasheet(
    con: duckdb.DuckDBPyConnection,
    datasheet: dict,
    models: int | None = None,
    phase: Phase = "shooting",
    notes: list[str] | None = None,
    rows: "DatasheetRows | None" = None,
) -> Target:
    """A target profile from a datasheet: the first (Bodyguard) model line's T, Sv, InSv and W,
    attacked in ``phase``.

    The invulnerable save follows its scope (``invulnerable_save_against``: a save against
    ranged attacks only is not used in the fight phase); notes about it go to ``notes``.
    Raises ``InputError`` when the database has no characteristics for it (the source lost
    them), naming an inline profile to use instead, and when it has no model count and ``models``
    is not given (``--target-models``; never 1 model assumed). ``rows``: the datasheet's rows
    read before (``read_datasheet_rows``, one query per table for many datasheets).
    """
    notes = notes if notes is not None else []
    lines, usable = _usable_lines(con, datasheet, rows)
    count = models
    if count is None:
        count, how = model_count(con, datasheet, rows)
        if count is None:
            raise no_model_count(datasheet, how, "--target-models N")
    first = _bodyguard_line(con, datasheet, usable, count, notes, rows)
    ds_id = datasheet["datasheet_id"]
    keywords = frozenset(k.upper() for k in (rows.keywords if rows is not None else [k for (k,) in con.execute(
        "SELECT keyword FROM keywords WHERE datasheet_id = ?", [ds_id]).fetchall()]))
    fnp = feel_no_pain(con, datasheet, first, notes, rows)
    stealth = any(slug(name) == "stealth" for name in (rows.ability_names if rows is not None else [n for (n,) in con.execute(
        "SELECT name FROM abilities WHERE datasheet_id = ?", [ds_id]).fetchall()]))
    invuln, why = invulnerable_save_against(first, phase)
    if why:
        notes.append(f"target {datasheet['name']}: {why}")
    invuln = _invulnerable_save_note(con, datasheet, first, phase, invuln, notes, rows)
    ignored = tuple(_profile_text(ln) for ln in usable if _characteristics(ln) != _characteristics(first))
    return Target(
        toughness=first["toughness"], save=first["save"], wounds=first["wounds"], models=count,
        invulnerable_save=invuln, feel_no_pain=fnp["all"], feel_no_pain_mortal=fnp["mortal-wounds"],
        feel_no_pain_psychic=fnp["psychic"],
        keywords=keywords, stealth=stealth, name=datasheet["name"],
        model_profile=_profile_text(first) if ignored else None, ignored_model_profiles=ignored,
    )


def feel_no_pain(con: duckdb.DuckDBPyConnection, datasheet: dict, line: dict,
                 notes: list[str], rows: "DatasheetRows | None" = None) -> dict[str, int | None]:
    """The Feel No Pain of ``line`` by scope (``all``, ``mortal-wounds``, ``psychic``; roll
    targets, None for none), from the ``feel_no_pain`` rows of its datasheet: each row for every
    model or for this line's model, the best per scope. A row with a condition (a Leader's unit,
    an Aura) is not applied by default; ``notes`` says so, with the condition.
    """
    best: dict[str, int | None] = {"all": None, "mortal-wounds": None, "psychic": None}
    found = rows.feel_no_pain if rows is not None else _rows(con.execute(
        "SELECT * FROM feel_no_pain WHERE datasheet_id = ? ORDER BY ability_name, scope", [datasheet["datasheet_id"]]))
    for row in found:
        what = f"Feel No Pain {row['threshold']}+" + ("" if row["scope"] == "all" else
                                                       f" against {row['scope'].replace('-', ' ')}")
        if row["model_name"] and name_key(row["model_name"], ignore_plural=True) != name_key(
                line["model_name"], ignore_plural=True):
            notes.append(f"target {datasheet['name']}: {what} ({row['ability_name']}) is for "
                         f"{row['model_name']} only: not applied to the {line['model_name']} models")
            continue
        if row["condition"]:
            notes.append(f"target {datasheet['name']}: {what} ({row['ability_name']}) only "
                         f"when: {row['condition']!r}: not applied (give it with --fnp if it holds)")
            continue
        current = best[row["scope"]]
        best[row["scope"]] = row["threshold"] if current is None else min(current, row["threshold"])
    return best


def _characteristics(line: dict) -> tuple:
    return (line["toughness"], line["save"], line["invulnerable_save"], line["invulnerable_save_scope"],
            line["wounds"])


def _profile_text(line: dict) -> str:
    """``"GHAZGHKULL THRAKA (T6 Sv2+ W10 inv4+)"``: a model line as it reads in notes."""
    save = f"Sv{line['save']}+" if line["save"] else "Sv-"
    return (f"{line['model_name']} (T{line['toughness']} {save} W{line['wounds']}"
            + (f" inv{line['invulnerable_save']}+" if line["invulnerable_save"] else "") + ")")


def _bodyguard_line(con: duckdb.DuckDBPyConnection, datasheet: dict, usable: list[dict], models: int,
                    notes: list[str], rows: "DatasheetRows | None" = None) -> dict:
    """The model line a target unit of several model profiles is modelled with: every model gets
    the profile of the line with the most models in the composition (the first line on a tie);
    ``Target.ignored_model_profiles`` names the others. The attack service allocates such a unit
    model by model (``unit_from_datasheets``, ``pipeline.engine.units``) instead."""
    if len({_characteristics(ln) for ln in usable}) == 1:
        return usable[0]
    types = _model_type_counts(con, datasheet["datasheet_id"], models, rows)
    counts = [types.get(_model_key(ln["model_name"]), 0) for ln in usable]
    return usable[max(range(len(usable)), key=lambda i: (counts[i], -i))]


#: An invulnerable save note that sets the save against one kind of attack ("* 4+ against melee
#: attacks", "This invulnerable save is improved to 4+ against melee attacks.").
_INVULNERABLE_NOTE = re.compile(r"(?i)(\d)\+\s+(?:invulnerable save\s+)?against\s+(melee|ranged)\s+attacks")


def _invulnerable_save_note(con: duckdb.DuckDBPyConnection, datasheet: dict, line: dict, phase: Phase,
                            invuln: int | None, notes: list[str], rows: "DatasheetRows | None" = None) -> int | None:
    """The invulnerable save of ``line`` in ``phase`` once its note (``data_flags`` row
    ``invulnerable_save_note``, when ``invulnerable_save_scope`` is null) is read: "N+ against
    melee attacks" gives N+ in the fight phase, "... ranged attacks" in the shooting phase (the
    better of it and the printed save), said in ``notes``."""
    if line.get("invulnerable_save_scope") is not None:
        return invuln
    details = rows.invulnerable_save_notes.get(line["line"], []) if rows is not None else [d for (d,) in con.execute(
        "SELECT detail FROM data_flags WHERE table_name = 'model_profiles' AND flag = 'invulnerable_save_note' "
        "AND entity_key = ?", [f"{datasheet['datasheet_id']}|{line['line']}"]).fetchall()]
    for detail in details:
        m = _INVULNERABLE_NOTE.search(detail)
        if not m:
            continue
        value, kind = int(m.group(1)), m.group(2).lower()
        if _SCOPE_PHASE[kind] != phase:
            continue
        if invuln is None or value < invuln:
            notes.append(f"target {datasheet['name']}: invulnerable save {value}+ against {kind} attacks "
                         f"(its note {detail.strip()!r}), not {invuln}+" if invuln else
                         f"target {datasheet['name']}: invulnerable save {value}+ against {kind} attacks "
                         f"(its note {detail.strip()!r})")
            invuln = value
    return invuln


def all_weapon_profiles(con: duckdb.DuckDBPyConnection, is_melee: bool = False,
                        edition: int | None = None) -> list[Weapon]:
    """Every weapon profile of the database (ranged by default; with ``edition``, of that
    edition's datasheets), each fired by one model, in the order of (datasheet_id, weapon_name,
    profile_name).

    Profiles without a Strength (``-`` in the source) are left out: they make no attack.
    """
    where, params = "", []
    if edition is not None:
        where, params = " AND datasheet_id IN (SELECT datasheet_id FROM datasheets WHERE edition = ?)", [edition]
    abilities: dict[tuple, list[ParsedWeaponAbility]] = {}
    for r in _rows(con.execute(f"SELECT * FROM weapon_abilities WHERE is_melee = ?{where} ORDER BY position",
                               [is_melee, *params])):
        value = None
        if r["value_text"] is not None:
            value = make_dice(r["value_dice_count"], r["value_dice_sides"], r["value_modifier"])
        key = (r["datasheet_id"], r["weapon_name"], r["is_melee"], r["profile_name"])
        abilities.setdefault(key, []).append(ParsedWeaponAbility(
            r["name"], r["target_keyword"], r["threshold"], value, r["condition"], r["raw_text"], ()))
    weapons = []
    for p in _rows(con.execute(
        f"SELECT * FROM weapon_profiles WHERE is_melee = ? AND strength IS NOT NULL{where} "
        "ORDER BY datasheet_id, weapon_name, profile_name", [is_melee, *params])):
        weapons.append(Weapon.from_abilities(
            name=f"{p['datasheet_id']}: {p['weapon_name']}",
            attacks=make_dice(p["attacks_dice_count"], p["attacks_dice_sides"], p["attacks_modifier"]),
            skill=p["skill"], strength=p["strength"], armour_penetration=p["armour_penetration"],
            damage=make_dice(p["damage_dice_count"], p["damage_dice_sides"], p["damage_modifier"]),
            abilities=abilities.get((p["datasheet_id"], p["weapon_name"], p["is_melee"], p["profile_name"]), []),
            is_melee=is_melee,
        ))
    return weapons


# ---------------------------------------------------------------------------------------------
# Units as they stand on the table: model lines, Attached units (``pipeline.engine.units``)


def check_leader(con: duckdb.DuckDBPyConnection, leader: dict, bodyguard: dict) -> str:
    """The kind of link (``leader`` or ``support``, ``leader_links.kind``) by which the datasheet
    ``leader`` can join ``bodyguard``. Raises ``InputError`` when the database has no such link,
    naming the units it can join (or saying it has none: not a Leader or Support unit)."""
    row = con.execute(
        "SELECT kind FROM leader_links WHERE leader_datasheet_id = ? AND bodyguard_datasheet_id = ?",
        [leader["datasheet_id"], bodyguard["datasheet_id"]]).fetchone()
    if row:
        return row[0] or "leader"
    can = [n for (n,) in con.execute(
        "SELECT DISTINCT coalesce(d.name, l.bodyguard_name) FROM leader_links l LEFT JOIN datasheets d "
        "ON d.datasheet_id = l.bodyguard_datasheet_id WHERE l.leader_datasheet_id = ? ORDER BY 1",
        [leader["datasheet_id"]]).fetchall()]
    if not can:
        raise InputError(f"{leader['name']} ({leader['datasheet_id']}) cannot join {bodyguard['name']}: the "
                         "database lists no unit it can lead (it is not a Leader or Support unit); attack the "
                         "units separately")
    raise InputError(f"{leader['name']} ({leader['datasheet_id']}) cannot join {bodyguard['name']} "
                     f"({bodyguard['datasheet_id']}); it can join: {', '.join(can)}")


def _line_counts(con: duckdb.DuckDBPyConnection, datasheet: dict, usable: list[dict], count: int,
                 notes: list[str]) -> list[int]:
    """Models of each model line in a unit of ``count`` models: one line (or lines of one profile
    taken as one) gets them all; otherwise each line its composition count, the models no line
    matches going to the line with the most (said in ``notes``)."""
    if len(usable) == 1:
        return [count]
    types = _model_type_counts(con, datasheet["datasheet_id"], count)
    counts = [types.get(_model_key(ln["model_name"]), 0) for ln in usable]
    left = count - sum(counts)
    if left > 0:
        i = max(range(len(usable)), key=lambda k: (counts[k], -k))
        counts[i] += left
        notes.append(f"target {datasheet['name']}: {left} model{'s' if left != 1 else ''} of the unit's {count} "
                     f"match no model line by name; counted as {usable[i]['model_name']}")
    elif left < 0:
        counts[-1] = max(0, counts[-1] + left)
    return counts


def unit_lines(con: duckdb.DuckDBPyConnection, datasheet: dict, models: int | None, phase: Phase,
               notes: list[str], role: str = "bodyguard") -> list:
    """The ``units.ModelLine`` of a datasheet at ``models`` models (None: its smallest size), each
    model line with its count, T, Sv, InSv (its scope for ``phase``), W and Feel No Pain; lines
    of one profile are one line. CHARACTER: the datasheet has the keyword and one model line (a
    Leader), or, for a unit of several lines, the line of one model whose name is the unit's.
    Raises ``InputError`` as ``target_from_datasheet`` does."""
    from pipeline.engine.units import ModelLine

    lines, usable = _usable_lines(con, datasheet)
    count = models
    if count is None:
        count, how = model_count(con, datasheet)
        if count is None:
            raise no_model_count(datasheet, how, "--target-models N")
    distinct: list[dict] = []
    for ln in usable:
        if _characteristics(ln) not in [_characteristics(d) for d in distinct]:
            distinct.append(ln)
    counts = _line_counts(con, datasheet, distinct, count, notes)
    keywords = {r[0].upper() for r in con.execute(
        "SELECT keyword FROM keywords WHERE datasheet_id = ?", [datasheet["datasheet_id"]]).fetchall()}
    character = "CHARACTER" in keywords
    out = []
    for ln, n in zip(distinct, counts):
        if n <= 0:
            notes.append(f"target {datasheet['name']}: model line {ln['model_name']} has no model at {count} models")
            continue
        fnp = feel_no_pain(con, datasheet, ln, notes)
        invuln, why = invulnerable_save_against(ln, phase)
        if why:
            notes.append(f"target {datasheet['name']}: {why}")
        invuln = _invulnerable_save_note(con, datasheet, ln, phase, invuln, notes)
        is_character = character and (len(distinct) == 1 or (n == 1 and _same_model(ln["model_name"], datasheet["name"])))
        out.append(ModelLine(ln["model_name"].title() if ln["model_name"].isupper() else ln["model_name"], n,
                             ln["toughness"], ln["save"], ln["wounds"], invuln, fnp["all"], fnp["mortal-wounds"],
                             fnp["psychic"], frozenset(keywords), is_character, role, datasheet["name"]))
    return out


def unit_from_datasheets(con: duckdb.DuckDBPyConnection, bodyguard: dict, leaders: Sequence[dict] = (),
                         models: int | None = None, phase: Phase = "shooting", notes: list[str] | None = None):
    """A ``units.UnitTarget`` of ``bodyguard`` (``models`` models, None: its smallest size) and the
    ``leaders`` attached to it, each checked against ``leader_links`` (``check_leader``: an
    ``InputError`` naming the units a Leader can join). The unit has the keywords of all its
    datasheets (11th edition 19.03) and Stealth when every one of them has it."""
    return unit_and_parts(con, bodyguard, leaders, models, phase, notes)[0]


def unit_and_parts(con: duckdb.DuckDBPyConnection, bodyguard: dict, leaders: Sequence[dict] = (),
                   models: int | None = None, phase: Phase = "shooting", notes: list[str] | None = None):
    """``unit_from_datasheets`` and, per datasheet of the unit, a ``unit_effects.SheetPart`` (its
    row, role, keywords and the indexes of its model lines), Bodyguard first. Raises as
    ``unit_from_datasheets`` does."""
    from pipeline.engine.unit_effects import SheetPart
    from pipeline.engine.units import UnitTarget

    notes = notes if notes is not None else []
    lines = unit_lines(con, bodyguard, models, phase, notes)
    sheets = [(bodyguard, "bodyguard", len(lines))]
    for leader in leaders:
        kind = check_leader(con, leader, bodyguard)
        lines += unit_lines(con, leader, None, phase, notes, role="support" if kind == "support" else "leader")
        sheets.append((leader, "support" if kind == "support" else "leader", len(lines)))
    keywords: set[str] = set()
    stealth = True
    parts = []
    start = 0
    for sheet, role, end in sheets:
        own = {r[0].upper() for r in con.execute(
            "SELECT keyword FROM keywords WHERE datasheet_id = ?", [sheet["datasheet_id"]]).fetchall()}
        keywords |= own
        stealth &= any(slug(n) == "stealth" for (n,) in con.execute(
            "SELECT name FROM abilities WHERE datasheet_id = ?", [sheet["datasheet_id"]]).fetchall())
        parts.append(SheetPart(sheet, role, frozenset(own), tuple(range(start, end))))
        start = end
    name = " + ".join(s["name"] for s, _, _ in sheets)
    return UnitTarget(name, tuple(lines), frozenset(keywords), stealth), parts
