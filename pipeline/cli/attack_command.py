"""``wh40k attack``: exact distributions of an attack between two units.

The command's parameters are declared once, in ``ATTACK_PARAMS`` (``pipeline.cli.options``):
``pipeline.cli.attack`` registers ``attack_command`` with typer from them, and ``run_plain``
reads a plain command line from them without loading typer, click or pydantic's part of typer
(``pipeline.wh40k`` tries it first). This module loads no command-line library.
"""

from __future__ import annotations

import dataclasses
import math
import os
import sys
import threading
from enum import Enum
from pathlib import Path
from types import SimpleNamespace
from typing import TYPE_CHECKING, Any, Callable, List, Optional, Sequence, Tuple

from pipeline.cli.options import Param, parse
from pipeline.cli.output import cell, console, note, to_json
from pipeline.database import DEFAULT_DB

if TYPE_CHECKING:  # the engine (numpy) and rich are imported when the command runs
    from rich.console import Console

    from pipeline.engine.service import AttackOutcome


class PhaseChoice(str, Enum):
    shooting = "shooting"
    fight = "fight"


class RerollChoice(str, Enum):
    ones = "ones"
    failed = "failed"
    all = "all"


class TwinLinkedChoice(str, Enum):
    failed = "failed"
    non_critical = "non-critical"
    best = "best"


class ReductionChoice(str, Enum):
    one = "1"
    half = "half"


def damage_reductions(given: list[str]) -> tuple[str | None, int]:
    """The ``Context`` (``damage_reduction``, ``damage_modifier``) of repeated ``--damage-reduction``
    values: the Damage halved once (``half``), then 1 less for each ``1``, at least 1 (the engine
    halves first whatever the order given). Raises ``InputError`` for ``half`` given twice.

    >>> damage_reductions(["half", "1"]), damage_reductions(["1"]), damage_reductions(["1", "1"])
    (('half', -1), ('one', 0), ('one', -1))
    """
    from pipeline.errors import InputError

    if given.count("half") > 1:
        raise InputError("--damage-reduction half given twice: a Damage characteristic is halved once; "
                         "give half once, and 1 for each -1")
    ones = given.count("1")
    if "half" in given:
        return "half", -ones
    return ("one", 1 - ones) if ones else (None, 0)


class ObjectiveChoice(str, Enum):
    character = "character"
    models = "models"
    damage = "damage"


class AttackFormat(str, Enum):
    table = "table"
    json = "json"


def _between(low: int, high: int, example: str) -> Callable[[Optional[int]], Optional[str]]:
    """A check that allows ``low`` to ``high`` (the parser names the option).

    >>> _between(2, 6, "5 for 5+")(7), _between(10, 11, "an edition")(10)
    ('7 is not allowed; use 2 to 6 (5 for 5+)', None)
    """
    def check(value: Optional[int]) -> Optional[str]:
        if value is not None and not low <= value <= high:
            allowed = f"{low} or {high}" if high == low + 1 else f"{low} to {high}"
            return f"{value} is not allowed; use {allowed} ({example})"
        return None
    return check


def _at_least_one(value: Optional[int]) -> Optional[str]:
    if value is not None and value < 1:
        return f"{value} is not allowed; a unit has at least 1 model"
    return None


def _inches(value: Optional[float]) -> Optional[str]:
    """A check of a distance in inches: a finite number (``nan`` and ``inf`` are not distances).

    >>> _inches(float("nan")), _inches(float("inf")), _inches(2.5)
    ('nan is not allowed; give the inches as a number, e.g. 2.5', 'inf is not allowed; give the inches as a number, e.g. 2.5', None)
    """
    if value is not None and not math.isfinite(value):
        return f"{value} is not allowed; give the inches as a number, e.g. 2.5"
    return None


def _with_lists(request, attacker: Optional[str], attacker_list, target_list):
    """The request with the listed units of ``--list`` / ``--target-list`` (files read here)."""
    from pipeline.errors import InputError
    from pipeline.lists.attack_input import ListUnit

    def listed(pair, option: str) -> ListUnit:
        from pipeline.limits import MAX_LIST_BYTES

        path, unit = pair
        try:
            if path.stat().st_size > MAX_LIST_BYTES:
                raise InputError(f"{option} {path}: {path.stat().st_size} bytes: at most {MAX_LIST_BYTES} bytes in "
                                 "one army list; this is no army list")
            return ListUnit(path.read_bytes(), unit, str(path))
        except OSError as exc:
            raise InputError(f"{option} {path}: cannot read the file ({exc.strerror}); give the path of an "
                             "exported army list") from None

    if attacker_list is not None and attacker is not None:
        raise InputError(f"the attacker is given twice: {attacker!r} and --list; leave one out")
    if target_list is not None and request.target:
        raise InputError(f"the target is given twice: --target {request.target!r} and --target-list; leave one out")
    if target_list is None and not request.target:
        raise InputError("no target: give it with --target or --target-list THEIRS UNIT")
    return dataclasses.replace(
        request, attacker_list=listed(attacker_list, "--list") if attacker_list is not None else None,
        target_list=listed(target_list, "--target-list") if target_list is not None else None)


def outcome_as_dict(outcome: AttackOutcome) -> dict:
    """JSON-ready: inputs, each stage's mean and pmf, P(target destroyed). A weapon's ``models``
    is how many of it are fired (models times the number each carries)."""
    data = outcome.result.to_dict()
    data["attacker"] = outcome.attacker
    data["weapons"] = [
        {"name": w.name, "models": w.models, "attacks": w.attacks.text, "skill": w.skill,
         "strength": w.strength, "armour_penetration": w.armour_penetration, "damage": w.damage.text}
        for w in outcome.weapons
    ]
    t = outcome.target
    data["explain"] = [dataclasses.asdict(e) for e in outcome.explained]
    data["input_notes"] = list(outcome.notes)
    if outcome.listed is not None:
        data["listed"] = outcome.listed
    data["effects"] = [dataclasses.asdict(e) for e in outcome.effects]
    if outcome.unit is not None:
        unit = outcome.unit.to_dict()
        data["unit"] = {k: unit[k] for k in ("lines", "characters", "allocation_order", "objective", "profiles")}
    data["target"] = {"name": t.name, "toughness": t.toughness, "save": t.save, "wounds": t.wounds,
                      "models": t.models, "invulnerable_save": t.invulnerable_save,
                      "feel_no_pain": t.feel_no_pain, "keywords": sorted(t.keywords),
                      "model_profile": t.model_profile, "ignored_model_profiles": list(t.ignored_model_profiles)}
    return data


def choice_lines(choices: dict) -> list[str]:
    """The engine's choices for the attacker as text, one line each.

    >>> choice_lines({"rerolls": [{"weapon": "Boltgun", "roll": "wound", "policy": "failed", "faces": [1, 2, 3]}],
    ...               "Anti: Haywire blaster": "Anti-VEHICLE 4+"})
    ['Boltgun: re-roll failed wound rolls (the faces 1, 2, 3)', 'Anti: Haywire blaster: Anti-VEHICLE 4+']
    """
    lines = []
    for key, value in choices.items():
        if key == "rerolls" and isinstance(value, list):
            for r in value:
                faces = ", ".join(str(f) for f in r.get("faces", []))
                what = {"ones": f"{r['roll']} rolls of 1", "failed": f"failed {r['roll']} rolls"}.get(
                    r["policy"], f"{r['policy']} {r['roll']} rolls")
                lines.append(f"{r['weapon']}: re-roll {what}"
                             + (f" (the face{'s' if len(r.get('faces', [])) != 1 else ''} {faces})" if faces else ""))
        else:
            lines.append(f"{key}: {value}")
    return lines


def _render_explain(outcome: AttackOutcome, out: Console) -> None:
    from rich.table import Table

    table = Table(title="Steps and the rules applied", title_justify="left", show_lines=False)
    for col in ("rule", "edition / section", "source", "what it did"):
        table.add_column(col, overflow="fold")
    for e in outcome.explained:
        where = f"{e.edition}e" + (f" {e.section}" if e.section else "")
        source = (f"{e.source_id}, {e.locator}" if e.source_id
                  else f"(no matched-play wording; {e.note})" if e.note else "(wording not in the database)")
        table.add_row(*(cell(x) for x in (e.title or e.rule_key, where, source, e.summary)))
    for a in outcome.effects:
        table.add_row(*(cell(x) for x in (f"{a.rule_name} ({a.rule_kind}, {a.origin})", "", 
                                           f"{a.source_id}, {a.locator}: \"{a.wording}\"", a.did)))
    out.print(table)


def _render(outcome: AttackOutcome, explain: bool = False) -> None:
    from rich.table import Table

    from pipeline.engine.service import STAGES

    # Names are data, printed as they are (no markup, no emoji codes); lines are never wrapped.
    out = console()
    r = outcome.result
    t = outcome.target
    out.print(f"{outcome.attacker} attacks {t.name} "
              f"(T{t.toughness} {f'Sv{t.save}+' if t.save else 'Sv-'} W{t.wounds} x{t.models}"
              + (f" inv{t.invulnerable_save}+" if t.invulnerable_save else "")
              + (f" fnp{t.feel_no_pain}+" if t.feel_no_pain else "")
              + (f" fnp{t.feel_no_pain_mortal}+ vs mortal wounds" if t.feel_no_pain_mortal else "")
              + (f" fnp{t.feel_no_pain_psychic}+ vs psychic" if t.feel_no_pain_psychic else "")
              + ")", soft_wrap=True)
    for w in outcome.weapons:
        skill = f"{w.skill}+" if w.skill else "N/A"
        out.print(f"  {w.models} x {w.name}: A {w.attacks}, {'WS' if w.is_melee else 'BS'} {skill}, "
                  f"S {w.strength}, AP {w.armour_penetration}, D {w.damage}", soft_wrap=True)
    stages = Table(title="Per stage", title_justify="left")
    for col in ("stage", "mean", "p10", "median", "p90", "max (p>1e-12)"):
        stages.add_column(col, justify="left" if col == "stage" else "right", overflow="fold",
                          no_wrap=col == "stage")
    for name in STAGES:
        d = getattr(r, name)
        nonzero = [i for i, p in enumerate(d.pmf) if p > 1e-12]
        stages.add_row(name, f"{d.mean:.4f}", str(d.percentile(0.1)), str(d.percentile(0.5)),
                       str(d.percentile(0.9)), str(nonzero[-1] if nonzero else 0))
    out.print(stages)
    killed = r.models_destroyed
    hist = Table(title="Models destroyed", title_justify="left")
    for col in ("k", "P(exactly k)", "P(at least k)", ""):
        hist.add_column(col, justify="right" if col != "" else "left")
    for k, p in enumerate(killed.pmf):
        if k > 0 and killed.at_least(k) < 1e-6:
            break
        hist.add_row(str(k), f"{p:.4f}", f"{killed.at_least(k):.4f}", "█" * round(40 * p))
    out.print(hist)
    out.print(f"P(target unit destroyed) = {r.target_destroyed:.4f}", soft_wrap=True)
    if outcome.unit is not None:
        lines = Table(title="Models destroyed per model line", title_justify="left")
        for col in ("model line", "profile", "mean", "P(at least 1)", "P(all)"):
            lines.add_column(col, justify="left" if col in ("model line", "profile") else "right",
                             no_wrap=col in ("model line", "profile"))
        for name, d in outcome.unit.lines.items():
            lines.add_row(cell(name), cell(outcome.unit.profiles.get(name, "")), f"{d.mean:.4f}",
                          f"{d.at_least(1):.4f}", f"{float(d.pmf[-1]):.4f}")
        out.print(lines)
        for name, p in outcome.unit.characters.items():
            out.print(f"P({name} destroyed) = {p:.4f}", soft_wrap=True)
    if r.hazardous_mortal_wounds:
        out.print(f"Hazardous: expected mortal wounds suffered by the attacker = {r.hazardous_mortal_wounds:.4f}",
                  soft_wrap=True)
    for line in choice_lines(r.choices):
        out.print(f"choice: {line}", soft_wrap=True)
    if explain:
        _render_explain(outcome, out)



#: The parameters of ``wh40k attack``: the one declaration of its argument and options.
ATTACK_PARAMS: tuple[Param, ...] = (
    Param("attacker", Optional[str], None, help=(
        "Attacking unit: name or datasheet id (may be left out with --weapon-profile).")),
    Param("target", Optional[str], None, ("--target", "-t"), help=(
        "Target: a unit name, a standard profile (GEQ, MEQ, TEQ, VEHICLE, MONSTER) or an inline profile such "
        'as "T4 Sv3+ W2 x10 inv4+ fnp5+ INFANTRY" (or --target-list).')),
    Param("weapon", List[str], [], ("--weapon", "-w"), help=(
        "Weapon to use (repeatable), e.g. 'boltgun', 'plasma pistol (supercharge)' or, with how many are "
        "fired, '2 heavy bolters'. Default: the loadout (an error when it has no weapon for the phase). "
        "Without a number or --models, a weapon of the loadout is fired as often as the loadout has it, and "
        "an optional weapon (not in the loadout) by 1 model, said in a note.")),
    Param("weapon_profile", List[str], [], ("--weapon-profile",), help=(
        'A custom weapon (repeatable): "A2 BS3+ S4 AP-1 D1 [LETHAL HITS, RAPID FIRE 1]": A, BS or WS (WS: '
        'melee), S, AP, D (DD3+1 for Damage D3+1), an optional range (24" or Melee) and the abilities in '
        "brackets; fired by --models models (default 1), with the --weapon named or instead of the loadout.")),
    Param("models", Optional[int], None, ("--models",), check=_at_least_one, help=(
        "Models in the attacking unit (default: its smallest size; needed for a unit the database has no "
        "model count for); with --weapon or --weapon-profile, how many models fire each weapon.")),
    Param("target_models", Optional[int], None, ("--target-models",), check=_at_least_one, help=(
        "Models in the target unit (default: its smallest size; needed for a unit the database has no model "
        "count for).")),
    Param("phase", Optional[PhaseChoice], None, ("--phase",), help=(
        "shooting (ranged) or fight (melee); default: shooting, or fight when every weapon named is a melee "
        "weapon (said in a note).")),
    Param("half_range", bool, False, ("--half-range",), help="Within half range (Rapid Fire, Melta)."),
    Param("stationary", bool, False, ("--stationary",), help="Attacker Remained Stationary (Heavy)."),
    Param("charged", bool, False, ("--charged",), help="Attacker charged this turn (Lance)."),
    Param("cover", bool, False, ("--cover",), help="Target has the Benefit of Cover."),
    Param("overwatch", bool, False, ("--overwatch",), help="Fire Overwatch: hits only on unmodified 6s."),
    Param("damaged", bool, False, ("--damaged",), help=(
        "The attacking models are damaged (at or below their Damaged X / Damaged profile's wounds): -1 to the "
        "hit roll; the Damaged profile of the attacker's datasheet is named in a note.")),
    Param("indirect", bool, False, ("--indirect",), help=(
        "[INDIRECT FIRE] weapons fire indirectly (11th: indirect shooting, 10.07: benefit of cover, no hit "
        "re-rolls, an unmodified 1-5 fails; 10th: at a target with no visible model).")),
    Param("spotted", bool, False, ("--spotted",), help=(
        "With --indirect and --stationary (11th): the target is visible to a friendly unit, so an unmodified "
        "hit roll of 1-3 fails instead of 1-5.")),
    Param("close_quarters", bool, False, ("--close-quarters",), help=(
        "Close-quarters shooting while engaged (11th, 10.06): a MONSTER/VEHICLE attacker has -1 to hit except "
        "with [CLOSE-QUARTERS]/[PISTOL] weapons.")),
    Param("reroll_hits", Optional[RerollChoice], None, ("--reroll-hits",), help=(
        "Re-roll hit rolls: ones, failed or all.")),
    Param("reroll_wounds", Optional[RerollChoice], None, ("--reroll-wounds",), help=(
        "Re-roll wound rolls: ones, failed or all.")),
    Param("reroll_one_hit", bool, False, ("--reroll-one-hit",), help=(
        "The unit re-rolls one failed Hit roll (Command Re-roll), on the first weapon that can take it.")),
    Param("reroll_one_wound", bool, False, ("--reroll-one-wound",), help=(
        "The unit re-rolls one failed Wound roll, on the first weapon that can take it.")),
    Param("reroll_one_damage", bool, False, ("--reroll-one-damage",), help=(
        "The unit re-rolls one Damage roll: the first below the mean of the Damage dice, of the first weapon "
        "with a random Damage.")),
    Param("twin_linked", TwinLinkedChoice, TwinLinkedChoice.failed, ("--twin-linked",), help=(
        "[TWIN-LINKED]'s re-roll: failed (failed wound rolls), non-critical (every roll that is not a "
        "Critical Wound: fishing for Devastating Wounds / Anti) or best (the higher expected damage).")),
    Param("moved", Optional[float], None, ("--moved",), minimum=0, check=_inches, help=(
        'Inches the attacking unit\'s models moved this turn (11th [HEAVY], 24.16: +1 to hit if at most 3", '
        "the unit unengaged and not set up this turn; the 10th edition needs --stationary).")),
    Param("set_up_this_turn", bool, False, ("--set-up-this-turn",), help=(
        "The attacking unit was set up on the battlefield this turn (11th: no [HEAVY] bonus).")),
    Param("hit_mod", int, 0, ("--hit-mod",), help="Net hit roll modifier of other rules (capped at +/-1)."),
    Param("wound_mod", int, 0, ("--wound-mod",), help="Net wound roll modifier of other rules (capped)."),
    Param("crit_hit_on", int, 6, ("--crit-hits-on",), check=_between(2, 6, "5 for Critical Hits on 5+"), help=(
        "Unmodified hit roll that is a Critical Hit: 2 to 6 (5 for 5+).")),
    Param("fnp", Optional[int], None, ("--fnp",), check=_between(2, 6, "5 for Feel No Pain 5+"), help=(
        "Target's Feel No Pain: 2 to 6 (5 for 5+).")),
    Param("damage_reduction", List[ReductionChoice], [], ("--damage-reduction",), help=(
        "1 or half; repeatable, combined: half and 1 halve the Damage, then subtract 1 (at least 1).")),
    Param("edition", Optional[int], None, ("--edition",), check=_between(10, 11, "the 10th or the 11th edition"), help=(
        "10 or 11: the rules and the datasheets of attacker and target (default: the latest edition in the "
        "database). A unit with no datasheet of that edition uses another's, said in a note.")),
    Param("leader", List[str], [], ("--leader",), help=(
        "A Leader (or 11th-edition Support unit) attached to the attacking unit (repeatable): its loadout's "
        "weapons fire too. Checked against the units it can lead.")),
    Param("target_leader", List[str], [], ("--target-leader",), help=(
        "A Leader (or Support unit) attached to the target unit (repeatable): the target is then an Attached "
        "unit, allocated model by model, Bodyguard models before CHARACTER models.")),
    Param("allocation", str, "listed", ("--allocation",), help=(
        "The defender's allocation order for a unit of several model lines: listed (the order the rules "
        'imply, then as the datasheet lists the lines), reversed, or line names separated by commas ("Boss '
        'Nob,Boy").')),
    Param("objective", ObjectiveChoice, ObjectiveChoice.character, ("--objective",), help=(
        "What the attacker's Precision choices maximise: character (P(each CHARACTER destroyed)), models "
        "(expected models destroyed) or damage.")),
    Param("explain", bool, False, ("--explain",), help="List each step with the rule text it applied."),
    Param("with_effects", List[str], [], ("--with",), help=(
        "Apply a stratagem, order, ability, detachment rule, enhancement or army rule of the attacker's or "
        "the target's faction by name (repeatable), e.g. 'Take Aim!'; 'NAME: OPTION' picks an option of a "
        "choice.")),
    Param("detachment", Optional[str], None, ("--detachment",), help=(
        "The attacker's detachment: of --with names printed by several detachments (a stratagem and a "
        "detachment rule called alike), the one of this detachment.")),
    Param("without_effects", List[str], [], ("--without",), help=(
        "Turn off one of the target's own rules applied by default (Feel No Pain, damage reduction, Stealth, "
        "an invulnerable save, -1 to be hit or wounded), by name (repeatable).")),
    Param("db", str, str(DEFAULT_DB), ("--db",), help=(
        "Database: a DuckDB file, sqlite:///FILE or postgresql://USER@HOST/DB.")),
    Param("fmt", AttackFormat, AttackFormat.table, ("--format", "-f"), help="table or json."),
    Param("plot", Optional[Path], None, ("--plot",), help=(
        "Also draw the distributions of models destroyed and damage (P(exactly k) bars, P(at least k) line) "
        "into FILE.png or FILE.svg.")),
    Param("attacker_list", Optional[Tuple[Path, str]], None, ("--list",), help=(
        "MINE UNIT: the attacker is UNIT of the army list file MINE, as the list builds it (model lines, "
        'wargear, attached Leaders, Enhancements); "NAME#2" picks the second unit of a name.')),
    Param("target_list", Optional[Tuple[Path, str]], None, ("--target-list",), help=(
        "THEIRS UNIT: the target is UNIT of the army list file THEIRS, as the list builds it.")),
)


def attack_command(**values: Any) -> None:
    """Exact distributions of hits, wounds, damage and models destroyed (10th or 11th edition).

    Example: wh40k attack "Battle Sisters Squad" --target MEQ --half-range --edition 11 --explain

    Optional weapons: wh40k attack Servitors --weapon "2 heavy bolters" --target MEQ

    Rules by name: wh40k attack "Cadian Shock Troops" --target MEQ --with "Take Aim!" --edition 11

    A chart: wh40k attack "Battle Sisters Squad" --target MEQ --plot attack.svg

    Custom weapons: wh40k attack --weapon-profile "A2 BS3+ S4 AP-1 D1 [LETHAL HITS]" --models 5 --target MEQ

    Army lists: wh40k attack --list mine.txt "Khorne Berzerkers#2" --target-list theirs.txt "Crisis Battlesuits"
    """
    given = SimpleNamespace(**values)  # the values of ATTACK_PARAMS, by name
    duckdb_file = _duckdb_file(given.db)
    write_replica = False
    if duckdb_file is not None and not given.explain:  # --explain reads the rule wordings: DuckDB
        from pipeline.replica import open_replica

        served = open_replica(duckdb_file)
        if served is None:
            write_replica = True  # none, or a stale or damaged one: written after this answer
        else:
            from pipeline.errors import DatabaseError, Wh40kError

            try:
                outcome = _outcome(given, served)
            except Wh40kError as exc:  # a unit not found, a refused option: as DuckDB would say
                if isinstance(exc, DatabaseError):
                    outcome = None
                else:
                    raise
            except Exception:  # noqa: BLE001  (ReplicaMiss, or a value of the copy: DuckDB answers, or says why not)
                outcome = None
            finally:
                served.close()
            if outcome is not None:
                _show(given, outcome)
                return
    opening = _Opening(given.db)  # while the engine's modules load
    try:
        _show(given, _outcome(given, opening.connection))
        if write_replica:
            from pipeline.replica import write_replica as write

            sys.stdout.flush()  # the answer first, then the copy
            write(opening.connection(), duckdb_file)
    finally:
        opening.close()


def _duckdb_file(db: str) -> Path | None:
    """The DuckDB file ``--db`` names (None for a URL, or one that does not parse: its error is
    ``open_database``'s)."""
    from pipeline.targets import parse_target

    try:
        target = parse_target(db)
    except Exception:  # noqa: BLE001  (open_database says what is wrong with it, in one line)
        return None
    return target.path if target.backend == "duckdb" else None


def _outcome(given: SimpleNamespace, connection) -> "AttackOutcome":
    """The attack ``given`` asks for, read from ``connection`` (a connection, or a function that
    gives one once the request is checked)."""
    from pipeline.engine.profiles import Context
    from pipeline.engine.service import AttackRequest, attack_with, check_request

    if given.plot is not None:
        from pipeline.service.plot import check_plot_path

        check_plot_path(given.plot)

    reduction, damage_modifier = damage_reductions([r.value for r in given.damage_reduction])
    context = Context(
        half_range=given.half_range, stationary=given.stationary, charged=given.charged, cover=given.cover,
        overwatch=given.overwatch, damaged=given.damaged, indirect=given.indirect,
        target_visible_to_friendly_unit=given.spotted, close_quarters=given.close_quarters,
        reroll_hits=given.reroll_hits.value if given.reroll_hits else None,
        reroll_wounds=given.reroll_wounds.value if given.reroll_wounds else None,
        hit_modifier=given.hit_mod, wound_modifier=given.wound_mod, critical_hit_on=given.crit_hit_on,
        damage_reduction=reduction, damage_modifier=damage_modifier,
        reroll_one_hit=given.reroll_one_hit, reroll_one_wound=given.reroll_one_wound,
        reroll_one_damage=given.reroll_one_damage,
        twin_linked_reroll=given.twin_linked.value,
        moved_inches=given.moved, set_up_this_turn=given.set_up_this_turn,
    )
    request = AttackRequest(
        attacker=given.attacker, target=given.target, phase=given.phase.value if given.phase else None,
        weapons=tuple(given.weapon), models=given.models, target_models=given.target_models,
        feel_no_pain=given.fnp, context=context, edition=given.edition,
        with_effects=tuple(given.with_effects), without_effects=tuple(given.without_effects),
        detachment=given.detachment,
        target_leaders=tuple(given.target_leader), leaders=tuple(given.leader),
        allocation=given.allocation if given.allocation in ("listed", "reversed")
        else tuple(n.strip() for n in given.allocation.split(",") if n.strip()),
        objective=given.objective.value,
        weapon_profiles=tuple(given.weapon_profile),
    )
    if given.attacker_list is not None or given.target_list is not None:
        request = _with_lists(request, given.attacker, given.attacker_list, given.target_list)
    elif given.target is None:
        from pipeline.errors import InputError

        raise InputError("no target: give it with --target (a unit, MEQ, or an inline profile) or --target-list "
                         "THEIRS UNIT")
    check_request(request)  # before the database is read, as pipeline.engine.service.attack
    return attack_with(connection() if callable(connection) else connection, request, explain=given.explain)


def _show(given: SimpleNamespace, outcome: "AttackOutcome") -> None:
    """Print ``outcome`` as ``--format`` asks (notes on stderr), and draw ``--plot``."""
    for line in outcome.notes:
        note(line)
    if given.fmt is AttackFormat.json:
        print(to_json(outcome_as_dict(outcome)))
    else:
        _render(outcome, given.explain)
    if given.plot is not None:
        from pipeline.service.plot import plot_attack

        plot_attack(outcome_as_dict(outcome), given.plot)
        note(f"chart written to {given.plot}")


class _Opening:
    """The database of ``--db`` being opened (``query.open_database``: read-only, sandboxed, its
    schema checked) in a thread of its own, while the command's other modules load: DuckDB opens
    the file and reads its catalog outside Python's lock, so with a second core free the opening
    (about 70 ms) hides behind the imports of numpy and the engine. A SQLAlchemy URL is opened
    when asked for (its libraries would load in both threads at once). ``connection()`` waits for
    it and raises what ``open_database`` raised; ``close()`` closes what was opened."""

    def __init__(self, db: str) -> None:
        from pipeline.targets import parse_target

        self._db, self._con, self._error = db, None, None
        self._thread: threading.Thread | None = None
        try:
            in_thread = parse_target(db).backend == "duckdb"
        except Exception:  # an unreadable URL: open_database says so, in the main thread
            in_thread = False
        if in_thread:
            import schemas.catalog  # noqa: F401  (what the thread imports, loaded here: no import in two threads)

            self._thread = threading.Thread(target=self._open, name="open-database", daemon=True)
            self._thread.start()

    def _open(self) -> None:
        from pipeline import query

        try:
            self._con = query.open_database(self._db)
        except BaseException as exc:  # raised in the main thread by connection()
            self._error = exc

    def connection(self):
        """The opened connection (``duckdb.DuckDBPyConnection`` or a ``SqlConnection``); raises
        what ``query.open_database`` raises (``DatabaseError``, ``InputError``)."""
        if self._thread is None:
            from pipeline import query

            if self._con is None:
                self._con = query.open_database(self._db)
            return self._con
        self._thread.join()
        if self._error is not None:
            raise self._error
        return self._con

    def close(self) -> None:
        if self._thread is not None:
            self._thread.join()
        if self._con is not None:
            self._con.close()


def run_plain(argv: Sequence[str]) -> int | None:
    """Run ``wh40k attack`` on its own arguments ``argv`` when they are a plain command line
    (``pipeline.cli.options.parse``), without typer: the exit status (0, or 1 after the one
    ``Error: ...`` line of an expected error, ``pipeline.cli.failures``). None when ``argv`` is
    not plain or holds text that is not UTF-8: then the command line parses it itself (its help,
    its usage errors). Raises what the command raises for a bug."""
    from pipeline.cli.failures import failure_status, undecodable_argument
    from pipeline.commands import INTERRUPTED

    if undecodable_argument(argv) is not None:
        return None
    values = parse(ATTACK_PARAMS, argv)
    if values is None:
        return None
    try:
        attack_command(**values)
        sys.stdout.flush()
    except KeyboardInterrupt:  # Ctrl-C while the attack runs: it has written nothing yet
        print(INTERRUPTED, file=sys.stderr)
        return 130
    except BrokenPipeError:  # the reader of stdout has gone (``| head``): as click, status 1, silent
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())  # no second error at exit
        return 1
    except Exception as exc:
        status = failure_status(exc)
        if status is None:
            raise
        return status
    return 0
