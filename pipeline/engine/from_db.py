"""Engine inputs from the database: an attacking datasheet's weapons, a target datasheet.

The attacker's default weapons are its loadout for the phase: each ``wargear_loadouts`` line
says how many models carry which weapons; a model with Pistols and other ranged weapons fires
the other ranged weapons (Pistol, 10th edition). Without loadout lines, every profile of the
phase is fired by every model.
"""

from __future__ import annotations

import re
from collections import Counter
from typing import Literal, Sequence

import duckdb

from pipeline.engine.profiles import Target, Weapon
from pipeline.errors import InputError, NotFoundError
from pipeline.normalise.characteristics import make_dice
from pipeline.normalise.text import slug
from pipeline.normalise.weapon_abilities import ParsedWeaponAbility
from pipeline.query import _rows, _suggest

Phase = Literal["shooting", "fight"]


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
            r["name"], r["target_keyword"], r["threshold"], value, None, r["raw_text"], ()))
    return out


def model_count(con: duckdb.DuckDBPyConnection, datasheet: dict) -> tuple[int, str]:
    """The unit's smallest legal size and where it came from.

    In order: the model count the datasheet prints (``(10 MODELS)``), the smallest ``N models``
    points line (``unit_costs``), the sum of the composition lines' minimums up to the first
    ``OR``; otherwise 1, said so in the second value.
    """
    if datasheet.get("starting_strength"):
        return datasheet["starting_strength"], "printed model count"
    sizes = [int(m.group(1)) for (d,) in con.execute(
        "SELECT description FROM unit_costs WHERE datasheet_id = ?", [datasheet["datasheet_id"]]).fetchall()
        if (m := re.fullmatch(r"(\d+) models?", d.strip()))]
    if sizes:
        return min(sizes), "smallest unit size in its points"
    total = 0
    for low, text in con.execute(
        "SELECT min_models, text FROM unit_composition WHERE datasheet_id = ? ORDER BY line",
        [datasheet["datasheet_id"]]).fetchall():
        if text.strip().upper() == "OR":
            break
        total += low or 0
    if total:
        return total, "sum of its composition lines"
    return 1, "no model count in the database: 1 model assumed (use --models / --target-models)"


def _model_type_counts(con: duckdb.DuckDBPyConnection, datasheet_id: str) -> dict[str, int]:
    """Smallest number of each model type, from the composition (``9 Kasrkin Troopers``);
    the first line that names a type wins (the unit's smallest size is listed first)."""
    counts: dict[str, int] = {}
    for name, low in con.execute(
        "SELECT model_name, min_models FROM unit_composition WHERE datasheet_id = ? ORDER BY line",
        [datasheet_id]).fetchall():
        if low:
            counts.setdefault(slug(name).rstrip("s"), low)
    return counts


def _line_models(models_text: str, model_count: int | None, unit_size: int, types: dict[str, int]) -> int:
    """How many models a loadout line speaks of.

    ``6 Battle Sisters`` -> 6; ``Every model`` -> the unit size; ``Every Kasrkin Trooper`` /
    ``Each Retributor`` -> that type's number in the composition (else the unit size);
    ``This model``, ``The Sister Superior``, ``One ...`` -> 1.
    """
    if model_count is not None:
        return model_count
    m = re.match(r"(?i)(every|each)\s+(.+)", models_text.strip())
    if not m:
        return 1
    who = m.group(2)
    if re.match(r"(?i)models?\b", who):
        return unit_size
    return types.get(slug(who).rstrip("s"), unit_size)


def _loadout_counts(con: duckdb.DuckDBPyConnection, datasheet: dict, weapon_names: set[str], phase: Phase,
                    unit_size: int) -> Counter:
    """How many models carry each weapon name, from the loadout lines (empty if none)."""
    counts: Counter[str] = Counter()
    by_slug = {slug(n): n for n in weapon_names}
    lines = _rows(con.execute(
        "SELECT models, model_count, equipment FROM wargear_loadouts WHERE datasheet_id = ? ORDER BY line",
        [datasheet["datasheet_id"]]))
    pistols = {r["weapon_name"] for r in _rows(con.execute(
        "SELECT DISTINCT weapon_name FROM weapon_abilities WHERE datasheet_id = ? AND name = 'PISTOL'",
        [datasheet["datasheet_id"]]))}
    types = _model_type_counts(con, datasheet["datasheet_id"])
    for line in lines:
        n = _line_models(line["models"], line["model_count"], unit_size, types)
        carried = [by_slug[slug(item)] for item in re.split(r"[;,]", line["equipment"]) if slug(item) in by_slug]
        if phase == "shooting":
            non_pistols = [w for w in carried if w not in pistols]
            carried = non_pistols or carried
        for weapon in dict.fromkeys(carried):
            counts[weapon] += n
    return counts


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


def attacker_weapons(
    con: duckdb.DuckDBPyConnection,
    datasheet: dict,
    phase: Phase,
    weapon_names: Sequence[str] = (),
    models: int | None = None,
    notes: list[str] | None = None,
) -> list[Weapon]:
    """The weapons a datasheet fires in a phase, each with the number of models firing it.

    Without ``weapon_names`` the unit fires its loadout (``wargear_loadouts``) at its smallest
    size (``model_count``); each line counts its models (``_line_models``). ``models`` sets the
    unit's size only when every loadout line is about every model; otherwise it needs
    ``weapon_names``. ``weapon_names`` picks weapons by name (case-insensitive); a weapon with
    several profiles fires one of them, the first unless named as ``"Plasma pistol (supercharge)"``;
    each named weapon is fired by ``models`` models, else by the models of the loadout that carry
    it, else by the unit's size.
    Notes about choices made go to ``notes``.
    Raises ``NotFoundError`` (with close names) for a weapon or profile the datasheet does not
    have, and ``InputError`` when the datasheet has no weapon for the phase.
    """
    notes = notes if notes is not None else []
    if models is not None and models < 1:
        raise InputError(f"--models {models}: a unit has at least 1 model")
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
    unit_size, how = model_count(con, datasheet)
    if models is not None:
        unit_size = models
    elif how.startswith("no model count"):
        notes.append(f"{datasheet['name']}: {how}")
    elif how != "printed model count":
        notes.append(f"{datasheet['name']}: {unit_size} models ({how})")
    chosen: list[dict] = []
    named_profiles: set[int] = set()
    if weapon_names:
        for asked in weapon_names:
            name, profile = _split_choice(asked)
            match = next((w for w in by_weapon if slug(w) == slug(name)), None)
            if match is None and profile is not None:
                match = next((w for w in by_weapon if slug(w) == slug(asked)), None)
                profile = None
            if match is None:
                hint = _suggest(name, sorted(by_weapon))
                raise NotFoundError(
                    f"{datasheet['name']} has no {kind} weapon {asked!r}; "
                    + (f"close names: {hint}; " if hint else "")
                    + f"its {kind} weapons: {', '.join(sorted(by_weapon))}"
                )
            options = by_weapon[match]
            if profile is not None:
                picked = [p for p in options if slug(p["profile_name"]) == slug(profile)]
                if not picked:
                    names = [p["profile_name"] for p in options if p["profile_name"]]
                    raise NotFoundError(
                        f"{match} has no profile {profile!r}; "
                        + (f"its profiles: {', '.join(names)}" if names else "it has a single profile")
                    )
                chosen.append(picked[0])
                named_profiles.add(id(picked[0]))
            else:
                chosen.append(options[0])
    else:
        chosen = [options[0] for options in by_weapon.values()]
    counts = _loadout_counts(con, datasheet, set(by_weapon), phase, unit_size)
    abilities = _abilities(con, datasheet["datasheet_id"])
    weapons: list[Weapon] = []
    for p in chosen:
        if weapon_names and models is not None:
            n = models
        elif counts:
            n = counts.get(p["weapon_name"], 0) or (unit_size if weapon_names else 0)
        else:
            n = unit_size
        if n == 0:
            continue
        others = [o["profile_name"] for o in by_weapon[p["weapon_name"]] if o is not p]
        if others and id(p) not in named_profiles:
            notes.append(
                f"{p['weapon_name']}: fired with its {p['profile_name']!r} profile; its other profiles "
                f"({', '.join(others)}) are chosen with --weapon \"{p['weapon_name']} ({others[0]})\""
            )
        weapons.append(Weapon.from_abilities(
            name=p["weapon_name"] + (f" ({p['profile_name']})" if p["profile_name"] else ""),
            attacks=make_dice(p["attacks_dice_count"], p["attacks_dice_sides"], p["attacks_modifier"]),
            skill=p["skill"], strength=p["strength"] or 0,
            armour_penetration=p["armour_penetration"],
            damage=make_dice(p["damage_dice_count"], p["damage_dice_sides"], p["damage_modifier"]),
            abilities=abilities.get((p["weapon_name"], p["is_melee"], p["profile_name"]), []),
            is_melee=is_melee, models=n,
        ))
    if not weapons:
        raise InputError(
            f"no model of {datasheet['name']} carries a {kind} weapon in its loadout; "
            f"choose one with --weapon (its {kind} weapons: {', '.join(sorted(by_weapon))})"
        )
    return weapons


def target_from_datasheet(con: duckdb.DuckDBPyConnection, datasheet: dict, models: int | None = None) -> Target:
    """A target profile from a datasheet: the first (Bodyguard) model line's T, Sv, InSv and W.

    Raises ``InputError`` when the database has no characteristics for it (the source lost
    them), naming an inline profile to use instead.
    """
    lines = _rows(con.execute(
        "SELECT * FROM model_profiles WHERE datasheet_id = ? ORDER BY line", [datasheet["datasheet_id"]]))
    usable = [ln for ln in lines if ln["toughness"] and ln["wounds"]]
    if not usable:
        raise InputError(
            f"{datasheet['name']} ({datasheet['datasheet_id']}) has no model characteristics in the "
            "database (its source lost them); give the target as an inline profile, "
            'e.g. --target "T3 Sv3+ W1 x10 INFANTRY"'
        )
    first = usable[0]
    keywords = frozenset(r["keyword"].upper() for r in _rows(con.execute(
        "SELECT keyword FROM keywords WHERE datasheet_id = ?", [datasheet["datasheet_id"]])))
    fnp = fnp_mortal = None
    stealth = False
    for a in _rows(con.execute(
        "SELECT name, parameter, text FROM abilities WHERE datasheet_id = ?", [datasheet["datasheet_id"]]
    )):
        if slug(a["name"]) == "feel-no-pain" and a["parameter"]:
            m = re.search(r"(\d)\+", a["parameter"])
            if m:
                fnp = int(m.group(1))
        if slug(a["name"]) == "stealth":
            stealth = True
    count = models if models is not None else model_count(con, datasheet)[0]
    invuln = first["invulnerable_save"] if first.get("invulnerable_save_scope") in (None, "ranged") else None
    return Target(
        toughness=first["toughness"], save=first["save"], wounds=first["wounds"], models=count,
        invulnerable_save=invuln, feel_no_pain=fnp, feel_no_pain_mortal=fnp_mortal,
        keywords=keywords, stealth=stealth, name=datasheet["name"],
    )


def all_weapon_profiles(con: duckdb.DuckDBPyConnection, is_melee: bool = False) -> list[Weapon]:
    """Every weapon profile of the database (ranged by default), each fired by one model.

    Profiles without a Strength (``-`` in the source) are left out: they make no attack.
    """
    abilities: dict[tuple, list[ParsedWeaponAbility]] = {}
    for r in _rows(con.execute("SELECT * FROM weapon_abilities ORDER BY position")):
        value = None
        if r["value_text"] is not None:
            value = make_dice(r["value_dice_count"], r["value_dice_sides"], r["value_modifier"])
        key = (r["datasheet_id"], r["weapon_name"], r["is_melee"], r["profile_name"])
        abilities.setdefault(key, []).append(ParsedWeaponAbility(
            r["name"], r["target_keyword"], r["threshold"], value, None, r["raw_text"], ()))
    weapons = []
    for p in _rows(con.execute(
        "SELECT * FROM weapon_profiles WHERE is_melee = ? AND strength IS NOT NULL "
        "ORDER BY datasheet_id, weapon_name, profile_name", [is_melee])):
        weapons.append(Weapon.from_abilities(
            name=f"{p['datasheet_id']}: {p['weapon_name']}",
            attacks=make_dice(p["attacks_dice_count"], p["attacks_dice_sides"], p["attacks_modifier"]),
            skill=p["skill"], strength=p["strength"], armour_penetration=p["armour_penetration"],
            damage=make_dice(p["damage_dice_count"], p["damage_dice_sides"], p["damage_modifier"]),
            abilities=abilities.get((p["datasheet_id"], p["weapon_name"], p["is_melee"], p["profile_name"]), []),
            is_melee=is_melee,
        ))
    return weapons
