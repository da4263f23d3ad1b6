"""The batch engine: many weapon profiles against many targets in one call.

``resolve_batch(weapons, targets, context)`` gives, for every (weapon, target) pair, the four
figures of ``pipeline.engine.exact.resolve`` with one weapon: expected damage, expected models
destroyed, P(at least one model destroyed) and P(every model destroyed), as arrays of shape
``(len(weapons), len(targets))``.

The rules are not re-encoded here. Each distinct pair's per-weapon plan (hit, wound and save
probabilities, the distributions of each stage, the damage per event) comes from the exact
engine's own planning step, which reads the edition declarations (``edition_rules.toml`` via
``pipeline.engine.declarations``). What is batched is the rest:

- Dedupe: two weapon profiles that differ only by name (same characteristics, abilities and
  models) and two targets that differ only by name resolve the same, so each distinct pair is
  resolved once and its figures copied to every pair it stands for.
- The allocation chain, vectorised: for a weapon without Devastating Wounds the models destroyed
  are ``sum_u P(unsaved = u) x0 T^u`` (``exact._chain`` with one weapon), with ``T`` the
  transition of one unsaved event. Pairs are grouped by (damage per event, target models,
  Wounds): each group's powers ``x0 T^u`` are built once and every pair of the group is one row
  of a single matrix product ``P @ powers``.
- Plans shared: the plan reads only part of a target (``plan_target``: not its Wounds, its model
  count only for [BLAST] and [CLEAVE]), so targets equal in that part share one plan.
- Fallback: a pair whose weapon has Devastating Wounds events (the chain carries a joint count)
  is resolved by ``exact.resolve`` itself; ``BatchResult.fallback_pairs`` counts them. A pair the
  exact engine refuses (``EngineInputError``: a target over the wound limit...) is NaN in every
  figure and counted in ``refused_pairs`` with the first reason.
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass, field
from typing import Callable, Sequence

import numpy as np

from pipeline.engine import exact
from pipeline.engine.declarations import rules_for
from pipeline.engine.profiles import Context, Target, Weapon

#: The figures of a batch, in the order of ``BatchResult.figures``.
FIGURES = ("expected_damage", "expected_models_destroyed", "p_any_destroyed", "p_unit_destroyed")


@dataclass(frozen=True)
class BatchResult:
    """Figures of every (weapon, target) pair: each array has shape ``(n_weapons, n_targets)``,
    float64; NaN where the exact engine refuses the pair.

    ``expected_damage``: mean damage points after Feel No Pain, before excess is lost (the
    ``damage`` stage of ``AttackResult``); ``expected_models_destroyed``: mean target models
    destroyed; ``p_any_destroyed``: P(at least one model destroyed); ``p_unit_destroyed``:
    P(every model destroyed) (``AttackResult.target_destroyed``).
    ``weapon_index[i]`` / ``target_index[j]``: the distinct weapon / target that input i / j is
    (indices into ``distinct_weapons`` / ``distinct_targets``).
    Counts: ``distinct_pairs`` resolved, of which ``vectorised_pairs`` in the batched chain,
    ``fallback_pairs`` by ``exact.resolve`` one at a time, ``refused_pairs`` refused;
    ``refusals`` maps each refusal message (of the first pair refused for it) to its count.
    """

    expected_damage: np.ndarray
    expected_models_destroyed: np.ndarray
    p_any_destroyed: np.ndarray
    p_unit_destroyed: np.ndarray
    weapon_index: np.ndarray
    target_index: np.ndarray
    distinct_weapons: tuple[Weapon, ...]
    distinct_targets: tuple[Target, ...]
    distinct_pairs: int
    vectorised_pairs: int
    fallback_pairs: int
    refused_pairs: int
    refusals: dict[str, int] = field(default_factory=dict)
    #: the figures per distinct pair, shape (4, n_distinct_weapons, n_distinct_targets), FIGURES order
    distinct_figures: np.ndarray = field(default_factory=lambda: np.zeros((4, 0, 0)))
    #: the distinct pairs (i, j) resolved by ``exact.resolve`` (the fallback)
    fallback_index: tuple[tuple[int, int], ...] = ()

    def figures(self, i: int, j: int) -> dict[str, float]:
        """The four figures of weapon ``i`` against target ``j`` (input indices), by name."""
        return {name: float(getattr(self, name)[i, j]) for name in FIGURES}


def weapon_key(weapon: Weapon) -> Weapon:
    """What the attack reads of a weapon: the weapon without its name (a hashable Weapon).

    >>> from pipeline.engine.profiles import Weapon
    >>> from schemas.types import DiceExpr
    >>> one = DiceExpr(text="1", dice_count=0, dice_sides=0, modifier=1)
    >>> a = Weapon(name="a", attacks=one, skill=3, strength=4, armour_penetration=0, damage=one)
    >>> weapon_key(a) == weapon_key(dataclasses.replace(a, name="b"))
    True
    """
    return dataclasses.replace(weapon, name="")


def target_key(target: Target, keywords: frozenset[str] | None = None) -> Target:
    """What the attack reads of a target: the target without its name and the names of its model
    lines (a hashable Target); with ``keywords``, only its keywords among them (the engine reads a
    target's keywords only for Anti and keyword-restricted abilities: ``relevant_keywords``).

    >>> from pipeline.engine.profiles import Target
    >>> t = Target(toughness=4, save=3, wounds=2, keywords=frozenset({"INFANTRY", "IMPERIUM"}), name="a")
    >>> sorted(target_key(t, frozenset({"INFANTRY"})).keywords), target_key(t).name
    (['INFANTRY'], '')
    """
    kept = target.keywords if keywords is None else target.keywords & keywords
    return dataclasses.replace(target, name="", model_profile=None, ignored_model_profiles=(), keywords=kept)


def relevant_keywords(weapons: Sequence[Weapon]) -> frozenset[str]:
    """The target keywords any of ``weapons`` reads: its Anti keywords and the words of its
    keyword conditions (``profiles.keyword_condition_holds``: ``MONSTER/VEHICLE``, ``non-...``).

    >>> from pipeline.engine.profiles import Anti, Weapon
    >>> from schemas.types import DiceExpr
    >>> one = DiceExpr(text="1", dice_count=0, dice_sides=0, modifier=1)
    >>> w = Weapon(name="w", attacks=one, skill=3, strength=4, armour_penetration=0, damage=one,
    ...            anti=(Anti("infantry", 4),), conditions=(("lethal_hits", "non-MONSTER/VEHICLE"),))
    >>> sorted(relevant_keywords([w]))
    ['INFANTRY', 'MONSTER', 'VEHICLE']
    """
    words: set[str] = set()
    for weapon in weapons:
        words.update(a.keyword.upper() for a in weapon.anti)
        for _, condition in weapon.conditions:
            text = condition.strip()
            if text.lower().startswith("non-"):
                text = text[4:]
            words.update(part.strip().upper() for part in text.replace(" or ", "/").split("/") if part.strip())
    return frozenset(words)


def _distinct(items: Sequence, key: Callable) -> tuple[list, np.ndarray]:
    """(the distinct keys in first-seen order, the index of each item's key).

    >>> _distinct(["a", "b", "a"], str.upper)
    (['A', 'B'], array([0, 1, 0]))
    """
    seen: dict = {}
    index = np.empty(len(items), dtype=np.int64)
    for n, item in enumerate(items):
        index[n] = seen.setdefault(key(item), len(seen))
    return list(seen), index


def plan_target(weapon: Weapon, target: Target) -> Target:
    """The part of ``target`` the exact engine's plan of ``weapon`` reads (``exact._plan``: T, Sv,
    InSv, Feel No Pain, keywords, Stealth; the model count only as fives of models for [BLAST] and
    [CLEAVE]; never the Wounds, which only the allocation chain reads): targets equal in it share
    one plan. The batch tests check the claim pair by pair against ``exact.resolve``.

    >>> from pipeline.engine.profiles import Target, Weapon
    >>> from schemas.types import DiceExpr
    >>> one = DiceExpr(text="1", dice_count=0, dice_sides=0, modifier=1)
    >>> w = Weapon(name="w", attacks=one, skill=3, strength=4, armour_penetration=0, damage=one, blast=1)
    >>> [(t.models, t.wounds) for t in (plan_target(w, Target(4, 3, 2, models=m)) for m in (3, 12))]
    [(1, 1), (10, 1)]
    """
    models = 1
    if (weapon.blast or weapon.cleave) and target.models >= 5:
        models = target.models // 5 * 5
    return dataclasses.replace(target, models=models, wounds=1)


def _plan(weapon: Weapon, target: Target, context: Context) -> "exact._Plan":
    """The exact engine's plan of one weapon against one target: the same preamble as
    ``exact.resolve`` (validation, keyword-restricted abilities, characteristic limits)."""
    exact._validate([weapon], target, context)
    rules = rules_for(context.edition)
    steps: list = []
    weapon = exact._limited(exact._against(weapon, target, steps), rules, steps)
    return exact._plan(weapon, target, context, steps, {})


def resolve_batch(weapons: Sequence[Weapon], targets: Sequence[Target], context: Context | None = None,
                  progress: Callable[[int, int], None] | None = None) -> BatchResult:
    """Resolve every weapon of ``weapons`` (each alone, fired by its ``models`` models) against
    every target of ``targets`` under ``context`` (default: 10th edition, no situational option).

    Returns a ``BatchResult`` (arrays of shape ``(len(weapons), len(targets))``), equal to
    ``exact.resolve([weapon], target, context)`` pair by pair (to float rounding, and the exact
    engine's 1e-15 tail cuts). ``progress(done, total)`` is called with the distinct weapons
    done. Raises ``exact.EngineInputError`` for an invalid context (an edition other than 10 or
    11); a refused pair is NaN, not an error (see ``BatchResult.refusals``).
    """
    context = context or Context()
    if context.edition not in (10, 11):
        raise exact.EngineInputError(f"context edition must be 10 or 11, got {context.edition!r}")
    distinct_w, w_index = _distinct(weapons, weapon_key)
    keywords = relevant_keywords(distinct_w)
    distinct_t, t_index = _distinct(targets, lambda t: target_key(t, keywords))
    figures = np.full((4, len(distinct_w), len(distinct_t)), np.nan)
    groups: dict[tuple, list[tuple[int, int, np.ndarray]]] = {}
    refusals: dict[str, int] = {}
    fallback: list[tuple[int, int]] = []
    refused = 0
    target_refusal: dict[int, str] = {}
    for j, target in enumerate(distinct_t):
        try:
            exact._validate_target(target)
        except exact.EngineInputError as error:
            target_refusal[j] = str(error)
    plans: dict[Target, "exact._Plan | str"] = {}
    work_checked: dict[tuple, str | None] = {}
    for i, weapon in enumerate(distinct_w):
        for j, target in enumerate(distinct_t):
            try:
                if j in target_refusal:
                    raise exact.EngineInputError(target_refusal[j])
                reduced = plan_target(weapon, target)
                plan = plans.get(reduced)
                if plan is None:
                    try:
                        plan = plans[reduced] = _plan(weapon, reduced, context)
                    except exact.EngineInputError as error:
                        plan = plans[reduced] = str(error)
                if isinstance(plan, str):
                    raise exact.EngineInputError(plan)
                checked = (reduced, target.models, target.wounds)  # the check reads the plan and these
                if checked not in work_checked:
                    try:
                        exact._check_chain_work([plan], target)
                        work_checked[checked] = None
                    except exact.EngineInputError as error:
                        work_checked[checked] = str(error)
                if work_checked[checked] is not None:
                    raise exact.EngineInputError(work_checked[checked])
            except exact.EngineInputError as error:
                refused += 1
                refusals[str(error)] = refusals.get(str(error), 0) + 1
                continue
            if plan.joint is not None:
                result = exact.resolve([weapon], target, context)
                figures[:, i, j] = _figures_of(result.damage.mean, result.models_destroyed.pmf)
                fallback.append((i, j))
                continue
            figures[0, i, j] = _damage_mean(plan.stages["damage"])
            key = (plan.normal_damage.tobytes(), target.models, target.wounds)
            groups.setdefault(key, []).append((i, j, plan.stages["unsaved"]))
        plans.clear()  # one weapon's plans and checks are not needed for the next
        work_checked.clear()
        if progress:
            progress(i + 1, len(distinct_w))
    vectorised = 0
    for (damage_bytes, models, wounds), members in groups.items():
        _chain_group(figures, damage_bytes, models, wounds, members)
        vectorised += len(members)
    full = figures[:, w_index][:, :, t_index]
    return BatchResult(
        *full, weapon_index=w_index, target_index=t_index, distinct_weapons=tuple(distinct_w),
        distinct_targets=tuple(distinct_t), distinct_pairs=len(distinct_w) * len(distinct_t),
        vectorised_pairs=vectorised, fallback_pairs=len(fallback), refused_pairs=refused, refusals=refusals,
        distinct_figures=figures, fallback_index=tuple(fallback),
    )


def _damage_mean(pmf: np.ndarray) -> float:
    """The mean of a count pmf, normalised as ``exact.resolve`` does.

    >>> _damage_mean(np.array([0.5, 0.25, 0.25]))
    0.75
    """
    pmf = np.clip(pmf / pmf.sum(), 0.0, None)
    return float(np.dot(np.arange(pmf.size), pmf))


def _figures_of(damage_mean: float, models_pmf: np.ndarray) -> tuple[float, float, float, float]:
    """(expected damage, expected models destroyed, P(>= 1 destroyed), P(all destroyed)).

    >>> _figures_of(2.0, np.array([0.5, 0.25, 0.25]))
    (2.0, 0.75, 0.5, 0.25)
    """
    return (damage_mean, float(np.dot(np.arange(models_pmf.size), models_pmf)),
            float(1.0 - models_pmf[0]), float(models_pmf[-1]))


def _chain_group(figures: np.ndarray, damage_bytes: bytes, models: int, wounds: int,
                 members: list[tuple[int, int, np.ndarray]]) -> None:
    """Fill the models-destroyed figures of every pair of one group (same damage per event,
    target models and Wounds): the states ``x0 T^u`` for u = 0..U once, then one product
    ``P @ states`` with P the (pairs x U+1) matrix of unsaved-count pmfs."""
    T = exact._transition_matrix(damage_bytes, models, wounds)
    size = max(unsaved.size for _, _, unsaved in members)
    P = np.zeros((len(members), size))
    for row, (_, _, unsaved) in enumerate(members):
        P[row, : unsaved.size] = unsaved
    states = np.empty((size, T.shape[0]))
    states[0] = 0.0
    states[0, 0] = 1.0
    for u in range(1, size):
        states[u] = states[u - 1] @ T
    x = P @ states  # (pairs, models * wounds + 1)
    alive = models * wounds
    pmf = np.concatenate([x[:, :alive].reshape(-1, models, wounds).sum(axis=2), x[:, alive:]], axis=1)
    pmf /= pmf.sum(axis=1, keepdims=True)
    rows = np.array([i for i, _, _ in members]), np.array([j for _, j, _ in members])
    figures[1][rows] = pmf @ np.arange(models + 1)
    figures[2][rows] = 1.0 - pmf[:, 0]
    figures[3][rows] = pmf[:, -1]
