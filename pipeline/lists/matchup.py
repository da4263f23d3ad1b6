"""Two army lists against each other: every unit of one attacking every unit of the other.

``matchup(con, mine, theirs, phases, edition)`` takes two matched lists
(``pipeline.lists.match.MatchedList``) and gives one row per (attacking unit, target unit,
phase): the expected models destroyed, P(target unit destroyed) and the expected damage (mean
damage points after Feel No Pain, before excess is lost), the units built as
``wh40k attack --list ... --target-list ...`` builds them (``pipeline.lists.attack``): model
lines, the list's wargear, Attached units, the target's own protective rules applied by default
and Enhancements applied where the ``effects`` table has them. No situational option (no cover,
not stationary, not charged, full range).

Speed: each distinct (weapons fired, target, context) is resolved once (a cache: a list often
has the same unit twice); a one-weapon attack on a target of one model line goes to the batch
engine (``pipeline.engine.batch.resolve_batch``, one call per context), a unit of several
weapons on such a target to ``exact.resolve``, a target of several model lines or an Attached
unit to the unit engine (``pipeline.engine.units.resolve_unit``). A unit attack the unit engine
refuses as too large (``MAX_UNIT_WORK``) is simulated (``simulate_units``, ``SIMULATED_TRIALS``
trials, seed 0), its ``method`` saying so.
"""

from __future__ import annotations

import dataclasses
import time
from dataclasses import dataclass, field
from typing import Callable, Sequence

import duckdb
import numpy as np

from pipeline.engine import exact
from pipeline.engine.batch import resolve_batch, target_key, weapon_key
from pipeline.engine.profiles import Context
from pipeline.lists.attack import TableUnit, UnitBuilder, listed_enhancement_effects, table_units
from pipeline.lists.match import MatchedList

#: The columns of a matchup row, in order.
COLUMNS = ("attacker", "target", "phase", "weapons", "target_models", "expected_models_destroyed",
           "p_unit_destroyed", "expected_damage", "method")
#: The most work (multiply-adds, all runs) of the 11th edition's save rolls resolved together,
#: lowest result first (05.04), in one matchup attack; above it the unit's saves are rolled one
#: at a time, as in the 10th edition, and the row's ``method`` says so.
FACE_ORDERED_WORK = 20_000_000
#: Trials of the simulator for a unit attack too large for the exact unit engine.
SIMULATED_TRIALS = 4000
PHASES = ("shooting", "fight")


@dataclass
class MatchupResult:
    """``rows``: one dict per (attacker, target, phase) with ``COLUMNS``; ``notes``: what the
    lists gave that is not used (units unmatched, Leaders standing on their own, Enhancements
    not applied), once each; ``counts``: pairs, distinct attacks resolved and how (``batch``,
    ``exact``, ``unit``, ``simulated``, ``no-weapon``, ``refused``); ``seconds``: wall time."""

    rows: list[dict] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)
    counts: dict[str, int] = field(default_factory=dict)
    seconds: float = 0.0
    edition: int = 0

    def summary(self) -> dict:
        """The counts, the time, and per attacking unit its best row (most expected models
        destroyed)."""
        best: dict[str, dict] = {}
        for row in self.rows:
            current = best.get(row["attacker"])
            if row["expected_models_destroyed"] == row["expected_models_destroyed"] and (
                    current is None or row["expected_models_destroyed"] > current["expected_models_destroyed"]):
                best[row["attacker"]] = row
        return {"edition": self.edition, "seconds": round(self.seconds, 3), **self.counts,
                "best": [{"attacker": a, "target": r["target"], "phase": r["phase"],
                          "expected_models_destroyed": r["expected_models_destroyed"]} for a, r in best.items()]}


def matchup(con: duckdb.DuckDBPyConnection, mine: MatchedList, theirs: MatchedList,
            phases: Sequence[str] = PHASES, edition: int | None = None,
            progress: Callable[[str], None] | None = None, reuse: bool = True) -> MatchupResult:
    """Every unit of ``mine`` against every unit of ``theirs`` in each of ``phases`` (module
    docstring), under ``edition``'s rules (None: ``mine``'s edition). Pure but for reading the
    database; ``progress`` gets one line per attacking unit. Rows are in list order: attacker,
    then phase, then target. An attack the engines refuse has NaN figures and its reason in
    ``method``; a unit with no weapon of the phase has 0s and method ``no weapon``. ``reuse``
    False resolves every pair on its own, one-weapon pairs by ``exact.resolve`` (no cache, no batch
    engine: the benchmark's reference)."""
    started = time.perf_counter()
    edition = edition or mine.edition
    builder = UnitBuilder(con, edition)
    context = Context(edition=edition)
    out = MatchupResult(edition=edition)
    notes: list[str] = []
    attackers, targets = table_units(mine, notes), table_units(theirs, notes)
    counts = dict.fromkeys(("pairs", "distinct", "batch", "exact", "unit", "simulated", "no-weapon", "refused"), 0)
    cache: dict[tuple, tuple] = {}
    pending: list[tuple[dict, tuple]] = []  # rows whose figures the batch engine gives
    batch_pairs: dict[Context, dict[tuple, tuple]] = {}
    for k, attacker in enumerate(attackers):
        if progress:
            progress(f"[{k + 1}/{len(attackers)}] {attacker.label}")
        sheet = builder.sheet(mine.units[attacker.bodyguard].datasheet_id).row
        keywords = frozenset(kw for (kw,) in con.execute(
            "SELECT upper(keyword) FROM keywords WHERE datasheet_id = ?", [sheet["datasheet_id"]]).fetchall())
        own = dataclasses.replace(context, attacker_keywords=keywords)
        for phase in phases:
            phase_context = dataclasses.replace(own, cover=False) if phase == "fight" else own
            for defender in targets:
                counts["pairs"] += 1
                row = {"attacker": attacker.label, "target": defender.label, "phase": phase}
                out.rows.append(row)
                key, how = _prepare(builder, mine, theirs, attacker, defender, phase, phase_context, notes)
                row["weapons"] = how["weapons"]
                row["target_models"] = how["unit"].models
                if key is None:
                    counts["no-weapon"] += 1
                    row.update(expected_models_destroyed=0.0, p_unit_destroyed=0.0, expected_damage=0.0,
                               method="no weapon")
                    continue
                if reuse and key in cache:
                    row.update(cache[key])
                    continue
                counts["distinct"] += 1
                if reuse and how["batch"]:
                    batch_pairs.setdefault(how["context"], {})[key] = (how["weapons_fired"][0], how["target"])
                    pending.append((row, key))
                    counts["batch"] += 1
                    continue
                figures = _resolve(how, counts)
                cache[key] = figures
                row.update(figures)
    for ctx, pairs in batch_pairs.items():
        weapons = list(dict.fromkeys(weapon_key(w) for w, _ in pairs.values()))
        targets = list(dict.fromkeys(target_key(t) for _, t in pairs.values()))
        result = resolve_batch(weapons, targets, ctx)
        for key, (w, t) in pairs.items():
            figures = result.figures(weapons.index(weapon_key(w)), targets.index(target_key(t)))
            cache[key] = {"expected_models_destroyed": figures["expected_models_destroyed"],
                          "p_unit_destroyed": figures["p_unit_destroyed"],
                          "expected_damage": figures["expected_damage"], "method": "batch"}
    for row, key in pending:
        row.update(cache[key])
    for row in out.rows:
        row.update({c: row.get(c) for c in COLUMNS if c not in row})
        for c in ("expected_models_destroyed", "p_unit_destroyed", "expected_damage"):
            row[c] = float(row[c])
    out.rows = [{c: row[c] for c in COLUMNS} for row in out.rows]
    out.notes = list(dict.fromkeys(notes))
    out.counts = counts
    out.seconds = time.perf_counter() - started
    return out


def _prepare(builder: UnitBuilder, mine: MatchedList, theirs: MatchedList, attacker: TableUnit, defender: TableUnit,
             phase: str, context: Context, notes: list[str]) -> tuple[tuple | None, dict]:
    """The cache key of one attack and what resolving it needs (weapons after effects, target,
    unit, context, whether it goes to the batch engine)."""
    from pipeline.effects.apply import apply_effects

    own: list[str] = []  # per-pair notes (the melee weapon chosen...) are not repeated per row
    unit = builder.target(theirs, defender, phase, own)
    target = dataclasses.replace(unit.lines[0].as_target(unit), name=unit.name)
    weapons = builder.weapons(mine, attacker, phase, target, context, own)
    notes.extend(n for n in own if "not fired" in n or "matches no" in n)
    how = {"weapons": sum(w.models for w in weapons), "unit": unit}
    if not weapons:
        return None, how
    one_line = len(unit.lines) == 1 and not unit.attached
    if one_line:
        effects = list(builder.target_defaults(theirs.units[defender.bodyguard].datasheet_id))
    else:  # the rules of an Attached or mixed unit's datasheets, on the model lines they are for
        weapons, unit, context = _unit_rules(builder, mine, theirs, attacker, defender, phase, weapons, unit,
                                             context)
        effects = []
    effects += listed_enhancement_effects(builder, mine, attacker, "attacker", notes)[0]
    effects += listed_enhancement_effects(builder, theirs, defender, "target", notes)[0]
    if effects:
        weapons, target, context, _ = apply_effects(effects, weapons, target, context, phase)
    unit_key = None if one_line else dataclasses.replace(unit, name="", lines=tuple(
        dataclasses.replace(ln, name="", unit="") for ln in unit.lines))
    key = (tuple(weapon_key(w) for w in weapons), target_key(target), unit_key, context)
    how.update(weapons_fired=weapons, target=target, unit=unit, context=context, one_line=one_line,
               batch=one_line and len(weapons) == 1)
    return key, how


def _unit_rules(builder: UnitBuilder, mine: MatchedList, theirs: MatchedList, attacker: TableUnit,
                defender: TableUnit, phase: str, weapons: list, unit, context: Context):
    """(weapons, unit, context) with the target unit's datasheets' rules applied by default, each on
    the model lines it is for (``unit_effects``, as ``attack --target-list`` applies them)."""
    from pipeline.engine import service

    request = service.AttackRequest(attacker=None, target="", phase=phase, edition=builder.edition)  # type: ignore[arg-type]
    sheet = builder.sheet(mine.units[attacker.bodyguard].datasheet_id).row
    weapons, unit, context, _, _ = service._unit_effects(builder.con, request, sheet, builder.edition, weapons, unit,
                                                         context, builder.target_parts(theirs, defender, phase))
    return weapons, unit, context


def _resolve(how: dict, counts: dict[str, int]) -> dict:
    """The figures of one attack by ``exact.resolve``, the unit engine or the simulator."""
    weapons, target, unit, context = how["weapons_fired"], how["target"], how["unit"], how["context"]
    try:
        if how["one_line"]:
            result = exact.resolve(weapons, target, context)
            counts["exact"] += 1
            return _figures(result, "exact")
        try:
            figures = unit_figures(weapons, unit, context)
            counts["unit"] += 1
            return figures
        except exact.EngineInputError as exc:
            if "steps of the unit engine" not in str(exc) and "allocation states" not in str(exc):
                raise
        from pipeline.engine.simulate_units import simulate_unit

        trials = simulate_unit(weapons, unit, context, trials=SIMULATED_TRIALS, seed=0)
        destroyed = trials.lines.sum(axis=1)
        counts["simulated"] += 1
        return {"expected_models_destroyed": float(destroyed.mean()),
                "p_unit_destroyed": float((destroyed == unit.models).mean()),
                "expected_damage": float(trials.damage.mean()),
                "method": f"simulated ({SIMULATED_TRIALS} trials, seed 0)"}
    except exact.EngineInputError as exc:
        counts["refused"] += 1
        return {"expected_models_destroyed": np.nan, "p_unit_destroyed": np.nan, "expected_damage": np.nan,
                "method": f"refused: {exc}"}


#: The step of the complex-step derivative of the damage generating function (``unit_figures``).
_STEP = 1e-7


def unit_figures(weapons, unit, context: Context) -> dict:
    """The matchup figures of ``weapons`` against the ``units.UnitTarget`` ``unit``, from the unit
    engine's chain (``pipeline.engine.units``) run once per Precision option at z = 1 (the models
    destroyed) and once at z = exp(i h) with the damage counter: E[damage] = Im G(e^{ih}) / h for the
    damage points' generating function G, exact to about h^2 E[D^3] / E[D] (h = 1e-7), where
    ``resolve_unit`` evaluates G at as many roots of unity as damage points are possible (its whole
    distribution). Precision: the option with the most expected models destroyed. Raises
    ``EngineInputError`` as ``resolve_unit`` does (a chain too large)."""
    from itertools import product

    from pipeline.engine import units

    units._validate_unit(unit)
    b_order, c_order = units.allocation_order(unit, context.edition, "listed")
    chain = units._Chain(unit, b_order, c_order, units._labels(unit, b_order + c_order), context)
    plans = chain.plans(list(weapons), [], {})
    can = [chain.has_characters and any(p.weapon.precision for p in per_t.values()) for per_t in plans]
    options = list(product(*[(False, True) if c else (False,) for c in can]))
    method = "unit"
    if _work(chain, plans) * (len(options) + 1) > FACE_ORDERED_WORK:
        ordered = [p for per_t in plans for p in per_t.values() if p.face_ordered]
        if ordered:
            for p in ordered:
                p.face_ordered = False
            method = "unit, saves one at a time"
    if _work(chain, plans) * (len(options) + 1) > units.MAX_UNIT_WORK:
        raise exact.EngineInputError(f"this attack needs about {_work(chain, plans):.2g} steps of the unit engine")
    best = None
    for option in options:
        models = chain.models_pmf(chain.run(plans, option))
        mean = float(np.arange(models.size) @ models)
        if best is None or mean > best[0] + 1e-12:
            best = (mean, option, models)
    mean, option, models = best
    g = chain.run(plans, option, complex(np.exp(1j * _STEP)), "damage").sum()
    return {"expected_models_destroyed": mean, "p_unit_destroyed": float(models[-1]),
            "expected_damage": float(g.imag / _STEP), "method": method}


def _work(chain, plans) -> int:
    """Multiply-adds of one run of the chain (``units._Chain.check_work`` with no counter)."""
    work = 0
    for per_t in plans:
        for p in per_t.values():
            events = p.counts.to_save.size + (p.counts.joint.shape[1] if p.counts.joint is not None else 0)
            work += events * (6 * events if p.face_ordered else 1) * chain.size * chain.size * p.pending_factor
    return work


def _figures(result, method: str) -> dict:
    return {"expected_models_destroyed": result.models_destroyed.mean, "p_unit_destroyed": result.target_destroyed,
            "expected_damage": result.damage.mean, "method": method}
