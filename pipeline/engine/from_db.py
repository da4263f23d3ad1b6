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


def _loadout_counts(con: duckdb.DuckDBPyConnection, datasheet: dict, weapon_names: set[str], phase: Phase) -> Counter:
    """How many models carry each weapon name, from the loadout lines (empty if none)."""
    counts: Counter[str] = Counter()
    by_slug = {slug(n): n for n in weapon_names}
    lines = _rows(con.execute(
        "SELECT models, model_count, equipment FROM wargear_loadouts WHERE datasheet_id = ? ORDER BY line",
        [datasheet["datasheet_id"]]))
    pistols = {r["weapon_name"] for r in _rows(con.execute(
        "SELECT DISTINCT weapon_name FROM weapon_abilities WHERE datasheet_id = ? AND name = 'PISTOL'",
        [datasheet["datasheet_id"]]))}
    for line in lines:
        n = line["model_count"]
        if n is None:
            every = re.match(r"(?i)every model", line["models"])
            n = (datasheet["starting_strength"] or 1) if every else 1
        carried = [by_slug[slug(item)] for item in re.split(r"[;,]", line["equipment"]) if slug(item) in by_slug]
        if phase == "shooting":
            non_pistols = [w for w in carried if w not in pistols]
            carried = non_pistols or carried
        for weapon in dict.fromkeys(carried):
            counts[weapon] += n
    return counts


def attacker_weapons(
    con: duckdb.DuckDBPyConnection,
    datasheet: dict,
    phase: Phase,
    weapon_names: Sequence[str] = (),
    models: int | None = None,
) -> list[Weapon]:
    """The weapons a datasheet fires in a phase, each with the number of models firing it.

    ``weapon_names`` picks profiles by name (case-insensitive, all profiles of that name for the
    phase); ``models`` overrides the number of models firing each chosen weapon.
    Raises ``NotFoundError`` (with close names) for a weapon the datasheet does not have, and
    ``InputError`` when the datasheet has no weapon for the phase.
    """
    is_melee = phase == "fight"
    profiles = _rows(con.execute(
        "SELECT * FROM weapon_profiles WHERE datasheet_id = ? AND is_melee = ? ORDER BY weapon_name, profile_name",
        [datasheet["datasheet_id"], is_melee]))
    all_names = {p["weapon_name"] for p in _rows(con.execute(
        "SELECT weapon_name FROM weapon_profiles WHERE datasheet_id = ?", [datasheet["datasheet_id"]]))}
    if weapon_names:
        wanted = {slug(n) for n in weapon_names}
        unknown = [n for n in weapon_names if slug(n) not in {slug(p["weapon_name"]) for p in profiles}]
        if unknown:
            hint = _suggest(unknown[0], sorted(all_names))
            raise NotFoundError(
                f"{datasheet['name']} has no {'melee' if is_melee else 'ranged'} weapon {unknown[0]!r}"
                + (f"; its weapons: {hint or ', '.join(sorted(all_names))}" if all_names else "")
            )
        profiles = [p for p in profiles if slug(p["weapon_name"]) in wanted]
    if not profiles:
        raise InputError(
            f"{datasheet['name']} has no {'melee' if is_melee else 'ranged'} weapons; "
            f"try the {'shooting' if is_melee else 'fight'} phase (--phase) or another unit"
        )
    # one profile per weapon name: the first (multi-profile weapons are chosen by --weapon)
    counts = _loadout_counts(con, datasheet, {p["weapon_name"] for p in profiles}, phase)
    abilities = _abilities(con, datasheet["datasheet_id"])
    weapons: list[Weapon] = []
    seen: set[str] = set()
    for p in profiles:
        if p["weapon_name"] in seen and not weapon_names:
            continue
        seen.add(p["weapon_name"])
        n = models or counts.get(p["weapon_name"]) or (0 if counts else datasheet["starting_strength"] or 1)
        if n == 0:
            continue
        weapons.append(Weapon.from_abilities(
            name=p["weapon_name"] + (f" ({p['profile_name']})" if p["profile_name"] else ""),
            attacks=make_dice(p["attacks_dice_count"], p["attacks_dice_sides"], p["attacks_modifier"]),
            skill=p["skill"], strength=p["strength"] or 0,
            armour_penetration=p["armour_penetration"],
            damage=make_dice(p["damage_dice_count"], p["damage_dice_sides"], p["damage_modifier"]),
            abilities=abilities.get((p["weapon_name"], p["is_melee"], p["profile_name"]), []),
            is_melee=is_melee, models=n,
        ))
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
    count = models or datasheet["starting_strength"] or 1
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
