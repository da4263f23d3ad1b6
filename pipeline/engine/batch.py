"""The batch engine: many weapon profiles against many targets in one call.

``resolve_batch(weapons, targets, context)`` gives, for every (weapon, target) pair, the four
figures of ``pipeline.engine.exact.resolve`` with one weapon: expected damage, expected models
destroyed, P(at least one model destroyed) and P(every model destroyed), as arrays of shape
``(len(weapons), len(targets))``.

The rules are not re-encoded here: every probability comes from the exact engine's own rule
helpers (``exact._attack_dice``, ``_hit_roll``, ``save_roll_target``, ``_event_damage``,
``_candidates``, ``_option``, ``_best``, ``_stage_pmf``), which read the edition declarations
(``edition_rules.toml`` via ``pipeline.engine.declarations``). ``_weapon_numbers`` composes them
as ``exact._plan`` does, without its steps. What is batched is the rest:

- Dedupe: two weapon profiles that differ only by name, and two targets that differ only by
  name (or by keywords no weapon reads), resolve the same: each distinct pair is resolved once.
- Factored per weapon: a target is read by the attack through a few parts: its keywords among
  those the weapon reads (Anti, keyword conditions), its models in fives ([BLAST], [CLEAVE]), its
  Toughness through the wound roll needed, its defence (Stealth, Sv, InSv, Feel No Pain) and its
  shape (models, Wounds). Each part's numbers are worked out once per weapon and value, and the
  pairs are assembled from them with numpy.
- Counts shared: without Lethal Hits, the unsaved events are the weapon's hits each kept with
  P(wound and unsaved) (a binomial thinning of the hits pmf), so a weapon needs one hits pmf per
  hit roll and one thinning per distinct probability, however many targets it meets.
- The allocation chain, vectorised: the models destroyed are ``sum_u P(unsaved = u) x0 T^u``
  (``exact._chain`` with one weapon), ``T`` the transition of one unsaved event. Pairs are
  grouped by (damage per event, target models, Wounds): each group's powers ``x0 T^u`` are built
  once (by doubling) and every distinct unsaved pmf of the group is one row of a single matrix
  product.
- Devastating Wounds, vectorised: of R hits, V are devastating and U unsaved (a multinomial
  split); the unsaved events are allocated first, then the devastating ones, so the state is
  ``sum_v (sum_u J[u, v] x0 T^u) D^v`` with ``J`` the joint pmf of (U, V) and ``D`` the transition
  of one devastating event (its mortal wounds after Feel No Pain, 0 included). Pairs sharing
  (T, D, shape) share the powers of T, and the sum over v is one Horner's scheme for the group.
  With Lethal Hits too (an attack's outcome is not a split of its hits), ``J`` is the attacks'
  2-D compound of one attack's (unsaved, devastating) outcome (``exact._joint_with_lethal``).
- Refusals: a pair the exact engine refuses (``EngineInputError``: a target over the wound
  limit, a chain over the work limit...) is NaN in every figure and counted in
  ``refused_pairs`` with the first reason.
"""

from __future__ import annotations

import dataclasses
import time
from dataclasses import dataclass, field
from typing import Callable, Sequence

import numpy as np

from pipeline import limits
from pipeline.engine import exact
from pipeline.engine.blas import single_blas_thread
from pipeline.engine.declarations import capped, rules_for
from pipeline.engine.profiles import Context, Target, Weapon
from pipeline.normalise.characteristics import dice

#: The figures of a batch, in the order of ``BatchResult.figures``.
FIGURES = ("expected_damage", "expected_models_destroyed", "p_any_destroyed", "p_unit_destroyed")

#: The Damage and Attacks of the stand-in weapon of a chain-work estimate (it reads neither).
_ONE_DICE = dice("1")


@dataclass(frozen=True)
class BatchResult:
    """Figures of every (weapon, target) pair: each array (a property, built from the distinct
    pairs' figures when read) has shape ``(n_weapons, n_targets)``, float64; NaN where the exact
    engine refuses the pair.

    ``expected_damage``: mean damage points after Feel No Pain, before excess is lost (the
    ``damage`` stage of ``AttackResult``); ``expected_models_destroyed``: mean target models
    destroyed; ``p_any_destroyed``: P(at least one model destroyed); ``p_unit_destroyed``:
    P(every model destroyed) (``AttackResult.target_destroyed``).
    ``weapon_index[i]`` / ``target_index[j]``: the distinct weapon / target that input i / j is
    (indices into ``distinct_weapons`` / ``distinct_targets``).
    Counts: ``distinct_pairs`` resolved, of which ``vectorised_pairs`` in the batched chains
    (``devastating_pairs`` of them with Devastating Wounds) and ``refused_pairs`` refused;
    ``refusals`` maps each refusal message (of the first pair refused for it) to its count.
    ``seconds``: wall time of each phase (``weapons``: the per-weapon numbers and counts;
    ``chain``: the allocation chains; ``devastating``: the Devastating Wounds chains).
    """

    weapon_index: np.ndarray
    target_index: np.ndarray
    distinct_weapons: tuple[Weapon, ...]
    distinct_targets: tuple[Target, ...]
    distinct_pairs: int
    vectorised_pairs: int
    devastating_pairs: int
    refused_pairs: int
    refusals: dict[str, int] = field(default_factory=dict)
    #: the figures per distinct pair, shape (4, n_distinct_weapons, n_distinct_targets), FIGURES order
    distinct_figures: np.ndarray = field(default_factory=lambda: np.zeros((4, 0, 0)))
    seconds: dict[str, float] = field(default_factory=dict)

    def figures(self, i: int, j: int) -> dict[str, float]:
        """The four figures of weapon ``i`` against target ``j`` (input indices), by name."""
        values = self.distinct_figures[:, self.weapon_index[i], self.target_index[j]]
        return {name: float(v) for name, v in zip(FIGURES, values)}

    def _full(self, n: int) -> np.ndarray:
        return self.distinct_figures[n][self.weapon_index][:, self.target_index]

    expected_damage = property(lambda self: self._full(0), doc="E[damage points] of each pair")
    expected_models_destroyed = property(lambda self: self._full(1), doc="E[models destroyed] of each pair")
    p_any_destroyed = property(lambda self: self._full(2), doc="P(at least one model destroyed) of each pair")
    p_unit_destroyed = property(lambda self: self._full(3), doc="P(every model destroyed) of each pair")


def weapon_key(weapon: Weapon) -> Weapon:
    """What the attack reads of a weapon: the weapon without its name (a hashable Weapon).

    >>> from pipeline.engine.profiles import Weapon
    >>> from schemas.dice import DiceExpr
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
    >>> from schemas.dice import DiceExpr
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


def _codes(values: Sequence) -> tuple[np.ndarray, list]:
    """Each value's index among the distinct values (first-seen order), and those values.

    >>> _codes([(1, 2), (3, 4), (1, 2)])
    (array([0, 1, 0]), [(1, 2), (3, 4)])
    """
    distinct, index = _distinct(values, lambda v: v)
    return index, distinct


def _quiet(*_args) -> None:
    """A step sink that keeps nothing (the batch gives figures, not steps)."""


class _Targets:
    """The distinct targets as the attack reads them, as arrays over the targets: ``models``,
    ``wounds``, ``toughness``; ``defence`` (index into ``defence_targets``: Stealth, Sv, InSv and
    the Feel No Pain rolls, one representative target each) and ``shape`` (index into ``shapes``,
    (models, Wounds)). ``keyword_codes(words)``: each target's keywords among ``words``, coded."""

    def __init__(self, targets: Sequence[Target]):
        self.targets = list(targets)
        self.models = np.array([t.models for t in targets], dtype=np.int64)
        self.wounds = np.array([t.wounds for t in targets], dtype=np.int64)
        self.toughness = np.array([t.toughness for t in targets], dtype=np.int64)
        self.defence, defences = _codes([(t.stealth, t.save, t.invulnerable_save, t.feel_no_pain,
                                          t.feel_no_pain_mortal, t.feel_no_pain_psychic) for t in targets])
        self.shape, self.shapes = _codes(list(zip(self.models.tolist(), self.wounds.tolist())))
        self.defence_targets = [targets[int(np.flatnonzero(self.defence == d)[0])] for d in range(len(defences))]
        self._keywords: dict[frozenset[str], tuple[np.ndarray, list[int]]] = {}

    def keyword_codes(self, words: frozenset[str]) -> tuple[np.ndarray, list[int]]:
        """(each target's code of its keywords among ``words``, a representative target per code)."""
        if words not in self._keywords:
            codes, kept = _codes([t.keywords & words for t in self.targets])
            self._keywords[words] = codes, [int(np.flatnonzero(codes == c)[0]) for c in range(len(kept))]
        return self._keywords[words]


class _Counts:
    """Count pmfs kept by id: ``add(key, make)`` gives the id of the pmf ``make()`` builds, once
    per key; ``pmfs[id]`` (trimmed and cut at ``exact.TAIL_MASS``, read-only)."""

    def __init__(self):
        self.pmfs: list[np.ndarray | None] = []
        self._ids: dict = {}

    def reserve(self, key) -> int:
        """The id of ``key``'s pmf, kept as None until it is set (``pmfs[id] = ...``)."""
        found = self._ids.get(key)
        if found is None:
            found = self._ids[key] = len(self.pmfs)
            self.pmfs.append(None)
        return found

    def add(self, key, make: Callable[[], np.ndarray]) -> int:
        """The id of ``key``'s pmf, made by ``make()`` the first time."""
        found = self._ids.get(key)
        if found is None:
            pmf = exact._truncated(np.asarray(make(), dtype=np.float64))
            found = self._ids[key] = len(self.pmfs)
            self.pmfs.append(pmf)
        return found


class _Damages:
    """Damage-per-event pmfs kept by id (their bytes): ``add(pmf)`` -> id; ``pmfs[id]``."""

    def __init__(self):
        self.pmfs: list[np.ndarray] = []
        self._ids: dict[bytes, int] = {}

    def add(self, pmf: np.ndarray) -> int:
        key = pmf.tobytes()
        found = self._ids.get(key)
        if found is None:
            found = self._ids[key] = len(self.pmfs)
            self.pmfs.append(pmf)
        return found


@dataclass
class _Collected:
    """What the weapons give the chains: per pair (i, j), the ids of its counts and damages."""

    counts: _Counts = field(default_factory=_Counts)
    damages: _Damages = field(default_factory=_Damages)
    #: pairs resolved by the plain chain: columns i, j, unsaved id, normal damage id, shape
    plain: list[np.ndarray] = field(default_factory=list)
    #: Devastating Wounds pairs: columns i, j, hits id, devastating split id, normal id, mortal id, shape
    devastating: list[np.ndarray] = field(default_factory=list)
    #: the devastating events by id: ("split", P(unsaved), P(devastating)) of a hit, or ("lethal", ...)
    splits: dict = field(default_factory=dict)
    #: the ``exact._DevastatingCounts`` of each "lethal" id
    lethal_joints: dict = field(default_factory=dict)
    refusals: dict[str, int] = field(default_factory=dict)
    #: the save and damage numbers per (what they read of a weapon, defence): ``_VariantNumbers.defence``
    defences: dict = field(default_factory=dict)
    #: the same as arrays per what they read of a weapon: (defences, 6), NaN rows not yet read
    defence_tables: dict = field(default_factory=dict)
    refused: int = 0

    def refuse(self, message: str, count: int) -> None:
        self.refused += count
        self.refusals[message] = self.refusals.get(message, 0) + count


@single_blas_thread
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
    if context.reroll_one_hit or context.reroll_one_wound or context.reroll_one_damage or context.mortal_wounds_after:
        raise exact.EngineInputError("the batch engine takes no re-roll of one die and no mortal wounds after the "
                                     "attack (rules' effects on one attack); resolve such attacks with exact.resolve")
    seconds: dict[str, float] = {}
    clock = time.perf_counter()
    distinct_w, w_index = _distinct(weapons, weapon_key)
    keywords = relevant_keywords(distinct_w)
    distinct_t, t_index = _distinct(targets, lambda t: target_key(t, keywords))
    figures = np.full((4, len(distinct_w), len(distinct_t)), np.nan)
    out = _Collected()
    valid: list[int] = []
    for j, target in enumerate(distinct_t):
        try:
            exact._validate_target(target)
            valid.append(j)
        except exact.EngineInputError as error:
            out.refuse(str(error), len(distinct_w))
    tab = _Targets([distinct_t[j] for j in valid])
    columns = np.array(valid, dtype=np.int64)
    if len(valid):
        for i, weapon in enumerate(distinct_w):
            _weapon_pairs(i, weapon, tab, columns, context, figures, out)
            if progress:
                progress(i + 1, len(distinct_w))
    seconds["weapons"] = time.perf_counter() - clock
    clock = time.perf_counter()
    vectorised = _plain_chains(figures, out, tab, columns)
    seconds["chain"] = time.perf_counter() - clock
    clock = time.perf_counter()
    devastating = _devastating_chains(figures, out, tab, columns, distinct_w, context)
    seconds["devastating"] = time.perf_counter() - clock
    figures[:, np.isnan(figures).any(axis=0)] = np.nan  # a pair refused by its chain is refused in full
    return BatchResult(
        weapon_index=w_index, target_index=t_index, distinct_weapons=tuple(distinct_w),
        distinct_targets=tuple(distinct_t), distinct_pairs=len(distinct_w) * len(distinct_t),
        vectorised_pairs=vectorised + devastating, devastating_pairs=devastating, refused_pairs=out.refused,
        refusals=out.refusals, distinct_figures=figures, seconds=seconds,
    )


def _weapon_pairs(i: int, weapon: Weapon, tab: _Targets, columns: np.ndarray, context: Context,
                  figures: np.ndarray, out: _Collected) -> None:
    """Weapon ``i`` against every target of ``tab``: fills its expected damage in ``figures`` and
    hands its pairs to the chains (``out``). The targets are taken in variants (keywords the
    weapon reads, fives of models if [BLAST]/[CLEAVE]), then in classes (hit roll, wound roll
    needed, save, Feel No Pain) within a variant."""
    rules = rules_for(context.edition)
    if weapon.mortal_wounds_on_critical_hit is not None or weapon.mortal_wounds_on_critical_wound is not None:
        out.refuse("the batch engine takes no mortal wounds on a Critical Hit or Wound (a rule's effect); resolve "
                   "such a weapon with exact.resolve", len(tab.targets))
        return
    kw_codes, kw_reps = tab.keyword_codes(relevant_keywords([weapon]))
    fives = tab.models // 5 if (weapon.blast or weapon.cleave) else np.zeros_like(tab.models)
    variants, variant = np.unique(kw_codes * (int(fives.max()) + 1) + fives, return_inverse=True)
    variant = variant.reshape(-1)
    for v in range(variants.size):
        members = np.flatnonzero(variant == v)
        kw = int(kw_codes[members[0]])
        first = tab.targets[members[0]]
        try:
            exact._validate([weapon], first, context)  # reads the target's models only through its fives
        except exact.EngineInputError as error:
            out.refuse(str(error), members.size)
            continue
        rep = dataclasses.replace(first, keywords=tab.targets[kw_reps[kw]].keywords)
        w1 = exact._limited(exact._against(weapon, rep, []), rules, [])
        toughness, t_code = np.unique(tab.toughness[members], return_inverse=True)
        needed = np.array([exact.wound_roll_target(w1.strength, t) for t in toughness.tolist()])[t_code.reshape(-1)]
        n_def = len(tab.defence_targets)
        classes, cls = np.unique(needed * n_def + tab.defence[members], return_inverse=True)
        cls = cls.reshape(-1)
        numbers = _VariantNumbers(w1, rep, tab, context, out)
        by_class = numbers.classes(classes // n_def, classes % n_def)
        numbers.thin()
        # per member: its class's numbers
        figures[0, i, columns[members]] = by_class["expected_damage"][cls]
        dev = by_class["split"][cls] >= 0
        plain = ~dev
        ids = np.column_stack([by_class[k] for k in ("unsaved", "normal", "mortal", "hits", "split")])[cls]
        if plain.any():
            m = members[plain]
            out.plain.append(np.column_stack([np.full(m.size, i), columns[m], ids[plain, 0], ids[plain, 1],
                                              tab.shape[m]]))
        if dev.any():
            m = members[dev]
            out.devastating.append(np.column_stack([np.full(m.size, i), columns[m], ids[dev, 3], ids[dev, 4],
                                                    ids[dev, 1], ids[dev, 2], tab.shape[m]]))


class _VariantNumbers:
    """The numbers of one weapon (as it attacks one keyword variant of targets) against each class
    (wound roll needed, defence), composed from the exact engine's rule helpers as
    ``exact._plan`` does (without its steps); each part kept per the value it reads: the hit
    roll per Stealth, the save and the damage per defence, the wound roll per (Stealth, needed)."""

    def __init__(self, weapon: Weapon, rep: Target, tab: _Targets, context: Context, out: _Collected):
        self.weapon, self.rep, self.tab, self.context, self.out = weapon, rep, tab, context, out
        self.rules = rules_for(context.edition)
        self.per_model = exact._attack_dice(weapon, rep, context, _quiet)
        self.sustained = None if weapon.sustained_hits is None else exact._dice_pmf(weapon.sustained_hits)
        self.attacks_mean = weapon.models * exact._mean(self.per_model)
        self.sustained_mean = 0.0 if self.sustained is None else exact._mean(self.sustained)
        lance = weapon.lance and context.charged
        raw = context.wound_modifier
        if context.ignore_wound_modifiers and raw < 0:
            raw = 0
        self.modifier = capped(raw + (1 if lance else 0), self.rules)
        self.rerolls = exact._wound_rerolls(weapon, context, self.rules)
        self._hit: dict[bool, tuple] = {}
        self._defence: dict[int, tuple] = {}
        # what save_roll_target and _event_damage read of the weapon (AP, cover, Damage, Melta, Psychic)
        self._reads = (weapon.armour_penetration, weapon.is_melee, weapon.ignores_cover, weapon.indirect_fire,
                       weapon.damage.text, None if weapon.melta is None else weapon.melta.text, weapon.psychic)
        self._wound: dict[tuple, exact._Option] = {}
        #: unsaved counts to thin once the classes are read: hits id -> {P(wound and unsaved): count id}
        self.to_thin: dict[int, dict[float, int]] = {}

    def hit(self, stealth: bool) -> tuple:
        """(P(miss, hit, Critical Hit), the hits pmf id, the candidates) per Stealth (the hit roll
        reads Stealth, the candidates the keywords: the variant's)."""
        if stealth not in self._hit:
            w, context = self.weapon, self.context
            target = self.rep if self.rep.stealth == stealth else dataclasses.replace(self.rep, stealth=stealth)
            p_hit = exact._hit_roll(w, target, context, _quiet, {})
            hits = self.out.counts.add(
                ("hits", self.per_model.tobytes(), p_hit, None if self.sustained is None else self.sustained.tobytes(),
                 w.models),
                lambda: exact._stage_pmf(self.per_model, p_hit, exact._ONE, exact._ONE, self.sustained, w.models))
            self._hit[stealth] = (p_hit, hits, exact._candidates(w, target, context, p_hit))
        return self._hit[stealth]

    def defence(self, defence: int) -> tuple:
        """(Stealth, P(unsaved), normal and mortal damage pmfs, their ids, their means) of a
        defence (the save reads Sv, InSv and Stealth, the damage the Feel No Pain rolls: a target
        of that defence)."""
        if defence not in self._defence:
            w, context = self.weapon, self.context
            key = (self._reads, defence)
            if key in self.out.defences:
                self._defence[defence] = self.out.defences[key]
                return self._defence[defence]
            target = self.tab.defence_targets[defence]
            save = exact.save_roll_target(w, target, context)
            _, normal = exact._event_damage(w, target, context, False)
            _, mortal = exact._event_damage(w, target, context, True)
            self._defence[defence] = (target.stealth, 1.0 if save is None else (save - 1) / 6, normal, mortal,
                                      self.out.damages.add(normal), self.out.damages.add(mortal),
                                      exact._mean(normal), exact._mean(mortal))
            self.out.defences[key] = self._defence[defence]
        return self._defence[defence]

    def classes(self, needed: np.ndarray, defence: np.ndarray) -> dict[str, np.ndarray]:
        """The numbers against every class (``needed[c]``, ``defence[c]``), as arrays by class
        (``expected_damage``, ``unsaved``, ``normal``, ``mortal``, ``hits``, ``split``): the
        count and damage ids for the chains. Where the attacker has a choice (Lethal Hits in the
        11th edition, Anti thresholds), each candidate's expected damage (``exact._option``) and
        the choice of ``exact._best`` (the highest, the first among equal ones) per class."""
        w = self.weapon
        n_def = len(self.tab.defence_targets)
        table = self.out.defence_tables.get(self._reads)
        if table is None:
            table = self.out.defence_tables[self._reads] = np.full((n_def, 6), np.nan)
        missing = defence[np.isnan(table[defence, 0])]
        for d in np.unique(missing).tolist():
            stealth, unsaved_p, _, _, normal_id, mortal_id, normal_mean, mortal_mean = self.defence(d)
            table[d] = (stealth, unsaved_p, normal_id, mortal_id, normal_mean, mortal_mean)
        rows = table[defence]
        stealth = rows[:, 0].astype(bool)
        hit_of = {s: self.hit(s) for s in set(stealth.tolist())}
        unsaved_p, normal_mean, mortal_mean = rows[:, 1], rows[:, 4], rows[:, 5]
        width = len(self.rerolls) * max(len(candidates) for _, _, candidates in hit_of.values())
        # the hit roll per Stealth, the wound roll per (Stealth, needed, candidate): tables, then one gather
        combos = sorted(set(zip(stealth.tolist(), needed.tolist())))
        combo = np.searchsorted(np.array([s * 8 + n for s, n in combos]), stealth * 8 + needed)
        q_of = np.zeros((width, len(combos), 3))
        lethal_of = np.zeros((width, len(combos)), dtype=bool)
        valid_of = np.zeros((width, len(combos)), dtype=bool)
        hit_rows = np.zeros((len(combos), 3))
        hits_of = np.zeros(len(combos), dtype=np.int64)
        for c, (s, n) in enumerate(combos):
            ph, hits_id, candidates = hit_of[s]
            hit_rows[c], hits_of[c] = ph, hits_id
            options = [(reroll, lethal, anti) for reroll in self.rerolls for lethal, anti in candidates]  # exact's order
            for k, (reroll, chosen_lethal, anti) in enumerate(options):
                key = (s, n, k)  # the option's q reads neither the save nor the damage
                if key not in self._wound:
                    self._wound[key] = exact._option(chosen_lethal, anti, n, self.modifier, reroll,
                                                     self.context, ph, 1.0, w.devastating_wounds, 0.0, 0.0, 0.0, 0.0)
                q_of[k, c], lethal_of[k, c], valid_of[k, c] = self._wound[key].q, chosen_lethal, True
        p_hit, hits = hit_rows[combo], hits_of[combo]
        q, lethal, valid = q_of[:, combo], lethal_of[:, combo], valid_of[:, combo]
        es = np.where(p_hit[:, 2] > 0, self.sustained_mean, 0.0) if self.sustained is not None else 0.0
        p_dev = q[:, :, 2] if w.devastating_wounds else np.zeros(q.shape[:2])
        pu = (q[:, :, 1] + (0.0 if w.devastating_wounds else q[:, :, 2])) * unsaved_p
        rolled = pu * normal_mean + p_dev * mortal_mean
        own = np.where(lethal, unsaved_p * normal_mean, rolled)
        expected = self.attacks_mean * (p_hit[:, 1] * rolled + p_hit[:, 2] * (own + es * rolled))  # (width, classes)
        if width > 1:  # exact._best: the highest expected damage, the first within 1e-12 of it
            top = np.where(valid, expected, -np.inf).max(axis=0)
            chosen = np.argmax(valid & (expected >= top - 1e-12 * np.maximum(1.0, np.abs(top))), axis=0)
        else:
            chosen = np.zeros(needed.size, dtype=np.int64)
        pick = np.arange(needed.size)
        expected, pu, p_dev, lethal = expected[chosen, pick], pu[chosen, pick], p_dev[chosen, pick], lethal[chosen, pick]
        unsaved = np.full(needed.size, -1, dtype=np.int64)
        split = np.full(needed.size, -1, dtype=np.int64)
        for c in np.flatnonzero(lethal).tolist():
            if p_dev[c] > 0:
                split[c] = self._lethal_split(tuple(p_hit[c].tolist()), float(pu[c]), float(p_dev[c]),
                                              float(unsaved_p[c]))
            else:
                unsaved[c] = self._lethal_count(tuple(p_hit[c].tolist()), float(pu[c]), float(unsaved_p[c]))
        kinds = ((~lethal & (p_dev > 0), split,
                  lambda a, b: self.out.splits.setdefault(("split", a, b), len(self.out.splits)), pu, p_dev),
                 (~lethal & (p_dev == 0), unsaved, lambda a, b: self._thin_count(int(a), b), hits, pu))
        for mask, into, make, first, second in kinds:
            if mask.any():
                made: dict = {}
                into[mask] = [made[key] if key in made else made.setdefault(key, make(*key))
                              for key in zip(first[mask].tolist(), second[mask].tolist())]
        return {"expected_damage": expected, "unsaved": unsaved, "normal": rows[:, 2].astype(np.int64),
                "mortal": rows[:, 3].astype(np.int64), "hits": hits, "split": split}

    def _lethal_split(self, p_hit: tuple, pu: float, p_dev: float, unsaved_p: float) -> int:
        """The id of the devastating events of a weapon with Lethal Hits: per attack, a miss, a
        normal hit (split), or a Critical Hit (an automatic wound and its Sustained Hits, split)
        (``exact._joint_with_lethal``)."""
        w = self.weapon
        key = ("lethal", self.per_model.tobytes(), p_hit, pu, p_dev, unsaved_p,
               None if self.sustained is None else self.sustained.tobytes(), w.models)
        if key not in self.out.splits:
            attacks = exact._stage_pmf(self.per_model, None, None, None, None, w.models)
            self.out.lethal_joints[len(self.out.splits)] = exact._joint_with_lethal(
                attacks, p_hit, self.sustained, pu, p_dev, unsaved_p)
        return self.out.splits.setdefault(key, len(self.out.splits))

    def _lethal_count(self, p_hit: tuple, pu: float, unsaved_p: float) -> int:
        """The unsaved count with Lethal Hits: the Critical Hits' automatic wounds kept with
        P(unsaved), the other hits with ``pu`` (``exact._stage_pmf``)."""
        w = self.weapon
        return self.out.counts.add(
            ("lethal", self.per_model.tobytes(), p_hit, pu, unsaved_p,
             None if self.sustained is None else self.sustained.tobytes(), w.models),
            lambda: exact._stage_pmf(self.per_model, p_hit, np.array([1.0 - pu, pu]),
                                     np.array([1.0 - unsaved_p, unsaved_p]), self.sustained, w.models))

    def _thin_count(self, hits: int, pu: float) -> int:
        """The unsaved count: the hits each kept with ``pu`` (made by ``thin``)."""
        unsaved = self.out.counts.reserve(("thinned", hits, pu))
        if self.out.counts.pmfs[unsaved] is None:
            self.to_thin.setdefault(hits, {})[pu] = unsaved
        return unsaved

    def thin(self) -> None:
        """Make the unsaved counts ``of`` reserved: per hits pmf, all its thinnings at once."""
        for hits, by_p in self.to_thin.items():
            ps = np.array(list(by_p))
            for pmf, unsaved in zip(_thinned_many(self.out.counts.pmfs[hits], ps), by_p.values()):
                self.out.counts.pmfs[unsaved] = exact._truncated(pmf)
        self.to_thin = {}


def _expected_damage(attacks_mean: float, p_hit, sustained_mean: float, rolled_mean: float,
                     own_mean: float | None) -> float:
    """E[damage points] of a weapon: E[attacks] x (P(hit) x E[rolled hit] + P(Critical Hit) x
    (E[own] + E[Sustained] x E[rolled hit])), ``own`` the Critical Hit's own damage (Lethal Hits:
    an automatic wound; None: rolled as the others) (the closed form of ``exact._option``).

    >>> _expected_damage(10.0, (0.5, 1 / 3, 1 / 6), 0.0, 0.5, None)
    2.5
    """
    own = rolled_mean if own_mean is None else own_mean
    return attacks_mean * (p_hit[1] * rolled_mean + p_hit[2] * (own + sustained_mean * rolled_mean))


def _thinned(count: np.ndarray, p: float) -> np.ndarray:
    """The pmf of the number of ``count``'s events kept, each independently with ``p`` (a
    binomial thinning: ``sum_n count[n] Bin(n, p)``).

    >>> _thinned(np.array([0.0, 0.5, 0.5]), 0.5).tolist()
    [0.375, 0.5, 0.125]
    """
    if count.size == 1 or p <= 0.0:
        return np.array([float(count.sum())])
    return count @ exact._binomial_matrix(count.size - 1, p)


def _thinned_many(count: np.ndarray, ps: np.ndarray) -> np.ndarray:
    """``_thinned(count, p)`` for each p of ``ps``: rows of shape (len(ps), count.size).

    >>> _thinned_many(np.array([0.0, 0.5, 0.5]), np.array([0.5, 1.0])).tolist()
    [[0.375, 0.5, 0.125], [0.0, 0.5, 0.5]]
    """
    n = count.size - 1
    if n == 0:
        return np.tile(count, (ps.size, 1))
    k = np.arange(n + 1)
    lower = k[None, :] <= k[:, None]  # [n, k]
    gap = np.where(lower, k[:, None] - k[None, :], 0)
    out = np.empty((ps.size, n + 1))
    rows = max(1, _CELLS // (n + 1) ** 2)
    for first in range(0, ps.size, rows):
        p = ps[first : first + rows, None, None]
        terms = np.where(lower[None], exact._pascal(n) * p ** k[None, None, :] * (1.0 - p) ** gap[None], 0.0)
        out[first : first + rows] = np.einsum("n,pnk->pk", count, terms)
    return out


#: Cells (float64) of the arrays a step of the batch builds at once (32 MiB).
_CELLS = 4_000_000


def _joined(parts: list[np.ndarray], width: int) -> np.ndarray:
    """The rows of ``parts`` (int arrays of ``width`` columns) as one array."""
    return np.concatenate(parts) if parts else np.zeros((0, width), dtype=np.int64)


def _plain_chains(figures: np.ndarray, out: _Collected, tab: _Targets, columns: np.ndarray) -> int:
    """The models destroyed of every plain pair (no devastating events), group by group (damage
    per event, shape): the powers ``x0 T^u`` once, then one product with the distinct unsaved
    pmfs of the group. Returns the pairs resolved."""
    pairs = _joined(out.plain, 5)
    if not pairs.size:
        return 0
    jobs, job_of = _unique_rows(pairs[:, [3, 4, 2]])  # (normal, shape, unsaved), in that order
    result = np.full((jobs.shape[0], 3), np.nan)
    sizes = np.array([pmf.size for pmf in out.counts.pmfs], dtype=np.int64)
    stand_in = Weapon(name="", attacks=_ONE_DICE, skill=None, strength=1, armour_penetration=0, damage=_ONE_DICE)
    for group in _groups(jobs[:, :2]):
        normal, shape = jobs[group[0], 0], jobs[group[0], 1]
        models, wounds = tab.shapes[shape]
        target = Target(toughness=1, save=None, wounds=wounds, models=models)
        ids = jobs[group, 2]

        def work(unsaved: int) -> int:
            plan = exact._Plan(stand_in, stages={"unsaved": out.counts.pmfs[unsaved]},
                               normal_damage=out.damages.pmfs[normal])
            return exact.chain_work([plan], target)

        if work(int(ids[np.argmax(sizes[ids])])) > limits.MAX_ENGINE_WORK:  # the largest count of the group
            within = np.array([work(int(u)) <= limits.MAX_ENGINE_WORK for u in ids.tolist()], dtype=bool)
            group, ids = group[within], ids[within]  # the others stay NaN: refused below
            if not group.size:
                continue
        size = int(sizes[ids].max())
        T = exact._transition_matrix(out.damages.pmfs[normal].tobytes(), models, wounds)
        states = exact._powers(exact._initial_state(target)[None, :], T, size - 1)[:, 0, :]  # (size, S)
        P = np.zeros((ids.size, size))
        for row, u in enumerate(ids.tolist()):
            c = out.counts.pmfs[u]
            P[row, : c.size] = c
        result[group] = _summary(P @ states, models, wounds)
    return _store(result, job_of, pairs, figures, out)


def _store(result: np.ndarray, job_of: np.ndarray, pairs: np.ndarray, figures: np.ndarray, out) -> int:
    """Write each pair's chain figures (``result`` by job, ``job_of`` by pair) into ``figures``;
    the pairs whose chain was over the work limit (NaN) are counted as refused in ``out``.
    Returns the number of pairs resolved."""
    refused = np.isnan(result[job_of, 0])
    if refused.any():
        out.refuse(f"the allocation chain needs more than {limits.MAX_ENGINE_WORK:.2g} steps of the exact engine; "
                   "use the simulator", int(refused.sum()))
    figures[1:, pairs[:, 0], pairs[:, 1]] = result[job_of].T
    return int((~refused).sum())


def _unique_rows(rows: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """The distinct rows of an int array in lexicographic order, and each row's index among them
    (``np.unique(rows, axis=0, return_inverse=True)``, one column at a time on int64 codes).

    >>> _unique_rows(np.array([[2, 1], [0, 5], [2, 1]]))
    (array([[0, 5],
           [2, 1]]), array([1, 0, 1]))
    """
    code = np.zeros(rows.shape[0], dtype=np.int64)
    for column in rows.T:
        _, code = np.unique(code * (int(column.max()) + 1) + column, return_inverse=True)
        code = code.reshape(-1)
    _, first = np.unique(code, return_index=True)
    return rows[first], code


def _groups(keys: np.ndarray) -> list[np.ndarray]:
    """The runs of equal rows of ``keys`` (sorted), as arrays of row indices.

    >>> [g.tolist() for g in _groups(np.array([[0, 1], [0, 1], [2, 0]]))]
    [[0, 1], [2]]
    """
    return np.split(np.arange(keys.shape[0]), np.flatnonzero(np.diff(keys, axis=0).any(axis=1)) + 1)


def _summary(x: np.ndarray, models: int, wounds: int) -> np.ndarray:
    """(E[models destroyed], P(>= 1), P(all)) of each row of chain states ``x`` (rows, S),
    normalised as ``exact._models_pmf``.

    >>> _summary(np.array([[0.5, 0.0, 0.5]]), 2, 1).tolist()
    [[1.0, 0.5, 0.5]]
    """
    alive = models * wounds
    pmf = np.concatenate([x[:, :alive].reshape(-1, models, wounds).sum(axis=2), x[:, alive:]], axis=1)
    pmf = np.clip(pmf, 0.0, None)
    pmf /= pmf.sum(axis=1, keepdims=True)
    return np.column_stack([pmf @ np.arange(models + 1), 1.0 - pmf[:, 0], pmf[:, -1]])


def _split_joint(hits: np.ndarray, p_unsaved: float, p_dev: float, depth: int) -> np.ndarray:
    """``J[v, u]`` = P(V = v devastating, U = u unsaved) for v < ``depth`` when each of R hits
    (pmf ``hits``) is devastating with ``p_dev``, else unsaved with ``p_unsaved`` (a multinomial
    split): ``J[v, u] = sum_m P(R = m + v) Bin(m + v, p_dev)(v) Bin(m, p')(u)``,
    p' = p_unsaved / (1 - p_dev) (``exact._with_devastating``'s closed form).

    >>> _split_joint(np.array([0.0, 1.0]), 0.5, 0.25, 2).tolist()
    [[0.25, 0.5], [0.25, 0.0]]
    """
    n = hits.size - 1
    depth = min(depth, n + 1)
    by_dev = exact._binomial_columns(n, p_dev, depth)  # [r, v]
    v = np.arange(depth)[:, None]
    r = v + np.arange(n + 1)[None, :]  # [v, m]
    inside = r <= n
    r = np.where(inside, r, 0)
    weight = np.where(inside, hits[r] * by_dev[r, np.broadcast_to(v, r.shape)], 0.0)
    p = p_unsaved / (1.0 - p_dev) if p_dev < 1.0 else 0.0
    return weight @ exact._binomial_matrix(n, p)


def _lethal_joint(counts: "exact._DevastatingCounts", p_nonzero: float, depth: int) -> np.ndarray:
    """``J[v, u]`` = P(V = v devastating events that do damage, U = u unsaved) for v < ``depth``
    when each of N attacks (pmf ``counts.count``) makes (a unsaved, b devastating) events with
    ``counts.outcome[a, b]``, each devastating event doing damage with ``p_nonzero``: Horner's
    scheme over the attacks, ``J = sum_n P(N = n) outcome^(*n)`` (2-D convolution powers).

    >>> from pipeline.engine.exact import _DevastatingCounts
    >>> _lethal_joint(_DevastatingCounts(np.array([0.0, 1.0]), np.array([[0.5, 0.25], [0.25, 0.0]]), False),
    ...               1.0, 2).tolist()
    [[0.5, 0.25], [0.25, 0.0]]
    """
    count = exact._truncated(counts.count)
    outcome = exact._thinned(counts.outcome, p_nonzero)[:, :depth]
    J = np.array([[count[-1]]])  # [u, v]
    for c in count[-2::-1]:
        J = exact._convolve2d(J, outcome)[:, :depth]
        J[0, 0] += c
    return J.T


def _devastating_chains(figures: np.ndarray, out: _Collected, tab: _Targets, columns: np.ndarray,
                        weapons: Sequence[Weapon], context: Context) -> int:
    """The models destroyed of every Devastating Wounds pair (split hits), group by group (normal
    damage, mortal damage, shape): ``sum_v (sum_u J[v, u] x0 T^u) D^v`` by Horner's scheme over v
    for the whole group, v counting the devastating events that do damage (``exact._mortal_events``:
    D their transition, below its cap; the mass at the cap is every model destroyed, as in
    ``exact._chain``). Returns the pairs resolved."""
    pairs = _joined(out.devastating, 7)
    if not pairs.size:
        return 0
    splits = {n: split for split, n in out.splits.items()}
    jobs, job_of = _unique_rows(pairs[:, [4, 5, 6, 2, 3]])  # (normal, mortal, shape, hits, split)
    jobs = jobs[:, [3, 4, 0, 1, 2]]  # (hits, split, normal, mortal, shape), still grouped by the last three
    first_pair = np.zeros(jobs.shape[0], dtype=np.int64)
    first_pair[job_of[::-1]] = np.arange(pairs.shape[0])[::-1]
    result = np.full((jobs.shape[0], 3), np.nan)
    sizes = np.array([-1 if pmf is None else pmf.size for pmf in out.counts.pmfs] + [0], dtype=np.int64)
    joints: dict[tuple, tuple] = {}  # (J, rows asked) of (hits, split, P(damaging)): rows below a cap do not read it
    for group in _groups(jobs[:, 2:]):
        normal, mortal, shape = jobs[group[0], 2:]
        models, wounds = tab.shapes[shape]
        target = Target(toughness=1, save=None, wounds=wounds, models=models)
        p_nonzero, D, cap = exact._mortal_events(out.damages.pmfs[mortal], target)
        states_n = models * wounds + 1
        events = sizes[jobs[group, 0]]  # a bound on the chain's work; near the limit, the exact engine's estimate
        near = (events * states_n * (states_n + 2 * np.minimum(cap, events)) + states_n ** 3 * 12 > limits.MAX_ENGINE_WORK)
        keep = []
        for job, close in zip(group.tolist(), near.tolist()):
            split = int(jobs[job, 1])
            lethal = out.lethal_joints.get(split)
            if lethal is not None or close:
                joint = lethal if lethal is not None else exact._split_counts(out.counts.pmfs[jobs[job, 0]],
                                                                              *splits[split][1:])
                plan = exact._Plan(weapons[pairs[first_pair[job], 0]], normal_damage=out.damages.pmfs[normal],
                                   mortal_damage=out.damages.pmfs[mortal], joint=joint)
                if exact.chain_work([plan], target) > limits.MAX_ENGINE_WORK:
                    continue
            keep.append(job)
        if not keep:
            continue
        group_joints = []
        for job in keep:
            hits, split = int(jobs[job, 0]), int(jobs[job, 1])
            key = (hits, split, p_nonzero)
            J, depth = joints.get(key, (None, 0))
            if J is None or (cap > depth and J.shape[0] == depth):  # kept with fewer rows than wanted
                depth = max(cap, 1)
                if split in out.lethal_joints:
                    J = _lethal_joint(out.lethal_joints[split], p_nonzero, depth)
                else:
                    _, pu, p_dev = splits[split]
                    J = _split_joint(out.counts.pmfs[hits], pu, p_dev * p_nonzero, depth)
                joints[key] = (J, depth)
            group_joints.append(J[:cap])
        joints_of_group = group_joints
        size = max(J.shape[1] for J in joints_of_group)
        T = exact._transition_matrix(out.damages.pmfs[normal].tobytes(), models, wounds)
        states = exact._powers(exact._initial_state(target)[None, :], T, size - 1)[:, 0, :]  # (size, S)
        depth = max(J.shape[0] for J in joints_of_group)
        A = np.zeros((len(keep), depth, states.shape[1]))  # [job, v, s] = sum_u J[v, u] x0 T^u
        for row, J in enumerate(joints_of_group):
            A[row, : J.shape[0]] = J @ states[: J.shape[1]]
        Y = A[:, -1]
        for v in range(depth - 2, -1, -1):
            Y = Y @ D + A[:, v]
        Y[:, -1] += np.maximum(0.0, 1.0 - Y.sum(axis=1))  # devastating counts at the cap: every model destroyed
        result[keep] = _summary(Y, models, wounds)
    return _store(result, job_of, pairs, figures, out)
