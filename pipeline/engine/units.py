"""Units as they stand on the table: a target of several model lines, allocated model by model.

``resolve_unit(weapons, unit, context)`` resolves one attacking unit's weapons against a
``UnitTarget`` (model lines, each with its count, T, Sv, InSv, W, Feel No Pain, keywords and
CHARACTER or not; for an Attached unit, the Bodyguard lines and the Leader / Support lines) and
returns a ``UnitAttackResult``: the unit totals of ``AttackResult`` and, per model line, the
distribution of its models destroyed and, per CHARACTER model, P(destroyed). ``exact.resolve``
keeps serving the identical-model ``Target``; for a unit of one line the two agree to 1e-12
(``tests/engine/test_units.py``).

Rules (quoted in the tests):

- Wound roll Toughness. 10th edition, Leader: "Each time an attack targets an Attached unit,
  until the attacking unit has resolved all of its attacks, you must use the Toughness
  characteristic of the Bodyguard models in that unit" (the highest, when they differ); a unit
  that is not Attached with models of different Toughness: the highest (the 10th-edition core
  rules in the database say nothing of it; the 11th edition's 05.02.01 reading is taken).
  11th edition, 05.02.01 / 19.02: the highest T among the Bodyguard models on the battlefield,
  else (only Leader / Support models left) the highest T among those; a unit that is not
  Attached: the highest T of its models on the battlefield. The 11th-edition T is read per
  weapon from the unit's state when the weapon's attacks start (so a Bodyguard destroyed by one
  weapon changes the T of the next).
- Allocation. 10th edition (Making Attacks, Allocate Attack; Leader): attacks are allocated one
  at a time; a model that has lost wounds or had attacks allocated this phase takes the next
  attack; in an Attached unit no attack is allocated to a CHARACTER model while a Bodyguard
  model is left. 11th edition (05.03, 05.04): the unit is divided into allocation groups (one
  per CHARACTER model, one per other set of models with the same W, Sv and InSv), ordered with a
  group holding a wounded model first and every CHARACTER group last; the save rolls of one
  weapon's attacks are made together and resolved "from lowest result(s) to highest", each
  against the current group, on a model that has lost wounds if possible. The engine resolves
  the 11th edition's save rolls exactly that way (see Method).
- The defender's other choices are a fixed allocation order (``AllocationPolicy``): the
  default ``"listed"`` takes the order the rules imply, then the lines as the datasheet lists
  them (Bodyguard lines before Leader / Support lines, CHARACTER models last); ``"reversed"``
  takes the other lines in reverse order; a tuple of line names gives the order. A fixed order
  is always legal: the model being allocated to is the wounded one.
- PRECISION. 10th edition: "Each time an attack made with such a weapon successfully wounds an
  Attached unit, if a CHARACTER model in that unit is visible to the attacking model, the
  attacking model's player can choose to have that attack allocated to that CHARACTER model";
  11th edition (24.29): the attacker "can select one allocation group that contains one of those
  visible CHARACTER models ... until those attacks are resolved, or until that CHARACTER group is
  destroyed ... that CHARACTER group is the current allocation group". The objective
  (``Objective``) is P(a CHARACTER destroyed) summed over the CHARACTER models by default, or the
  expected models destroyed, or the expected damage. 10th edition: each successful wound is
  allocated as the attacker likes, knowing the state of the unit (which models are left, the
  damage on each) and how many of the weapon's wounds are still to allocate, but not the rolls of
  the weapons still to fire; the engine takes the optimal policy for that (``_Chain.policy``:
  backward induction over the weapons and the wounds left, the later weapons in expectation)
  and reports it beside the best single choice per weapon, its lower bound. With Devastating
  Wounds in the attack (their mortal wounds wait until every weapon has fired) the 10th edition
  falls back to one choice per weapon, said in the step. 11th edition: one choice per weapon
  (its attacks to a CHARACTER group, or not), the combination that maximises the objective; the
  choice is made before the wound rolls are known, a lower bound on an attacker who selects the
  group once it sees them. Choices are reported in ``choices``.
- Devastating Wounds: the mortal wounds of every weapon are allocated after every weapon's other
  attacks, one model each, excess lost (as ``exact``), with the weapon's Precision choice.

Method. With a fixed order the unit is two sequences of models: the part that takes attacks
first (the Bodyguard, B) and the CHARACTER part (C). The chain's state is (B's position and the
damage on its current model, C's position and damage): ``(WB + 1) x (WC + 1)`` states for WB and
WC wounds. An event is a wound that goes to the save; its transition from a state uses the save,
Feel No Pain and wounds of the model that state points at (a normal attack: B's current model
while one is left, else C's; a Precision attack the other way round). 10th edition: each
event's save is rolled on its own, so the event's matrix is ``diag(1 - pu) + diag(pu) M`` with
``pu`` the unsaved probability of the state's model and ``M`` its damage moves; a weapon's W
wounds give ``sum_w P(W = w) x T^w``. 11th edition, models of different saves against the
weapon: the save rolls are an ordered sample; their faces are taken 1 to 6, the number of rolls
showing face f among the r not yet taken being Binomial(r, 1 / (7 - f)), and a roll of face f
inflicts damage on the state's model exactly when f is 1 or below its save (a 0/1 matrix per
face). Unit totals of unsaved attacks and damage depend on the allocation when the lines differ:
they are counted in the same chain, with a counter evaluated at the roots of unity (the chain
run with ``z^k`` on each counted event, then an inverse FFT), an event after the last model is
destroyed counted against the last model's profile (what ``exact`` does for identical models).
Each weapon's own counts (attacks, hits, wounds to save, devastating wounds) come from
``exact``'s per-weapon code (``exact_weapon_counts``).
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass, field
from itertools import product
from typing import Literal, Sequence

import numpy as np

from pipeline.engine import exact
from pipeline.engine.profiles import Context, Target, Weapon
from pipeline.engine.result import AttackResult, Distribution, Step

Role = Literal["bodyguard", "leader", "support"]
AllocationPolicy = Literal["listed", "reversed"] | tuple[str, ...]
Objective = Literal["character", "models", "damage"]
OBJECTIVES: tuple[str, ...] = ("character", "models", "damage")

#: Largest chain (states of the B part x states of the C part) resolved exactly.
MAX_UNIT_STATES = 3_000
#: Largest work of one unit attack (multiply-adds of the chain, all counters), checked first.
MAX_UNIT_WORK = 3_000_000_000


@dataclass(frozen=True)
class ModelLine:
    """One model line of a target unit: ``count`` models with these characteristics.

    ``save``, ``invulnerable_save`` and the Feel No Pains are roll targets (3 for ``3+``), None
    for none. ``character``: the models have the CHARACTER keyword. ``role``: ``bodyguard`` (the
    unit's own models), ``leader`` or ``support`` (an 11th-edition Support unit) for the models
    of a unit attached to it. ``unit``: the name of the unit the line belongs to.
    ``damage_reduction``: ``"one"`` (-1 Damage) or ``"half"`` for the attacks allocated to these
    models only (a Leader's "models in that unit ... subtract 1 from the Damage"), besides the
    attack's ``Context.damage_reduction``; the greater reduction holds.
    """

    name: str
    count: int
    toughness: int
    save: int | None
    wounds: int
    invulnerable_save: int | None = None
    feel_no_pain: int | None = None
    feel_no_pain_mortal: int | None = None
    feel_no_pain_psychic: int | None = None
    keywords: frozenset[str] = field(default_factory=frozenset)
    character: bool = False
    role: Role = "bodyguard"
    unit: str = ""
    damage_reduction: Literal["one", "half"] | None = None

    def profile_text(self) -> str:
        """The line as resolved, in the inline profile's terms.

        >>> ModelLine("Sister", 2, 3, 3, 1, invulnerable_save=6, feel_no_pain=5, damage_reduction="one").profile_text()
        'T3 Sv3+ W1 inv6+ fnp5+ -1D'
        """
        out = [f"T{self.toughness}", f"Sv{self.save}+" if self.save else "Sv-", f"W{self.wounds}"]
        out += [f"inv{self.invulnerable_save}+"] if self.invulnerable_save else []
        out += [f"fnp{self.feel_no_pain}+"] if self.feel_no_pain else []
        out += [f"fnp{self.feel_no_pain_mortal}+ vs mortal wounds"] if self.feel_no_pain_mortal else []
        out += [f"fnp{self.feel_no_pain_psychic}+ vs psychic"] if self.feel_no_pain_psychic else []
        out += {"one": ["-1D"], "half": ["half D"]}.get(self.damage_reduction or "", [])
        return " ".join(out)

    def context(self, context: Context) -> Context:
        """``context`` with this line's damage reduction (the greater of the two: half before -1).

        >>> ModelLine("Sister", 1, 3, 3, 1, damage_reduction="one").context(Context()).damage_reduction
        'one'
        """
        if self.damage_reduction is None or context.damage_reduction == "half":
            return context
        return dataclasses.replace(context, damage_reduction=self.damage_reduction)

    def as_target(self, unit: "UnitTarget", toughness: int | None = None) -> Target:
        """This line as an identical-model ``Target`` of the unit (the unit's keywords, model
        count and Stealth; ``toughness`` the one the wound roll uses)."""
        return Target(toughness=toughness or self.toughness, save=self.save, wounds=self.wounds,
                      models=unit.models, invulnerable_save=self.invulnerable_save,
                      feel_no_pain=self.feel_no_pain, feel_no_pain_mortal=self.feel_no_pain_mortal,
                      feel_no_pain_psychic=self.feel_no_pain_psychic, keywords=unit.keywords,
                      stealth=unit.stealth, name=unit.name)


@dataclass(frozen=True)
class UnitTarget:
    """A target unit of model lines (an Attached unit: its Bodyguard lines and the lines of its
    Leader / Support units). ``keywords`` (upper case) are the unit's: an Attached unit has all
    the keywords of its component units (11th edition 19.03; 10th edition: "treated as a single
    unit for all rules purposes"). ``stealth``: every model has Stealth.

    >>> boyz = UnitTarget("Boyz", (ModelLine("Boy", 9, 5, 5, 1), ModelLine("Boss Nob", 1, 5, 5, 2)))
    >>> boyz.models, boyz.attached, boyz.total_wounds
    (10, False, 11)
    """

    name: str
    lines: tuple[ModelLine, ...]
    keywords: frozenset[str] = field(default_factory=frozenset)
    stealth: bool = False

    @property
    def models(self) -> int:
        return sum(line.count for line in self.lines)

    @property
    def attached(self) -> bool:
        """An Attached unit: it has Leader or Support lines."""
        return any(line.role != "bodyguard" for line in self.lines)

    @property
    def total_wounds(self) -> int:
        return sum(line.count * line.wounds for line in self.lines)

    @classmethod
    def of(cls, target: Target) -> "UnitTarget":
        """The unit of one line of ``target.models`` identical models."""
        line = ModelLine(target.model_profile or target.name, target.models, target.toughness, target.save,
                         target.wounds, target.invulnerable_save, target.feel_no_pain, target.feel_no_pain_mortal,
                         target.feel_no_pain_psychic, target.keywords)
        return cls(target.name, (line,), target.keywords, target.stealth)


@dataclass(frozen=True)
class UnitAttackResult:
    """``resolve_unit``'s answer: ``result`` (the unit totals, as ``exact.resolve`` gives them;
    ``models_destroyed`` over the whole unit), ``lines`` (line name -> Distribution of that
    line's models destroyed), ``characters`` (one entry per CHARACTER model, ``"Canoness"`` or
    ``"Canoness #2"`` -> P(destroyed)), ``order`` (the allocation order used: line name per
    model, B part then C part) and ``objective``."""

    result: AttackResult
    lines: dict[str, Distribution]
    characters: dict[str, float]
    order: tuple[str, ...]
    objective: str = "character"
    #: line name -> its profile as resolved (``ModelLine.profile_text``: its rules applied)
    profiles: dict[str, str] = field(default_factory=dict)

    def to_dict(self) -> dict:
        """JSON-ready: the ``AttackResult`` form plus ``lines``, ``characters`` and ``order``."""
        out = self.result.to_dict()
        out["lines"] = {name: d.to_dict() for name, d in self.lines.items()}
        out["characters"] = dict(self.characters)
        out["allocation_order"] = list(self.order)
        out["objective"] = self.objective
        out["profiles"] = dict(self.profiles)
        return out


class _Model:
    __slots__ = ("line", "wounds", "label")

    def __init__(self, line: int, wounds: int, label: str):
        self.line, self.wounds, self.label = line, wounds, label


def allocation_order(unit: UnitTarget, edition: int, policy: AllocationPolicy = "listed") -> tuple[list[int], list[int]]:
    """The model lines in the order attacks are allocated to them: (B part, C part), each a list
    of line indexes, one per model.

    C is the CHARACTER models of an Attached unit (10th edition, Leader) or of any unit (11th
    edition, 05.03: CHARACTER groups last); B is every other model. B's lines: ``"listed"``
    Bodyguard lines first, then the others, each as listed; ``"reversed"`` the other way round;
    a tuple of line names: that order, then any line not named as listed. In the 11th edition
    the lines of B with the same W, Sv and InSv are one allocation group and stay together.

    >>> u = UnitTarget("Boyz", (ModelLine("Boy", 2, 5, 5, 1), ModelLine("Boss Nob", 1, 5, 5, 2)))
    >>> allocation_order(u, 10), allocation_order(u, 10, "reversed")
    (([0, 0, 1], []), ([1, 0, 0], []))
    """
    characters_last = edition == 11 or unit.attached
    b_lines = [i for i, ln in enumerate(unit.lines) if not (characters_last and ln.character)]
    c_lines = [i for i, ln in enumerate(unit.lines) if characters_last and ln.character]
    b_lines.sort(key=lambda i: unit.lines[i].role != "bodyguard")
    if policy == "reversed":
        b_lines.reverse()
    elif isinstance(policy, tuple):
        names = [n.lower() for n in policy]
        known = {ln.name.lower() for ln in unit.lines}
        for n in names:
            if n not in known:
                raise exact.EngineInputError(
                    f"allocation order names {n!r}, which is no model line of {unit.name}; its lines: "
                    + ", ".join(ln.name for ln in unit.lines))
        b_lines.sort(key=lambda i: names.index(unit.lines[i].name.lower()) if unit.lines[i].name.lower() in names
                     else len(names))
        c_lines.sort(key=lambda i: names.index(unit.lines[i].name.lower()) if unit.lines[i].name.lower() in names
                     else len(names))
    elif policy != "listed":
        raise exact.EngineInputError(f"allocation policy must be 'listed', 'reversed' or a tuple of line names, "
                                     f"got {policy!r}")
    if edition == 11:  # lines of one allocation group (same W, Sv, InSv) stay together
        groups: list[tuple] = []
        for i in b_lines:
            ln = unit.lines[i]
            key = (ln.wounds, ln.save, ln.invulnerable_save)
            if key not in groups:
                groups.append(key)
        b_lines.sort(key=lambda i: groups.index((unit.lines[i].wounds, unit.lines[i].save,
                                                  unit.lines[i].invulnerable_save)))
    return ([i for i in b_lines for _ in range(unit.lines[i].count)],
            [i for i in c_lines for _ in range(unit.lines[i].count)])


# ---------------------------------------------------------------------------------------------
# One part of the unit (B or C): a sequence of models, states (position, damage on it)


class _Part:
    """A sequence of models: state ``offset[m] + d`` (model m current, d damage on it), plus the
    last state ``size - 1`` (every model of the part destroyed)."""

    def __init__(self, models: list[_Model]):
        self.models = models
        self.wounds = [m.wounds for m in models]
        self.offsets = np.concatenate([[0], np.cumsum(self.wounds)]).astype(int) if models else np.zeros(1, int)
        self.total = int(self.offsets[-1])
        self.size = self.total + 1
        self.model_of = np.zeros(self.total, dtype=int)
        for m in range(len(models)):
            self.model_of[self.offsets[m]: self.offsets[m + 1]] = m
        self.damage_of = np.arange(self.total) - self.offsets[self.model_of] if models else np.zeros(0, int)
        self.line_of = np.array([models[m].line for m in self.model_of], dtype=int)

    def destroyed(self, state: int) -> int:
        """Models of the part destroyed in ``state``."""
        return len(self.models) if state >= self.total else int(self.model_of[state])

    def event(self, unsaved: np.ndarray, damage: list[np.ndarray], z: complex | float = 1.0,
              counter: str | None = None, last: tuple[float, np.ndarray] | None = None) -> np.ndarray:
        """One event's matrix over the part's states: from a state of model line L, with P =
        ``unsaved[L]`` it inflicts ``damage[L]`` (pmf of points, after Feel No Pain) on the current
        model (excess lost), else nothing. ``counter`` ``"unsaved"`` / ``"damage"`` weights an
        unsaved event by ``z`` / ``z ** points``. The last state (part destroyed) keeps its mass,
        with the counter's weight of ``last`` (unsaved probability, damage pmf of the unit's last
        model) when given, else 1."""
        dtype = complex if isinstance(z, complex) else float
        T = np.zeros((self.size, self.size), dtype=dtype)
        idx = np.arange(self.total)
        if self.total:
            m = self.model_of
            left = np.array(self.wounds)[m] - self.damage_of  # wounds the current model has left
            for x in range(max(d.size for d in damage)):
                px = np.array([damage[L][x] if x < damage[L].size else 0.0 for L in self.line_of])
                px = px * unsaved[self.line_of]
                if not px.any():
                    continue
                dest = np.where(x < left, idx + x, self.offsets[m + 1])
                weight = z if counter == "unsaved" else z ** x if counter == "damage" else 1.0
                np.add.at(T, (idx, dest), px * weight)
            T[idx, idx] += 1.0 - unsaved[self.line_of]
        T[self.total, self.total] = 1.0 if last is None else _absorbing_weight(last, z, counter)
        return T


def _absorbing_weight(last: tuple[float, np.ndarray], z, counter: str | None):
    pu, dmg = last
    if counter == "unsaved":
        return 1.0 - pu + pu * z
    if counter == "damage":
        return 1.0 - pu + pu * sum(p * z ** x for x, p in enumerate(dmg))
    return 1.0


# ---------------------------------------------------------------------------------------------
# Per weapon counts from the exact engine


@dataclass(frozen=True)
class WeaponCounts:
    """One weapon's own counts against a unit (no allocation): the pmfs of ``attacks``,
    ``hits``, ``wounds`` and ``mortal_wounds`` (exact's stages), ``to_save`` (pmf of the wounds
    that go to a saving throw) and ``joint`` (P[w, v] of wounds to save and devastating wounds,
    None without Devastating Wounds), with the ``steps`` and ``choices`` of exact."""

    weapon: Weapon
    stages: dict[str, np.ndarray]
    to_save: np.ndarray
    joint: np.ndarray | None
    steps: tuple[Step, ...]
    choices: dict


def exact_weapon_counts(weapon: Weapon, target: Target, context: Context) -> WeaponCounts:
    """The counts of ``weapon`` against ``target`` (the unit as the wound roll sees it: T,
    keywords, model count; its save and Feel No Pain those of the model attacks go to first),
    from ``exact``'s per-weapon code: the weapon's attacks, hits, wounds, and the wounds that
    reach a save before any save is rolled (``WeaponCounts``).

    The 11th edition's Lethal Hits and Anti choices are taken against ``target`` and then kept
    when the pre-save counts are computed. Raises ``EngineInputError`` as ``exact.resolve`` does.
    """
    steps: list[Step] = []
    choices: dict = {}
    exact._validate([weapon], target, context)
    rules = exact.rules_for(context.edition)
    w = exact._limited(exact._against(weapon, target, steps), rules, steps)
    plan = exact._plan(w, target, context, steps, choices)
    lethal = choices.get(f"Lethal Hits: {w.name}")
    bare_context = context
    if context.edition == 11 and w.lethal_hits and lethal is not None:
        bare_context = dataclasses.replace(context, lethal_hits_choice=lethal.startswith("auto"))
    bare = dataclasses.replace(target, save=None, invulnerable_save=None, feel_no_pain=None,
                               feel_no_pain_mortal=None, feel_no_pain_psychic=None)
    raw = exact._plan(w, bare, bare_context, [], {})
    stages = {k: plan.stages[k] for k in ("attacks", "hits", "wounds", "mortal_wounds")}
    return WeaponCounts(w, stages, raw.stages["unsaved"], _joint_matrix(raw.joint), tuple(steps), choices)


def _joint_matrix(counts) -> np.ndarray | None:
    """``P[w, v]`` of a weapon's wounds to save and devastating wounds from exact's
    ``_DevastatingCounts`` (``count`` independent units, each making ``outcome[a, b]``), by
    Horner's scheme over the number of units; None without Devastating Wounds."""
    if counts is None:
        return None
    count = exact._trim(np.asarray(counts.count))
    acc = np.array([[count[-1]]])
    for n in range(count.size - 2, -1, -1):
        acc = exact._convolve2d(acc, counts.outcome)
        acc[0, 0] += count[n]
    return acc


# ---------------------------------------------------------------------------------------------
# The engine


def resolve_unit(
    weapons: Sequence[Weapon],
    unit: UnitTarget,
    context: Context | None = None,
    *,
    policy: AllocationPolicy = "listed",
    objective: Objective = "character",
    precision: Sequence[bool] | None = None,
) -> UnitAttackResult:
    """Resolve ``weapons`` (in order) against the model lines of ``unit`` (module docstring).

    ``policy``: the defender's allocation order (``allocation_order``). ``objective``: what the
    attacker's Precision choices maximise: ``character`` (P(each CHARACTER model destroyed),
    summed), ``models`` (expected models destroyed) or ``damage`` (expected damage).
    ``precision``: force the choice per weapon (True: its attacks go to the CHARACTER models),
    else the engine takes the best one (a weapon without [PRECISION], or a unit without
    CHARACTER models in its C part, never has the choice).

    Returns a ``UnitAttackResult`` (pmfs as ``exact.resolve``'s, per line and per CHARACTER).
    Raises ``EngineInputError`` for a unit with no model, a line with a count or W below 1, an
    unknown policy or objective, a chain over ``MAX_UNIT_STATES`` states or
    ``MAX_UNIT_WORK`` steps, and what ``exact.resolve`` raises for the weapons and context.
    """
    context = context or Context()
    _validate_unit(unit)
    if objective not in OBJECTIVES:
        raise exact.EngineInputError(f"objective must be one of {', '.join(OBJECTIVES)}, got {objective!r}")
    weapons = list(weapons)
    if not weapons:
        raise exact.EngineInputError("no weapons to resolve: give at least one Weapon")
    if precision is not None and len(precision) != len(weapons):
        raise exact.EngineInputError(f"precision needs one choice per weapon (got {len(precision)} for "
                                     f"{len(weapons)} weapons)")
    b_order, c_order = allocation_order(unit, context.edition, policy)
    labels = _labels(unit, b_order + c_order)
    chain = _Chain(unit, b_order, c_order, labels, context)
    wording = "10th edition, current wording" if context.edition == 10 else "11th edition"
    steps: list[Step] = [Step("making-attacks", f"{wording}; target {unit.name}: " + "; ".join(
        f"{ln.count} x {ln.name} T{ln.toughness} W{ln.wounds}" + (" CHARACTER" if ln.character else "")
        + (f" ({ln.role})" if ln.role != "bodyguard" else "") for ln in unit.lines))]
    steps.extend(_allocation_steps(unit, chain, context))
    choices: dict = {}
    plans = chain.plans(weapons, steps, choices)
    can = [chain.has_characters and any(p.weapon.precision for p in per_t.values()) for per_t in plans]
    if precision is not None:
        options = [tuple(bool(x) and c for x, c in zip(precision, can))]
    else:
        options = list(product(*[(False, True) if c else (False,) for c in can]))
    chain.check_work(plans, len(options))
    best = None
    for option in options:
        x = chain.run(plans, option)
        score = chain.score(x, plans, option, objective)
        if best is None or score > best[0] + 1e-12:
            best = (score, option, x)
    _, option, x = best
    by_wound = (precision is None and any(can) and context.edition == 10
                and all(p.counts.joint is None for per_t in plans for p in per_t.values()))
    per_weapon_score = best[0]
    if by_wound:
        option, policy_score = chain.policy(plans, can, objective, option)
        x = chain.run(plans, option)
    if any(can):
        rule = "10th edition, Precision" if context.edition == 10 else "11th edition, 24.29 [PRECISION]"
        said = [(next(iter(p.values())).weapon.name, ch.summary() if isinstance(ch, PrecisionPolicy) else
                 "allocated to the CHARACTER models" if ch else "normal allocation")
                for p, ch, c in zip(plans, option, can) if c]
        for name, what in said:
            choices[f"Precision: {name}"] = what
        listed = ", ".join(f"{name} {what}" for name, what in said)
        if by_wound:
            how = (f"each wound allocated as the attacker likes, knowing the unit's state and the weapon's wounds "
                   f"left: the policy that maximises the objective '{objective}' (expected {policy_score:.6f}; "
                   f"one choice per weapon at best: {per_weapon_score:.6f})")
        else:
            how = (f"one choice per weapon, the one that maximises the objective '{objective}' (score "
                   f"{per_weapon_score:.6f}, {len(options)} combination{'s' if len(options) > 1 else ''} compared)")
            if precision is None and context.edition == 10:
                how += ("; with Devastating Wounds in the attack the choice is not made wound by wound (a lower "
                        "bound on the attacker's best)")
        steps.append(Step("precision", f"Precision ({rule}): {listed}; {how}"))
    elif any(p.weapon.precision for per_t in plans for p in per_t.values()):
        steps.append(Step("precision", "Precision: no effect (the target has no CHARACTER model it could "
                                       "be allocated to instead)"))
    result = chain.result(x, plans, option, steps, choices, weapons, context)
    return UnitAttackResult(result, chain.line_pmfs(x), chain.character_ps(x), tuple(labels), objective,
                            {ln.name: ln.profile_text() for ln in unit.lines})


def _labels(unit: UnitTarget, order: list[int]) -> list[str]:
    seen: dict[int, int] = {}
    out = []
    for i in order:
        seen[i] = seen.get(i, 0) + 1
        name = unit.lines[i].name
        out.append(name if unit.lines[i].count == 1 else f"{name} #{seen[i]}")
    return out


def _validate_unit(unit: UnitTarget) -> None:
    if not isinstance(unit, UnitTarget):
        raise exact.EngineInputError(f"unit must be a UnitTarget, got {type(unit).__name__}")
    if not unit.lines:
        raise exact.EngineInputError(f"target {unit.name!r}: a unit needs at least one model line")
    for ln in unit.lines:
        exact._validate_target(Target(toughness=ln.toughness, save=ln.save, wounds=ln.wounds, models=ln.count,
                                      invulnerable_save=ln.invulnerable_save, feel_no_pain=ln.feel_no_pain,
                                      feel_no_pain_mortal=ln.feel_no_pain_mortal,
                                      feel_no_pain_psychic=ln.feel_no_pain_psychic, name=f"{unit.name}: {ln.name}"))
    if unit.total_wounds > exact.limits.MAX_TARGET_WOUNDS:
        raise exact.EngineInputError(
            f"target {unit.name!r}: {unit.total_wounds} wounds in the unit: at most "
            f"{exact.limits.MAX_TARGET_WOUNDS} for the exact engine; give fewer models or simulate it (pipeline.engine.simulate.simulate)")


def _allocation_steps(unit: UnitTarget, chain: "_Chain", context: Context) -> list[Step]:
    order = " -> ".join(_runs([chain.labels_of_lines[i] for i in chain.b_order]))
    text = f"allocation order: {order or '(none)'}"
    if chain.c_order:
        text += " | CHARACTER models: " + " -> ".join(_runs([chain.labels_of_lines[i] for i in chain.c_order]))
        if context.edition == 10:
            text += (" (10th edition, Leader: an attack that wounds an Attached unit cannot be allocated to a "
                     "CHARACTER model while a Bodyguard model is left)")
        else:
            text += " (11th edition, 05.03: no CHARACTER group earlier than a non-CHARACTER group)"
    if context.edition == 11 and chain.mixed_saves:
        text += ("; save rolls of each weapon resolved from the lowest result to the highest against the current "
                 "allocation group (11th edition, 05.04)")
    return [Step("save-rolls" if context.edition == 11 else "making-attacks", text)]


def _runs(names: list[str]) -> list[str]:
    """``["Boy", "Boy", "Nob"]`` -> ``["2 x Boy", "Nob"]``.

    >>> _runs(["Boy", "Boy", "Nob"])
    ['2 x Boy', 'Nob']
    """
    out: list[list] = []
    for n in names:
        if out and out[-1][0] == n:
            out[-1][1] += 1
        else:
            out.append([n, 1])
    return [f"{k} x {n}" if k > 1 else n for n, k in out]


class _Chain:
    """The allocation chain of one unit: its parts, per-state lines and the per-weapon plans."""

    def __init__(self, unit: UnitTarget, b_order: list[int], c_order: list[int], labels: list[str],
                 context: Context):
        self.unit, self.context = unit, context
        self.b_order, self.c_order = b_order, c_order
        self.labels_of_lines = [ln.name for ln in unit.lines]
        self.B = _Part([_Model(i, unit.lines[i].wounds, labels[k]) for k, i in enumerate(b_order)])
        self.C = _Part([_Model(i, unit.lines[i].wounds, labels[len(b_order) + k]) for k, i in enumerate(c_order)])
        self.has_characters = bool(c_order)
        self.size = self.B.size * self.C.size
        if self.size > MAX_UNIT_STATES:
            raise exact.EngineInputError(
                f"target {unit.name!r}: {self.size} allocation states ({self.B.total + 1} of the Bodyguard part x "
                f"{self.C.total + 1} of the CHARACTER part): at most {MAX_UNIT_STATES} for the exact engine; "
                "give fewer models or simulate it (pipeline.engine.simulate.simulate)")
        last_line = (c_order or b_order)[-1]
        self.last_line = last_line
        self.mixed_saves = len({(ln.save, ln.invulnerable_save) for ln in unit.lines}) > 1
        self.toughness_of_state = self._toughness_by_state()

    # -- Toughness per state (the wound roll)

    def _toughness_by_state(self) -> np.ndarray:
        unit = self.unit
        lines = unit.lines
        body = [i for i, ln in enumerate(lines) if ln.role == "bodyguard"]
        if self.context.edition == 10 or len({ln.toughness for ln in lines}) == 1:
            pool = body if unit.attached else range(len(lines))
            return np.full(self.size, max(lines[i].toughness for i in pool), dtype=int)
        out = np.zeros(self.size, dtype=int)
        for sb in range(self.B.size):
            for sc in range(self.C.size):
                alive = [m.line for m in self.B.models[self.B.destroyed(sb):]] + \
                        [m.line for m in self.C.models[self.C.destroyed(sc):]]
                if not alive:
                    alive = [self.last_line]
                guards = [i for i in alive if lines[i].role == "bodyguard"] if unit.attached else []
                out[sb * self.C.size + sc] = max(lines[i].toughness for i in (guards or alive))
        return out

    # -- Per-weapon plans: one per Toughness the weapon can meet

    def plans(self, weapons: Sequence[Weapon], steps: list[Step], choices: dict) -> list[dict[int, "_WeaponPlan"]]:
        out = []
        first_line = self.unit.lines[(self.b_order or self.c_order)[0]]
        for w in weapons:
            per_t: dict[int, _WeaponPlan] = {}
            first_t = int(self.toughness_of_state[0])
            for t in [first_t] + sorted(set(self.toughness_of_state.tolist()) - {first_t}):
                counts = exact_weapon_counts(w, first_line.as_target(self.unit, t), self.context)
                if not per_t:
                    steps.extend(counts.steps)
                    for key, value in counts.choices.items():
                        if key == "rerolls":
                            choices.setdefault("rerolls", []).extend(value)
                        else:
                            choices[key] = value
                else:
                    steps.append(Step("wound-roll", f"{w.name}: against T{t} once the models of higher Toughness "
                                                    "are destroyed (11th edition, 05.02.01 / 19.02)"))
                per_t[t] = _WeaponPlan(counts, self)
            out.append(per_t)
        return out

    def check_work(self, plans: list[dict[int, "_WeaponPlan"]], options: int) -> None:
        work = 0
        for per_t in plans:
            for p in per_t.values():
                events = p.counts.to_save.size + (p.counts.joint.shape[1] if p.counts.joint is not None else 0)
                faces = 6 * events if p.face_ordered else 1
                work += events * faces * self.size * self.size * p.pending_factor
        work *= options * (1 + self.counter_points(plans))
        if work > MAX_UNIT_WORK:
            raise exact.EngineInputError(
                f"this attack needs about {work:.2g} steps of the unit engine: at most {MAX_UNIT_WORK:.2g} "
                f"({len(plans)} weapon profiles against {self.unit.name}, {self.size} allocation states); resolve "
                "fewer weapons or models at once, or simulate it (pipeline.engine.simulate.simulate)")

    def counter_points(self, plans) -> int:
        if self.homogeneous(plans):
            return 0
        unsaved = sum(max(p.counts.to_save.size for p in per_t.values()) for per_t in plans)
        damage = sum(max(p.counts.to_save.size * p.max_damage() for p in per_t.values()) for per_t in plans)
        return unsaved + damage

    def homogeneous(self, plans) -> bool:
        """Every line gives every weapon the same unsaved probability and damage: the unit totals
        are the weapons' own (no counter needed)."""
        for per_t in plans:
            for p in per_t.values():
                if len({(round(p.unsaved[i], 15), p.normal[i].tobytes(), p.mortal[i].tobytes())
                        for i in range(len(self.unit.lines))}) > 1:
                    return False
        return True

    # -- The 10th edition's Precision, attack by attack

    def _terminal(self, objective: str) -> np.ndarray:
        """Per state, what the objective counts at the end: CHARACTER models destroyed, models
        destroyed, or 0 (``damage`` is counted event by event)."""
        out = np.zeros(self.size)
        if objective == "damage":
            return out
        for sb in range(self.B.size):
            for sc in range(self.C.size):
                if objective == "models":
                    out[sb * self.C.size + sc] = self.B.destroyed(sb) + self.C.destroyed(sc)
                else:
                    out[sb * self.C.size + sc] = self.C.destroyed(sc) + sum(
                        1 for m in self.B.models[: self.B.destroyed(sb)] if self.unit.lines[m.line].character)
        return out

    def policy(self, plans, can: list[bool], objective: str, ties: Sequence[bool]) -> tuple[list, float]:
        """The attacker's best choice for each wound of each [PRECISION] weapon, knowing the state
        of the unit and the number of the weapon's wounds left to allocate (10th edition, every
        weapon without Devastating Wounds): backward induction over the weapons and wounds,
        ``U_k(s) = max(T0 U_{k-1} + r0, T1 U_{k-1} + r1)(s)`` (T0 / T1 an event allocated normally
        / to the CHARACTER models, r the expected damage of the event for ``damage``, 0 else), the
        value before a weapon ``sum_w P(w) U_w``, from the objective counted on the final state.
        A tie keeps ``ties[j]`` (the best one-choice-per-weapon option). Returns (one option per
        weapon: a ``PrecisionPolicy`` where ``can``, else False; the expected objective)."""
        V = self._terminal(objective)
        option: list = [False] * len(plans)
        step = 1e-20  # complex step: d/dz of the damage counter at z = 1 is the expected damage
        for j in range(len(plans) - 1, -1, -1):
            plan = next(iter(plans[j].values()))
            count = exact._trim(plan.counts.to_save)
            mats, rewards = [], []
            for to_c in ((False, True) if can[j] else (False,)):
                mats.append(plan._event(to_c, plan.unsaved, plan.normal, 1.0, None))
                if objective == "damage":
                    Tz = plan._event(to_c, plan.unsaved, plan.normal, complex(1.0, step), "damage")
                    rewards.append(Tz.sum(axis=1).imag / step)
                else:
                    rewards.append(0.0)
            U, acc, picks = V, count[0] * V, []
            for k in range(1, count.size):
                q = [T @ U + r for T, r in zip(mats, rewards)]
                if can[j]:
                    pick = q[1] >= q[0] - 1e-12 if ties[j] else q[1] > q[0] + 1e-12
                    U = np.where(pick, q[1], q[0])
                    picks.append(pick)
                else:
                    U = q[0]
                acc = acc + count[k] * U
            V = acc
            if can[j]:
                option[j] = PrecisionPolicy(tuple(picks))
        return self._with_shares(plans, option), float(V[0])

    def _with_shares(self, plans, option: list) -> list:
        """``option`` with each policy's expected wounds to the CHARACTER models (a forward run)."""
        X = np.zeros((1, self.size))
        X[0, 0] = 1.0
        out = []
        for per_t, chosen in zip(plans, option):
            plan = next(iter(per_t.values()))
            if isinstance(chosen, PrecisionPolicy):
                count = exact._trim(plan.counts.to_save)
                T0 = plan._event(False, plan.unsaved, plan.normal, 1.0, None)
                T1 = plan._event(True, plan.unsaved, plan.normal, 1.0, None)
                A, share = count[-1] * X, 0.0
                for k in range(count.size - 1, 0, -1):
                    pick = chosen.to_character[k - 1]
                    share += float((A[:, pick]).sum())
                    A = A @ np.where(pick[:, None], T1, T0) + count[k - 1] * X
                wounds = float(np.arange(count.size) @ count)
                chosen = PrecisionPolicy(chosen.to_character, share, wounds)
                X = A
            else:
                X, _ = plan.apply(X, chosen, 1.0, None)
            out.append(chosen)
        return out

    # -- Running the chain

    def _state_masks(self) -> dict[int, np.ndarray]:
        return {t: (self.toughness_of_state == t) for t in set(self.toughness_of_state.tolist())}

    def run(self, plans, option, z: complex | float = 1.0, counter: str | None = None) -> np.ndarray:
        """The state distribution (flattened (B, C) states) after every weapon, at counter
        point ``z``."""
        dtype = complex if isinstance(z, complex) else float
        X = np.zeros((1, self.size), dtype=dtype)  # (pending devastating combinations, states)
        X[0, 0] = 1.0
        masks = self._state_masks()
        pending: list[tuple[int, np.ndarray]] = []
        for per_t, to_character in zip(plans, option):
            parts = []
            for t, plan in per_t.items():
                Xt = X * masks[t][None, :] if len(per_t) > 1 else X
                parts.append(plan.apply(Xt, to_character, z, counter))
            if len(parts) == 1:
                X, dev = parts[0]
            else:
                X = sum(p[0] for p in parts)
                dev = parts[0][1]
            if dev is not None:
                pending.append(dev)
        for size, D in pending:  # the first weapon's devastating wounds first (the outermost axis)
            X = _horner(X.reshape(size, -1, self.size), D)
        return X.reshape(-1, self.size).sum(axis=0)

    def line_pmfs(self, x: np.ndarray) -> dict[str, np.ndarray]:
        out = {}
        for i, ln in enumerate(self.unit.lines):
            pmf = np.zeros(ln.count + 1)
            for s, p in enumerate(np.real(x)):
                pmf[self.destroyed_of_line(s, i)] += p
            out[ln.name] = Distribution(exact._normalised(pmf))
        return out

    def destroyed_of_line(self, s: int, line: int) -> int:
        sb, sc = divmod(s, self.C.size)
        k = sum(1 for m in self.B.models[: self.B.destroyed(sb)] if m.line == line)
        return k + sum(1 for m in self.C.models[: self.C.destroyed(sc)] if m.line == line)

    def character_ps(self, x: np.ndarray) -> dict[str, float]:
        out = {}
        x = np.real(x).reshape(self.B.size, self.C.size)
        for k, m in enumerate(self.C.models):
            out[m.label] = float(x[:, self.C.offsets[k + 1]:].sum())
        for k, m in enumerate(self.B.models):  # CHARACTER models allocated in B (10th edition, not Attached)
            if self.unit.lines[m.line].character:
                out[m.label] = float(x[self.B.offsets[k + 1]:, :].sum())
        return out

    def models_pmf(self, x: np.ndarray) -> np.ndarray:
        pmf = np.zeros(self.unit.models + 1)
        x = np.real(x).reshape(self.B.size, self.C.size)
        for sb in range(self.B.size):
            for sc in range(self.C.size):
                pmf[self.B.destroyed(sb) + self.C.destroyed(sc)] += x[sb, sc]
        return exact._normalised(pmf)

    def score(self, x, plans, option, objective: str) -> float:
        if objective == "character":
            return sum(self.character_ps(x).values())
        if objective == "models":
            return float(np.arange(self.unit.models + 1) @ self.models_pmf(x))
        return self._counted(plans, option, "damage").mean

    def _counted(self, plans, option, counter: str) -> Distribution:
        """The distribution of the unit's unsaved attacks or damage points, from the chain run at
        the roots of unity of the counter."""
        if counter == "unsaved":
            size = sum(max(p.counts.to_save.size for p in per_t.values()) for per_t in plans)
        else:
            size = sum(max(p.counts.to_save.size * p.max_damage() + p.dev_size() * p.max_damage(True)
                           for p in per_t.values()) for per_t in plans) + 1
        n = max(size, 1)
        values = np.array([self.run(plans, option, complex(np.exp(2j * np.pi * k / n)), counter).sum()
                           for k in range(n)])
        return Distribution(exact._normalised(_from_roots(values)))

    def result(self, x, plans, option, steps, choices, weapons, context) -> AttackResult:
        totals = {}
        for stage in ("attacks", "hits", "wounds", "mortal_wounds"):
            pmf = np.array([1.0])
            for per_t in plans:
                pmf = np.convolve(pmf, next(iter(per_t.values())).counts.stages[stage])
            totals[stage] = Distribution(exact._normalised(pmf))
        if len(plans[0]) > 1 or any(len(p) > 1 for p in plans):
            steps.append(Step("wound-roll", "attacks, hits and wounds are given for the Toughness of the first "
                                            "models; the models destroyed follow the Toughness of each state"))
        if self.homogeneous(plans) and all(len(p) == 1 for p in plans):
            for stage in ("unsaved", "damage"):
                pmf = np.array([1.0])
                for per_t in plans:
                    pmf = np.convolve(pmf, next(iter(per_t.values())).own_stage(stage))
                totals[stage] = Distribution(exact._normalised(pmf))
        else:
            totals["unsaved"] = self._counted(plans, option, "unsaved")
            totals["damage"] = self._counted(plans, option, "damage")
        models = self.models_pmf(x)
        hazardous = exact._hazardous(weapons, context, exact.rules_for(context.edition), steps)
        return AttackResult(**totals, models_destroyed=Distribution(models), target_destroyed=float(models[-1]),
                            hazardous_mortal_wounds=hazardous, hazardous_models_destroyed=0.0,
                            notes=tuple(s.summary for s in steps), steps=tuple(steps), choices=choices)


@dataclass(frozen=True)
class PrecisionPolicy:
    """The attacker's choice for each successful wound of one [PRECISION] weapon (10th edition),
    made as it is allocated: ``to_character[k - 1]`` (one bool per state of the chain) when ``k``
    of the weapon's wounds are left to allocate, True: to the CHARACTER model. ``share``: the
    expected number of the weapon's wounds allocated to the CHARACTER models, ``wounds`` the
    expected number of its wounds."""

    to_character: tuple[np.ndarray, ...]
    share: float = 0.0
    wounds: float = 0.0

    def summary(self) -> str:
        """The choice in words: always, never, or wound by wound (with the expected share)."""
        if self.share >= self.wounds - 1e-12:
            return "allocated to the CHARACTER models"
        if self.share <= 1e-12:
            return "normal allocation"
        return (f"wound by wound: {self.share:.4f} of its {self.wounds:.4f} expected wounds to the CHARACTER "
                "models")


def _from_roots(values: np.ndarray) -> np.ndarray:
    """The pmf over 0..n-1 whose generating function takes ``values[k]`` at ``exp(2 pi i k / n)``.

    >>> w = np.exp(2j * np.pi * np.arange(3) / 3)
    >>> np.round(_from_roots(0.25 + 0.75 * w), 12).tolist()
    [0.25, 0.75, 0.0]
    """
    return np.clip(np.real(np.fft.fft(values)) / values.size, 0.0, None)


def _horner(X: np.ndarray, D: np.ndarray) -> np.ndarray:
    """``sum_v X[v] D^v`` over the first axis of X (Horner's scheme)."""
    acc = X[-1]
    for v in range(X.shape[0] - 2, -1, -1):
        acc = acc @ D + X[v]
    return acc


class _WeaponPlan:
    """One weapon against the unit at one Toughness: per-line unsaved probability, save roll
    target and damage pmfs, and its count pmfs."""

    def __init__(self, counts: WeaponCounts, chain: _Chain):
        self.counts, self.chain = counts, chain
        self.weapon = counts.weapon
        unit, context = chain.unit, chain.context
        self.needed: list[int | None] = []
        self.unsaved = np.zeros(len(unit.lines))
        self.normal: list[np.ndarray] = []
        self.mortal: list[np.ndarray] = []
        for i, ln in enumerate(unit.lines):
            t = ln.as_target(unit)
            needed = exact.save_roll_target(self.weapon, t, context)
            self.needed.append(needed)
            self.unsaved[i] = 1.0 if needed is None else (needed - 1) / 6
            self.normal.append(exact.damage_per_event(self.weapon, t, ln.context(context)))
            self.mortal.append(exact.damage_per_event(self.weapon, t, ln.context(context), mortal=True))
        self.face_ordered = context.edition == 11 and len({self.needed[i] for i in set(chain.b_order + chain.c_order)}) > 1
        self.pending_factor = 1

    def max_damage(self, mortal: bool = False) -> int:
        return max(d.size for d in (self.mortal if mortal else self.normal)) - 1

    def dev_size(self) -> int:
        return 0 if self.counts.joint is None else self.counts.joint.shape[1] - 1

    def own_stage(self, stage: str) -> np.ndarray:
        """The weapon's unsaved or damage pmf when every line is the same (binomial thinning of the
        wounds to save; devastating damage added)."""
        pu = self.unsaved[0]
        dmg, mortal = self.normal[0], self.mortal[0]
        joint = self.counts.joint if self.counts.joint is not None else self.counts.to_save[:, None]
        out = np.array([0.0])
        for v in range(joint.shape[1]):
            w_pmf = joint[:, v]
            if not w_pmf.any():
                continue
            u = exact._compound(w_pmf / w_pmf.sum(), np.array([1 - pu, pu])) * w_pmf.sum()
            if stage == "unsaved":
                part = u
            else:
                part = np.convolve(exact._compound(u / u.sum(), dmg) * u.sum(), exact._power(mortal, v))
            out = exact._mix([(1.0, out), (1.0, part)])
        return out

    def _event(self, to_character: bool, unsaved: np.ndarray, damage: list[np.ndarray], z, counter) -> np.ndarray:
        """The full matrix over (B, C) states of one event."""
        chain = self.chain
        last = (unsaved[chain.last_line], damage[chain.last_line])
        TB = chain.B.event(unsaved, damage, z, counter, last)
        TC = chain.C.event(unsaved, damage, z, counter, last)
        nb, nc = chain.B.size, chain.C.size
        if to_character and chain.has_characters:
            TC_alive = TC.copy()
            TC_alive[-1, :] = 0
            EC = np.zeros((nc, nc))
            EC[-1, -1] = 1
            return np.kron(np.eye(nb), TC_alive) + np.kron(TB, EC)
        TB_alive = TB.copy()
        TB_alive[-1, :] = 0
        EB = np.zeros((nb, nb))
        EB[-1, -1] = 1
        return np.kron(TB_alive, np.eye(nc)) + np.kron(EB, TC)

    def apply(self, X: np.ndarray, to_character: bool, z, counter):
        """X (pending, states) after this weapon's wounds to save; with Devastating Wounds the
        pending axis grows by its devastating counts, returned as (size, matrix) to allocate
        after every weapon."""
        joint = self.counts.joint
        if joint is None:
            X = self._apply_count(X, self.counts.to_save, to_character, z, counter)
            return X, None
        # X'[m, v] = sum_w P(w, v) X[m] T^w
        v_max = int(np.flatnonzero(joint.sum(axis=0))[-1])
        outs = [self._apply_count(X, joint[:, v], to_character, z, counter, normalise=False) for v in range(v_max + 1)]
        X = np.stack(outs, axis=1).reshape(-1, self.chain.size)
        ones = np.ones(len(self.chain.unit.lines))
        if counter == "unsaved":  # mortal wounds are not unsaved attacks
            D = self._event(to_character, ones, self.mortal, 1.0, None).astype(X.dtype)
        else:
            D = self._event(to_character, ones, self.mortal, z, counter)
        return X, (v_max + 1, D)

    def _apply_count(self, X, count: np.ndarray, to_character, z, counter, normalise: bool = True) -> np.ndarray:
        count = exact._trim(count)
        if isinstance(to_character, PrecisionPolicy):
            # A_k: the mass at each state when k of the weapon's wounds are left to allocate (over
            # every wound count w >= k); the state's choice picks the row of its event matrix
            T0 = self._event(False, self.unsaved, self.normal, z, counter)
            T1 = self._event(True, self.unsaved, self.normal, z, counter)
            A = count[-1] * X
            for k in range(count.size - 1, 0, -1):
                pick = to_character.to_character[k - 1]
                A = A @ np.where(pick[:, None], T1, T0) + count[k - 1] * X
            return A
        if not self.face_ordered:
            T = self._event(to_character, self.unsaved, self.normal, z, counter)
            out = X * count[0]
            Y = X
            for w in range(1, count.size):
                Y = Y @ T
                out = out + count[w] * Y
            return out
        # 11th edition: save rolls resolved from the lowest result to the highest (module docstring)
        R = count.size - 1
        Z = np.zeros((R + 1,) + X.shape, dtype=X.dtype if not isinstance(z, complex) else complex)
        for r in range(R + 1):
            Z[r] = count[r] * X
        lines = len(self.chain.unit.lines)
        for face in range(1, 7):
            hit = np.array([1.0 if face == 1 or self.needed[i] is None or face < self.needed[i] else 0.0
                            for i in range(lines)])
            T = self._event(to_character, hit, self.normal, z, counter)
            if face == 6:
                B = np.eye(R + 1)  # every roll left shows a 6
            else:
                B = exact._binomial_matrix(R, 1.0 / (7 - face))  # [r, c]
            new = np.zeros_like(Z)
            Y = Z.copy()
            for c in range(R + 1):
                for r in range(c, R + 1):
                    if B[r, c]:
                        new[r - c] += B[r, c] * Y[r]
                Y = Y @ T
            Z = new
        return Z[0]
