"""The attack service: resolve an attack between units named in the database or given inline.

This is the Python API behind ``wh40k attack``. ``attack`` returns an ``AttackOutcome``: the
weapons fired, the target, and the ``AttackResult`` with one ``Distribution`` per stage
(``mean``, ``pmf``, ``at_least``). The example needs the database of ``make build-db`` (the
default ``db/wh40k.duckdb``), so the doctest run skips it; ``tests/test_attack_cli.py`` runs it
against the test database.

>>> from pipeline.engine.service import AttackRequest, attack
>>> outcome = attack(AttackRequest(attacker="cp-sanctuary-guardians/battle-sisters-squad",
...                                target="MEQ", weapons=("boltgun",)))  # doctest: +SKIP
>>> [(w.name, w.models) for w in outcome.weapons]  # doctest: +SKIP
[('Boltgun', 7)]
>>> print(f"{outcome.result.unsaved.mean:.4f}")  # 7 x 2/3 x 1/2 x 1/3  # doctest: +SKIP
0.7778
>>> print(f"{outcome.result.models_destroyed.mean:.4f}")  # doctest: +SKIP
0.1819
"""

from __future__ import annotations

import dataclasses
import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Literal

from pipeline import limits, query
from pipeline.engine import exact
from pipeline.engine.from_db import _COUNTED_ITEM as COUNTED_ITEM
from pipeline.engine.from_db import _split_choice as split_choice
from pipeline.engine.from_db import Phase, attacker_weapons, loadout_item, match_weapon, model_count, target_from_datasheet
from pipeline.engine.inputs import STANDARD_PROFILES, parse_target, parse_weapon_profile
from pipeline.engine.profiles import Context, Target, Weapon
from pipeline.engine.result import AttackResult
from pipeline.errors import InputError, NotFoundError
from pipeline.limits import check_name, limit_error

if TYPE_CHECKING:  # the unit engine (pipeline.engine.units) is imported for a unit target only
    from pipeline.engine.units import UnitAttackResult
    from pipeline.lists.attack_input import ListUnit

_INLINE = re.compile(r"(?i)(^|\s)T\d+(\s|$)")


@dataclass(frozen=True)
class AttackRequest:
    """What to resolve. ``attacker``: a datasheet name or id, or None for custom weapon profiles
    alone. ``target``: a datasheet name or id, a standard profile (GEQ, MEQ, TEQ, VEHICLE,
    MONSTER) or an inline profile such as ``"T4 Sv3+ W2 x10 inv4+ fnp5+ INFANTRY"``. ``phase``
    None: the shooting phase, or the fight phase when every weapon named (``weapons``,
    ``weapon_profiles``) is a melee weapon (said in a note)."""

    attacker: str | None
    target: str
    phase: Phase | None = None
    weapons: tuple[str, ...] = ()
    models: int | None = None
    target_models: int | None = None
    feel_no_pain: int | None = None
    context: Context = field(default_factory=Context)
    #: The rules edition (overrides ``context.edition``) and the edition of the datasheets of
    #: attacker and target; None: the latest edition in the database (``query.latest_edition``).
    edition: int | None = None
    #: Rules applied by name (``attack --with``: a stratagem, order, ability, detachment rule or
    #: enhancement; ``"NAME: OPTION"`` picks an option) and target rules turned off (``--without``).
    with_effects: tuple[str, ...] = ()
    without_effects: tuple[str, ...] = ()
    #: Leader / Support units attached to the target datasheet (names or ids; each checked
    #: against ``leader_links``), making it an Attached unit resolved model by model.
    target_leaders: tuple[str, ...] = ()
    #: Leader / Support units attached to the attacker: their loadout's weapons fire too.
    leaders: tuple[str, ...] = ()
    #: The defender's allocation order (``units.AllocationPolicy``: "listed", "reversed" or line names).
    allocation: str | tuple[str, ...] = "listed"
    #: What the attacker's Precision choices maximise (``units.OBJECTIVES``).
    objective: str = "character"
    #: Custom weapons (``inputs.parse_weapon_profile``): ``"A2 BS3+ S4 AP-1 D1 [LETHAL HITS]"``, each
    #: fired by ``models`` models (default 1), with the ``weapons`` named or in place of the loadout.
    weapon_profiles: tuple[str, ...] = ()
    #: The attacker's detachment (a name): of rules named alike in ``with_effects``, the one of
    #: this detachment (``pipeline.effects.named``).
    detachment: str | None = None
    #: A unit of an army list as the attacker / the target (``pipeline.lists.attack_input.ListUnit``:
    #: the list's text and the unit's name), built as the list gives it (``pipeline.lists.attack``);
    #: ``attacker`` / ``target`` are then not read.
    attacker_list: "ListUnit | None" = None
    target_list: "ListUnit | None" = None


@dataclass(frozen=True)
class ExplainedStep:
    """A step of the resolution with the matched-play wording of the rule it applied (``None``
    if no such wording is stored; ``note`` then says where another game mode's wording is)."""

    rule_key: str
    summary: str
    edition: int
    title: str | None
    section: str | None
    source_id: str | None
    locator: str | None
    note: str | None = None


@dataclass(frozen=True)
class AttackOutcome:
    """The resolved attack with the inputs that were used (for display and JSON)."""

    attacker: str
    weapons: tuple[Weapon, ...]
    target: Target
    result: AttackResult
    explained: tuple[ExplainedStep, ...] = ()
    notes: tuple[str, ...] = ()  # choices made about the inputs (unit picked, profile fired, size)
    effects: tuple = ()  # pipeline.effects.apply.AppliedEffect of each effect of a named or default rule
    #: a target of several model lines or an Attached unit: per line and per CHARACTER results
    unit: UnitAttackResult | None = None
    #: listed units (``attack --list`` / ``--target-list``): the list, unit, members, Enhancements
    listed: dict | None = None


def resolve_target(con, text: str, models: int | None = None, notes: list[str] | None = None,
                   phase: Phase = "shooting", edition: int | None = None) -> Target:
    """A ``Target`` from a standard profile name, an inline profile or a datasheet name, attacked
    in ``phase`` (a datasheet's invulnerable save may hold against ranged or melee attacks only).
    A datasheet name takes the datasheet of ``edition`` (None: the latest in the database), or,
    when the unit has none of that edition, another edition's, with a note.

    Raises ``InputError`` for an unreadable inline profile or a datasheet with no model count in
    the database when ``models`` is not given (``--target-models``), and ``NotFoundError`` for an
    unknown datasheet name (with close names, the standard profiles and the inline syntax).
    """
    notes = notes if notes is not None else []
    key = text.strip().upper()
    if key in STANDARD_PROFILES:
        target = STANDARD_PROFILES[key]
    elif _INLINE.search(text):
        target = parse_target(text)
    else:
        edition = query.latest_edition(con) if edition is None else edition
        try:
            sheet, others = query.find_datasheet_preferring(con, text, edition)
        except NotFoundError as exc:
            raise NotFoundError(
                f"{exc}; a target can also be a standard profile ({', '.join(STANDARD_PROFILES)}) "
                'or an inline profile such as "T4 Sv3+ W2 x10 inv4+ fnp5+ INFANTRY"'
            ) from None
        if others:
            notes.append(f"target {text!r}: using {sheet['datasheet_id']}; also matching: "
                         + ", ".join(o["datasheet_id"] for o in others))
        if sheet.get("edition") is not None and sheet["edition"] != edition:
            notes.append(_other_edition_note("target", sheet, edition))
        target = target_from_datasheet(con, sheet, models=models, phase=phase, notes=notes)
        if models is None and not sheet.get("starting_strength"):
            notes.append(f"target {sheet['name']}: {target.models} model{'' if target.models == 1 else 's'} "
                         f"({model_count(con, sheet)[1]})")
    return dataclasses.replace(target, models=models) if models is not None else target


def attack(request: AttackRequest, db: Path = query.DEFAULT_DB, explain: bool = True) -> AttackOutcome:
    """Resolve ``request`` against the database at ``db`` with the exact engine. Without
    ``explain`` the wordings of the rules applied are not looked up (``wh40k attack`` without
    ``--explain``): each of ``AttackOutcome.explained`` has its rule key, summary and edition,
    and a note saying so.

    Raises ``DatabaseError`` (no database), ``NotFoundError`` (unknown unit or weapon, with
    suggestions) and ``InputError`` (a target without characteristics, a bad inline profile).
    The database is opened with ``query.open_database`` (read-only, sandboxed, its schema
    checked) and closed before the outcome is returned.
    """
    check_request(request)
    con = query.open_database(db)
    try:
        return _attack(con, request, explain)
    finally:
        con.close()


def attack_with(con, request: AttackRequest, explain: bool = True) -> AttackOutcome:
    """``attack`` on a connection the caller opened with ``query.open_database`` (and closes):
    a server answers many requests over one database. Without ``explain`` the outcome's
    ``explained`` has no wordings (``unexplained_steps``; the caller looks them up itself,
    ``explain_steps``). Raises what ``attack`` raises."""
    check_request(request)
    return _attack(con, request, explain)


def _attack(con, request: AttackRequest, explain: bool = True) -> AttackOutcome:
    if request.attacker_list is not None or request.target_list is not None:
        from pipeline.lists.attack import listed_attack

        return listed_attack(con, request, explain)
    notes: list[str] = []
    edition = query.latest_edition(con) if request.edition is None else request.edition
    sheet, others = None, []
    if request.attacker is not None:
        sheet, others = query.find_datasheet_preferring(con, request.attacker, edition)
    if others:
        notes.append(f"attacker {request.attacker!r}: using {sheet['datasheet_id']}; also matching: "
                     + ", ".join(o["datasheet_id"] for o in others) + " (pass a datasheet id to choose)")
    if sheet is not None and sheet.get("edition") is not None and sheet["edition"] != edition:
        notes.append(_other_edition_note("attacker", sheet, edition))
    custom = [parse_weapon_profile(text, request.models or 1, edition) for text in request.weapon_profiles]
    request = dataclasses.replace(request, phase=request.phase or _phase(con, sheet, request.weapons, custom, notes))
    _check_custom_phase(custom, request.phase)
    target_notes: list[str] = []
    target = resolve_target(con, request.target, request.target_models, target_notes, request.phase, edition)
    if request.feel_no_pain is not None:
        target = dataclasses.replace(target, feel_no_pain=request.feel_no_pain)
    context = dataclasses.replace(request.context, edition=edition)
    if request.phase == "fight" and context.cover:
        context = dataclasses.replace(context, cover=False)
    keywords = frozenset() if sheet is None else frozenset(k for (k,) in con.execute(
        "SELECT upper(keyword) FROM keywords WHERE datasheet_id = ?", [sheet["datasheet_id"]]).fetchall())
    context = dataclasses.replace(context, attacker_keywords=keywords | context.attacker_keywords)
    try:
        weapons = [] if sheet is None or (custom and not request.weapons) else attacker_weapons(
            con, sheet, request.phase, request.weapons, request.models, notes, target=target, context=context)
    except NotFoundError as exc:
        if not others:
            raise
        raise NotFoundError(
            f"{exc} (in {sheet['datasheet_id']}; other datasheets of that name: "
            + ", ".join(o["datasheet_id"] for o in others) + ": pass one as the attacker)"
        ) from None
    weapons = weapons + custom
    if request.leaders and sheet is None:
        raise InputError("a Leader (--leader) joins an attacker from the database: name the attacking unit, "
                         "or leave --leader out with --weapon-profile alone")
    for name in request.leaders:
        weapons += _leader_weapons(con, name, sheet, request, edition, notes, target, context)
    notes.extend(target_notes)
    if context.damaged and sheet is not None:
        notes.append(damaged_note(con, sheet, context.edition))
    applied: tuple = ()
    unit_parts = _target_unit(con, request, edition, notes)
    unit = None
    if unit_parts is not None:
        # a unit target: its datasheets' rules and the named ones, model line by model line
        unit, parts = unit_parts
        weapons, unit, context, applied, effect_notes = _unit_effects(con, request, sheet, edition, weapons, unit,
                                                                      context, parts)
        # a Feel No Pain with a Leader's condition, said "not applied" when the target was read, may
        # hold now: the rules of the unit said what they did
        held = {f"({a.rule_name}) only when:" for a in applied}
        notes[:] = [n for n in notes if not any(h in n for h in held)]
        notes.extend(effect_notes)
        if request.feel_no_pain is not None:
            unit = dataclasses.replace(unit, lines=tuple(dataclasses.replace(ln, feel_no_pain=request.feel_no_pain)
                                                         for ln in unit.lines))
    elif request.with_effects or request.without_effects or not _is_profile(request.target):
        # named rules, or a datasheet target whose own rules may apply by default (a standard or
        # inline profile has none: the effects are not even imported)
        from pipeline.effects.named import effects_for

        weapons, target, context, applied, effect_notes = effects_for(con, request, sheet, edition, weapons, target,
                                                                      context)
        notes.extend(effect_notes)
    attacker = sheet["name"] if sheet is not None else "custom weapon profile" + ("s" if len(custom) > 1 else "")
    if unit is None:
        result = exact.resolve(weapons, target, context)
        steps = explain_steps(con, result, context.edition) if explain else unexplained_steps(result, context.edition)
        return AttackOutcome(attacker, tuple(weapons), target, result, steps, tuple(notes), applied)
    from pipeline.engine.units import resolve_unit

    outcome = resolve_unit(weapons, unit, context, policy=request.allocation, objective=request.objective)
    first = unit.lines[0]
    target = dataclasses.replace(first.as_target(unit), name=unit.name)
    name = " + ".join([attacker, *request.leaders]) if request.leaders else attacker
    steps = (explain_steps(con, outcome.result, context.edition) if explain
             else unexplained_steps(outcome.result, context.edition))
    return AttackOutcome(name, tuple(weapons), target, outcome.result, steps, tuple(notes), applied, outcome)


def _is_profile(text: str) -> bool:
    """Whether a target text is a standard profile (``MEQ``) or an inline one (``T4 Sv3+ W2``),
    not a datasheet name.

    >>> _is_profile("meq"), _is_profile("T4 Sv3+ W2 x10"), _is_profile("Boyz")
    (True, True, False)
    """
    return text.strip().upper() in STANDARD_PROFILES or bool(_INLINE.search(text))


def _phase(con, sheet: dict | None, names: tuple[str, ...], custom: list[Weapon], notes: list[str]) -> Phase:
    """The phase of an attack given no ``--phase``: the fight phase when every weapon named is a
    melee weapon (a name of the datasheet ``sheet`` with melee profiles only, a custom profile
    with WS or ``Melee``), said in ``notes``; else the shooting phase."""
    kinds: list[tuple[str, bool]] = [(f"weapon profile {w.name!r}", w.is_melee) for w in custom]
    if sheet is not None and names:
        profiles = con.execute("SELECT DISTINCT weapon_name, is_melee FROM weapon_profiles WHERE datasheet_id = ?",
                               [sheet["datasheet_id"]]).fetchall()
        ranged = [n for n, melee in profiles if not melee]
        melee = [n for n, is_melee in profiles if is_melee]
        for asked in names:
            candidates = [asked, loadout_item(asked)[1] if COUNTED_ITEM.fullmatch(asked) else asked]
            candidates += [split_choice(c)[0] for c in candidates]
            if any(match_weapon(c, ranged) for c in candidates):
                kinds.append((asked, False))
            elif any(match_weapon(c, melee) for c in candidates):
                kinds.append((f"weapon {asked!r} of {sheet['name']}", True))
    if not kinds or not all(is_melee for _, is_melee in kinds):
        return "shooting"
    notes.append(f"{', '.join(what for what, _ in kinds)}: {'a melee weapon' if len(kinds) == 1 else 'melee weapons'}, "
                 "so the attack is resolved in the fight phase (as with --phase fight)")
    return "fight"


def _check_custom_phase(custom: list[Weapon], phase: Phase) -> None:
    """Raise ``InputError`` for a custom profile of the other phase than ``phase``."""
    for w in custom:
        if w.is_melee != (phase == "fight"):
            kind, other = ("a melee", "shooting") if w.is_melee else ("a ranged", "fight")
            raise InputError(f"weapon profile {w.name!r} is {kind} weapon, and the attack is in the {other} phase: "
                             f"resolve it with --phase {'fight' if w.is_melee else 'shooting'} (one phase per attack)")


def damaged_note(con, sheet: dict, edition: int) -> str:
    """The note for ``--damaged``: the attacker's Damaged profile from ``damaged_profiles`` (its
    wounds and text) and the -1 to the hit roll the engine applies (24.39 Damaged; the 10th
    edition's Damaged profiles), or that the database has no Damaged profile for the datasheet."""
    from pipeline.engine.declarations import rules_for

    modifier = rules_for(edition).damaged.hit_modifier
    rows = con.execute("SELECT min_wounds, max_wounds, text, hit_roll_modifier FROM damaged_profiles "
                       "WHERE datasheet_id = ? ORDER BY line", [sheet["datasheet_id"]]).fetchall()
    if not rows:
        return (f"attacker {sheet['name']}: --damaged: the database has no Damaged profile for "
                f"{sheet['datasheet_id']}; {modifier:+d} to the hit roll applied as asked")
    low, high, text, hit = rows[0]
    wounds = f"{low}-{high}" if low is not None and high is not None else f"at most {high}" if high else "?"
    said = "" if hit is None or hit == modifier else f" (its text gives {hit:+d}: not the one modelled)"
    return (f"attacker {sheet['name']}: damaged ({wounds} wounds remaining: {text.strip()!r}): "
            f"{modifier:+d} to the hit roll{said}")


def _leader_weapons(con, name: str, bodyguard: dict, request: AttackRequest, edition: int, notes: list[str],
                    target: Target, context: Context) -> list[Weapon]:
    """The weapons of a Leader attached to the attacking unit (its loadout for the phase), named
    ``"<Leader>: <weapon>"``; the link is checked (``from_db.check_leader``)."""
    from pipeline.engine.from_db import check_leader

    leader, _ = query.find_datasheet_preferring(con, name, edition)
    check_leader(con, leader, bodyguard)
    weapons = attacker_weapons(con, leader, request.phase, (), None, notes, target=target, context=context)
    return [dataclasses.replace(w, name=f"{leader['name']}: {w.name}") for w in weapons]


def _unit_effects(con, request: AttackRequest, sheet: dict | None, edition: int, weapons: list[Weapon], unit,
                  context: Context, parts: list):
    """``unit_effects.unit_effects`` for the attack of ``request``: the attacker's datasheet and
    its Leaders (``request.leaders``) as the attacking unit's parts, the factions of both units."""
    from pipeline.engine.unit_effects import SheetPart, unit_effects

    def keywords(row: dict) -> frozenset[str]:
        return frozenset(k for (k,) in con.execute("SELECT upper(keyword) FROM keywords WHERE datasheet_id = ?",
                                                   [row["datasheet_id"]]).fetchall())

    attacking = []
    if sheet is not None:
        attacking.append(SheetPart(sheet, "bodyguard", keywords(sheet), ()))
        for name in request.leaders:
            leader = query.find_datasheet_preferring(con, name, edition)[0]
            attacking.append(SheetPart(leader, "leader", keywords(leader), ()))
    factions = [f for f in dict.fromkeys(p.sheet.get("faction_id") for p in [*attacking, *parts]) if f]
    return unit_effects(con, request, edition, list(weapons), unit, context, parts, attacking, factions)


def _target_unit(con, request: AttackRequest, edition: int, notes: list[str]):
    """The ``UnitTarget`` of a target datasheet with several model profiles or with
    ``target_leaders``, with its ``SheetPart`` list (None for one profile, a standard or an
    inline profile)."""
    from pipeline.engine.from_db import unit_and_parts

    key = request.target.strip().upper()
    if key in STANDARD_PROFILES or _INLINE.search(request.target):
        if request.target_leaders:
            raise InputError(f"--target-leader needs a target unit of the database, not {request.target!r}")
        return None
    sheet, _ = query.find_datasheet_preferring(con, request.target, edition)
    leaders = [query.find_datasheet_preferring(con, n, edition)[0] for n in request.target_leaders]
    unit, parts = unit_and_parts(con, sheet, leaders, request.target_models, request.phase, [])
    if len(unit.lines) == 1:
        return None
    return unit, parts


def check_request(request: AttackRequest) -> None:
    """The limits of ``pipeline.limits`` on what a request names and counts, checked before the
    database is read: names of at most ``MAX_NAME_LENGTH`` characters, at most
    ``MAX_WEAPONS_PER_ATTACK`` weapons, ``--models`` and ``--target-models`` within bounds.
    Raises ``InputError`` saying the limit and the value given.

    >>> check_request(AttackRequest(attacker="Battle Sisters Squad", target="MEQ", models=2000))
    Traceback (most recent call last):
    ...
    pipeline.errors.InputError: --models 2000: at most 1000 models fire one weapon; give a smaller --models
    """
    if request.attacker_list is not None:
        check_name(request.attacker_list.unit, "unit name")
    elif request.attacker is None:
        if not request.weapon_profiles:
            raise InputError("no attacker and no weapon profile: name the attacking unit, or give its weapons "
                             'with --weapon-profile "A2 BS3+ S4 AP-1 D1"')
        if request.weapons:
            raise InputError(f"--weapon {request.weapons[0]!r} names a weapon of the attacking unit: name the unit "
                             "too, or describe the weapon with --weapon-profile")
    else:
        check_name(request.attacker, "unit name")
    if request.target_list is not None:
        check_name(request.target_list.unit, "unit name")
    else:
        check_name(request.target, "target")
    given = len(request.weapons) + len(request.weapon_profiles)
    if given > limits.MAX_WEAPONS_PER_ATTACK:
        raise limit_error(f"--weapon and --weapon-profile given {given} times",
                          f"at most {limits.MAX_WEAPONS_PER_ATTACK} weapon profiles in one attack",
                          "resolve them in several attacks")
    for weapon in request.weapons:
        check_name(weapon, "weapon name")
    for name in (*request.with_effects, *request.without_effects):
        check_name(name, "rule name")
    for profile in request.weapon_profiles:
        check_name(profile, "weapon profile")
    if request.models is not None and request.models > limits.MAX_MODELS_PER_WEAPON:
        raise limit_error(f"--models {request.models}", f"at most {limits.MAX_MODELS_PER_WEAPON} models fire one "
                          "weapon", "give a smaller --models")
    if request.target_models is not None and request.target_models > limits.MAX_TARGET_WOUNDS:
        raise limit_error(f"--target-models {request.target_models}",
                          f"at most {limits.MAX_TARGET_WOUNDS} wounds in the target unit (models x Wounds)",
                          "give fewer --target-models")


def _ordinal(edition: int) -> str:
    """``10`` -> ``10th`` (the editions are 10 and 11)."""
    return f"{edition}th"


def _other_edition_note(role: str, sheet: dict, edition: int) -> str:
    """The note for a unit whose datasheet is of another edition than the attack's.

    >>> _other_edition_note("target", {"name": "Exorcist", "edition": 10, "datasheet_id": "10e/x/exorcist"}, 11)
    "target 'Exorcist': its datasheet is from the 10th edition (10e/x/exorcist); its profiles are used under the 11th edition's rules"
    """
    return (f"{role} {sheet['name']!r}: its datasheet is from the {_ordinal(sheet['edition'])} edition "
            f"({sheet['datasheet_id']}); its profiles are used under the {_ordinal(edition)} edition's rules")


def explain_steps(con, result: AttackResult, edition: int) -> tuple[ExplainedStep, ...]:
    """Each step of ``result`` with the governing wording of its rule in ``edition`` for matched
    play (see ``pipeline.rules.governing_text``). A rule with no such wording gets None, and a
    note naming the wording stored for another game mode only (a Combat Patrol booklet), if any;
    no text is ever made up."""
    from pipeline.rules import governing_text

    out = []
    for step in result.steps:
        try:
            ruling = governing_text(con, step.rule_key, edition)
            out.append(ExplainedStep(step.rule_key, step.summary, edition, ruling.title, ruling.section,
                                     ruling.source_id, ruling.locator))
        except NotFoundError:
            out.append(ExplainedStep(step.rule_key, step.summary, edition, None, None, None, None,
                                     _other_mode_wording(con, step.rule_key, edition)))
    return tuple(out)


def unexplained_steps(result: AttackResult, edition: int) -> tuple[ExplainedStep, ...]:
    """Each step of ``result`` without its wording (not looked up: ``attack(..., explain=False)``)."""
    return tuple(ExplainedStep(step.rule_key, step.summary, edition, None, None, None, None,
                               "the wording is looked up with --explain") for step in result.steps)


def _other_mode_wording(con, rule_key: str, edition: int) -> str | None:
    """Where a wording of ``rule_key`` for another game mode than matched play is stored, if any."""
    try:
        rows = query.rule_texts(con, rule_key, edition)
    except NotFoundError:
        return None
    other = [r for r in rows if r["game_mode"] not in (None, "matched")]
    if not other:
        return None
    r = other[0]
    return f"{r['game_mode']} games only: {r['source_id']}, {r['locator']}"


Stage = Literal["attacks", "hits", "wounds", "unsaved", "mortal_wounds", "damage", "models_destroyed"]
STAGES: tuple[Stage, ...] = ("attacks", "hits", "wounds", "unsaved", "mortal_wounds", "damage", "models_destroyed")
