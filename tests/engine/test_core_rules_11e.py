"""The 11th-edition core rules as worded (``gdc-11e/core/core_rules.json``, English), each case
with the section it quotes, its exact value derived by hand (a ``Fraction``) and, for
``--edition 10``, the 10th edition's wording kept. Every case is checked on the exact engine
(within 1e-9) and on the Monte Carlo simulator (within 5 standard errors, fixed seed), which read
the same declaration (``pipeline/engine/edition_rules.toml``) with separate code.
"""

from __future__ import annotations

from fractions import Fraction

import pytest

from pipeline.engine.exact import EngineInputError, resolve
from pipeline.engine.profiles import Context, Target
from pipeline.engine.simulate import simulate_trials
from tests.engine.test_simulate import assert_mean, weapon

EXACT = 1e-9
TRIALS = 40_000


def meq(**changes) -> Target:
    return Target(**{"toughness": 4, "save": 3, "wounds": 1, "models": 10, **changes})


def e10(**kw) -> Context:
    return Context(edition=10, **kw)


def e11(**kw) -> Context:
    return Context(edition=11, **kw)


VEHICLE = frozenset({"VEHICLE"})

# (id, quote, weapon changes, target changes, context, stage, expected mean per weapon)
CASES = [
    # 02.02.01 When modifying characteristics + 13.08 Benefit of Cover
    ("bs6-cover-plus-one", "After all modifiers have been applied: BS cannot be 1+ (or better) or 7+ (or worse); "
     "13.08: worsen the BS characteristic of that attack by 1",
     {"skill": 6, "attacks": "6"}, {}, e11(cover=True, hit_modifier=1), "hits", Fraction(6 * 2, 6)),
    # 6+ would be 7+, is held at 6+; +1 to hit: an unmodified 5 or 6 hits: 2/6 per attack (not 1/6)
    ("bs6-cover-10th", "10th: cover is +1 to the save, the BS is unchanged",
     {"skill": 6, "attacks": "6"}, {}, e10(cover=True, hit_modifier=1), "hits", Fraction(6 * 2, 6)),
    # 02.02.01: AP cannot be worse than 0 (an AP of +1 is AP 0): Sv3+ saves on 3+, unsaved 2/6 per wound
    ("ap-never-positive", "After all modifiers have been applied: AP cannot be worse than 0",
     {"skill": None, "torrent": True, "strength": 8, "armour_penetration": 1, "attacks": "6"}, {}, e11(),
     "unsaved", Fraction(6 * 5, 6) * Fraction(2, 6)),
    # 02.02.01: A cannot be less than 1: D3-1 rolls 0, 1, 2; the 0 is 1: mean (1 + 1 + 2) / 3 = 4/3
    ("attacks-at-least-one", "After all modifiers have been applied: A cannot be less than 1",
     {"attacks": "D3-1"}, {}, e11(), "attacks", Fraction(4, 3)),
    ("attacks-d3-minus-one-10th", "10th: a result of 0 is no attack", {"attacks": "D3-1"}, {}, e10(), "attacks", Fraction(1)),
    # 24.06 [CLEAVE]: A3, [CLEAVE 1], one target of 16 models: 3 + 1 x 3 = 6 attack dice (the rule's example)
    ("cleave", "24.06: add X additional attack dice for every five models that were in the target unit",
     {"attacks": "3", "cleave": 1}, {"models": 16}, e11(), "attacks", Fraction(6)),
    ("cleave-10th", "10th: no [CLEAVE] rule", {"attacks": "3", "cleave": 1}, {"models": 16}, e10(), "attacks", Fraction(3)),
    # 24.16 [HEAVY]: BS4+ with +1: 3+ hits, 4/6
    ("heavy", "24.16: add 1 to the hit roll if all of the following apply to the attacking unit",
     {"skill": 4, "heavy": True, "attacks": "6"}, {}, e11(stationary=True), "hits", Fraction(6 * 4, 6)),
    # 24.38 [TWIN-LINKED]: S4 vs T4 wounds on 4+; re-rolling the failed roll: 1/2 + 1/2 x 1/2 = 3/4
    ("twin-linked", "24.38: you can re-roll the wound roll",
     {"skill": None, "torrent": True, "twin_linked": True, "attacks": "6"}, {}, e11(), "wounds", Fraction(6 * 3, 4)),
    # 10.07 Indirect Shooting: an unmodified hit roll of 1-5 fails: only a 6 hits (1/6), and no re-roll
    ("indirect", "10.07: An unmodified hit roll of 1-5 fails ... You cannot re-roll hit rolls.",
     {"indirect_fire": True, "attacks": "6"}, {}, e11(indirect=True, reroll_hits="failed"), "hits", Fraction(1)),
    # 10.07: Remained Stationary and the target visible to a friendly unit: 1-3 fails; cover: BS3+ -> 4+: 4, 5, 6 hit
    ("indirect-spotted", "10.07: in which case an unmodified hit roll of 1-3 fails instead; "
     "The target has the benefit of cover against that attack (13.08)",
     {"indirect_fire": True, "attacks": "6"}, {},
     e11(indirect=True, stationary=True, target_visible_to_friendly_unit=True), "hits", Fraction(6 * 3, 6)),
    # 10th Indirect Fire: -1 to hit (BS3+ needs 4+), 1-3 fails: 3/6 hit
    ("indirect-10th", "10th: subtract 1 from that attack's Hit roll, an unmodified Hit roll of 1-3 always fails",
     {"indirect_fire": True, "attacks": "6"}, {}, e10(indirect=True), "hits", Fraction(6 * 3, 6)),
    # 10th: and the Benefit of Cover: Sv3+ AP-1 is 4+, +1 is 3+: unsaved 2/6 of 3/6 hits x 1/2 wounds
    ("indirect-10th-cover", "10th: and the target has the Benefit of Cover against that attack",
     {"indirect_fire": True, "attacks": "6", "armour_penetration": -1}, {}, e10(indirect=True), "unsaved",
     Fraction(6 * 3, 6) * Fraction(1, 2) * Fraction(2, 6)),
    # an [INDIRECT FIRE] weapon fired directly is an ordinary weapon
    ("indirect-not-used", "24.19: units ... can shoot using indirect shooting (a choice)",
     {"indirect_fire": True, "attacks": "6"}, {}, e11(), "hits", Fraction(6 * 4, 6)),
    # 10.06 Close-quarters shooting: a VEHICLE's non-[CLOSE-QUARTERS] attack: -1 to hit: BS3+ needs 4+
    ("close-quarters-vehicle", "10.06: Unless that attack is made with a [CLOSE-QUARTERS] weapon ... subtract 1 from the hit roll",
     {"attacks": "6"}, {}, e11(close_quarters=True, attacker_keywords=VEHICLE), "hits", Fraction(6 * 3, 6)),
    ("close-quarters-weapon", "10.06: a [CLOSE-QUARTERS] weapon targeting a unit the unit is engaged with: no -1",
     {"attacks": "6", "close_quarters": True}, {}, e11(close_quarters=True, attacker_keywords=VEHICLE), "hits",
     Fraction(6 * 4, 6)),
    ("close-quarters-infantry", "10.06: the -1 is for MONSTER/VEHICLE models only",
     {"attacks": "6"}, {}, e11(close_quarters=True, attacker_keywords=frozenset({"INFANTRY"})), "hits", Fraction(6 * 4, 6)),
    # 24.39 Damaged: -1 to hit rolls: BS3+ needs 4+
    ("damaged", "24.39: While a model is damaged, that model's attacks have -1 to hit rolls.",
     {"attacks": "6"}, {}, e11(damaged=True), "hits", Fraction(6 * 3, 6)),
    ("damaged-capped", "02.02.01: hit rolls can never be modified by more than -1 or +1 (Damaged with -1 more)",
     {"attacks": "6"}, {}, e11(damaged=True, hit_modifier=-1), "hits", Fraction(6 * 3, 6)),
    ("damaged-10th", "10th: the Damaged profile's -1 to the Hit roll", {"attacks": "6"}, {}, e10(damaged=True), "hits",
     Fraction(6 * 3, 6)),
    # 24.29 [PSYCHIC]: ignore any or all modifiers to the hit roll: the Damaged -1 is ignored (4/6)
    ("psychic-ignores-damaged", "24.29: you can ignore any or all modifiers ... to the hit roll",
     {"attacks": "6", "psychic": True}, {}, e11(damaged=True), "hits", Fraction(6 * 4, 6)),
    # 24.28 [PRECISION]: only chooses a CHARACTER allocation group: against identical models nothing changes
    ("precision", "24.28: the active player can select one allocation group that contains one of those visible "
     "CHARACTER models", {"attacks": "6", "precision": True}, {}, e11(), "hits", Fraction(6 * 4, 6)),
]


@pytest.mark.parametrize("case", CASES, ids=[c[0] for c in CASES])
def test_exact(case):
    _, _, w, t, context, stage, expected = case
    result = resolve([weapon(**w)], meq(**t), context)
    assert abs(getattr(result, stage).mean - float(expected)) <= EXACT


@pytest.mark.parametrize("case", CASES, ids=[c[0] for c in CASES])
def test_simulator_agrees(case):
    _, _, w, t, context, stage, expected = case
    counts = simulate_trials([weapon(**w)], meq(**t), context, trials=TRIALS, seed=12)
    assert_mean(getattr(counts, stage), expected)


def test_positive_ap_is_still_an_error_in_the_10th_edition():
    with pytest.raises(EngineInputError, match="armour_penetration is 0 or negative"):
        resolve([weapon(armour_penetration=1)], meq(), e10())


def test_limit_steps_are_reported():
    r = resolve([weapon(skill=6)], meq(), e11(cover=True))
    assert any("would be 7+; BS cannot be 7+ (or worse)" in s.summary for s in r.steps)
    r = resolve([weapon(armour_penetration=1)], meq(), e11())
    assert any("AP 1 -> 0" in s.summary for s in r.steps)
    r = resolve([weapon(attacks="3", cleave=1)], meq(models=16), e11())
    assert [s.rule_key for s in r.steps].count("cleave") == 1


def test_precision_changes_nothing_against_identical_models():
    plain = resolve([weapon(attacks="6", damage="2")], meq(wounds=2), e11())
    precise = resolve([weapon(attacks="6", damage="2", precision=True)], meq(wounds=2), e11())
    assert plain.models_destroyed == precise.models_destroyed
    assert any(s.rule_key == "precision" and "no effect" in s.summary for s in precise.steps)
