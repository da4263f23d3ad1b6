"""The Monte Carlo simulator under the 11th-edition rules (Context(edition=11)), against values
computed by hand from the rules text (raw/wahapedia-11e-core-rules-astra-militarum-page.txt).

Statistical bound, as in test_simulate.py: a simulated mean passes when it is within 5 standard
errors (sample sd / sqrt(trials)) of the hand-computed value; a probability is the mean of an
indicator. The seed is fixed, so every test is deterministic; 5 standard errors leave a false-alarm
rate of about 6e-7 per comparison should the seed or the trial count be changed.
"""

from __future__ import annotations

from fractions import Fraction

import numpy as np
import pytest

from pipeline.engine.profiles import Anti, Context, Target, Weapon
from pipeline.engine.simulate import (
    LETHAL_HITS_OPTIONS,
    AttackerChoice,
    TrialCounts,
    attacker_choices,
    simulate,
    simulate_trials,
)
from pipeline.errors import InputError
from tests.engine.test_simulate import assert_mean, target, torrent, weapon

TRIALS = 100_000
INFANTRY = frozenset({"INFANTRY"})


def run(weapons: list[Weapon], tgt: Target, context: Context) -> TrialCounts:
    return simulate_trials(weapons, tgt, context, trials=TRIALS, seed=11)


def e11(**changes) -> Context:
    return Context(edition=11, **changes)


# 13.08 Benefit of Cover: worsen the BS characteristic by 1, outside the hit-roll modifier cap.


@pytest.mark.parametrize(
    "skill, changes, context, p_hit",
    [
        (3, {}, e11(cover=True), Fraction(3, 6)),  # BS3+ becomes 4+
        (3, {}, e11(cover=True, hit_modifier=-1), Fraction(2, 6)),  # 4+ then -1: 5+
        (3, {}, e11(cover=True, hit_modifier=-2), Fraction(2, 6)),  # the modifier is capped, not the BS
        (2, {}, e11(cover=True, hit_modifier=-1), Fraction(3, 6)),  # 2+ -> 3+, -1: net -2 on 2+
        (3, {}, e11(cover=True, hit_modifier=1), Fraction(4, 6)),  # 4+ then +1: 3+
        (6, {}, e11(cover=True), Fraction(1, 6)),  # would be 7+; BS cannot be 7+ after modifiers: 6+
        (6, {}, e11(cover=True, hit_modifier=1), Fraction(2, 6)),  # held at 6+, then +1: a 5 hits
        (4, {"heavy": True}, e11(cover=True, stationary=True), Fraction(3, 6)),  # 5+ then +1
        (3, {"ignores_cover": True}, e11(cover=True), Fraction(4, 6)),
        (3, {"is_melee": True}, e11(cover=True), Fraction(4, 6)),  # ranged attacks only
        (3, {}, e11(), Fraction(4, 6)),
    ],
)
def test_cover_worsens_ballistic_skill(skill, changes, context, p_hit):
    counts = run([weapon(attacks="6", skill=skill, **changes)], target(), context)
    assert_mean(counts.hits, 6 * p_hit)


def test_cover_keeps_critical_hits_on_an_unmodified_six():
    # BS6+ in cover (7+): every hit is a 6, so each is critical: Sustained Hits 1 doubles it and
    # Lethal Hits auto-wounds it (S1 vs T12 would otherwise need a 6).
    w = weapon(attacks="6", skill=6, sustained_hits="1", lethal_hits=True, strength=1)
    counts = run([w], target(toughness=12), e11(cover=True, lethal_hits_choice=True))
    assert_mean(counts.hits, 2)  # 6 x 1/6 x (1 + 1)
    assert_mean(counts.wounds, 1 + Fraction(1, 6))  # the crit auto-wounds, the extra hit needs a 6


@pytest.mark.parametrize(
    "save, invulnerable, ap, unsaved_11th, unsaved_10th",
    [
        (4, None, 0, 1.5, 1.0),  # 10th: 4+ becomes 3+ in cover; 11th: the save is unchanged
        (3, None, 0, 1.0, 1.0),  # no Sv 3+ / AP 0 exception to model: 3+ either way
        (3, None, -1, 1.5, 1.0),  # 11th: 4+; 10th: 4+ improved to 3+
        (3, 4, -3, 1.5, 1.5),  # the InSv 4+ is better than armour 6+
        (5, 4, 0, 1.5, 1.5),  # 11th: the better of armour 5+ and InSv 4+
    ],
)
def test_cover_does_not_change_the_save(save, invulnerable, ap, unsaved_11th, unsaved_10th):
    w = torrent(attacks="6", armour_penetration=ap)  # 3 wounds expected; no hit roll, so no BS
    tgt = target(save=save, invulnerable_save=invulnerable)
    assert_mean(run([w], tgt, e11(cover=True)).unsaved, unsaved_11th)
    assert_mean(run([w], tgt, Context(cover=True)).unsaved, unsaved_10th)


# 24.33 STEALTH: the benefit of cover (11th); -1 to hit in the 10th.


@pytest.mark.parametrize(
    "changes, context, p_hit",
    [
        ({}, e11(), Fraction(3, 6)),  # BS3+ becomes 4+
        ({}, e11(cover=True), Fraction(3, 6)),  # one benefit of cover, not two
        ({}, e11(hit_modifier=-1), Fraction(2, 6)),  # 4+ then -1, outside the cap
        ({"ignores_cover": True}, e11(), Fraction(4, 6)),  # 24.18: not even from Stealth
        ({"is_melee": True}, e11(), Fraction(4, 6)),
        ({}, Context(), Fraction(3, 6)),  # 10th: -1 to hit
        ({}, Context(hit_modifier=-1), Fraction(3, 6)),  # 10th: -2 capped at -1
        ({"ignores_cover": True}, Context(), Fraction(3, 6)),  # 10th Stealth is not cover
    ],
)
def test_stealth(changes, context, p_hit):
    counts = run([weapon(attacks="6", **changes)], target(stealth=True), context)
    assert_mean(counts.hits, 6 * p_hit)


# [PSYCHIC]: "you can ignore any or all modifiers to that attack's BS or WS characteristic and any
# or all modifiers to the hit roll" (corpus/bsdata-11e, Warhammer 40,000.json): each modifier that
# hurts the attack is ignored, each one that helps is kept.


@pytest.mark.parametrize(
    "tgt, context, changes, p_hit",
    [
        (target(), e11(cover=True, hit_modifier=-1), {}, Fraction(4, 6)),  # both ignored: 3+
        (target(), e11(cover=True), {}, Fraction(4, 6)),  # the BS worsening is ignored
        (target(stealth=True), e11(), {}, Fraction(4, 6)),
        (target(), e11(hit_modifier=-1), {}, Fraction(4, 6)),
        (target(), e11(hit_modifier=1), {}, Fraction(5, 6)),  # a helpful modifier is kept
        (target(), e11(cover=True, hit_modifier=1), {}, Fraction(5, 6)),  # cover ignored, +1 kept
        (target(), e11(cover=True, stationary=True), {"heavy": True}, Fraction(5, 6)),
        (target(), e11(hit_modifier=-2, stationary=True), {"heavy": True}, Fraction(5, 6)),  # -2 ignored
        (target(), e11(hit_modifier=2, stationary=True), {"heavy": True}, Fraction(5, 6)),  # capped +1
        (target(), Context(hit_modifier=-1), {}, Fraction(3, 6)),  # 10th: a tag only
    ],
)
def test_psychic_ignores_the_modifiers_that_hurt_it(tgt, context, changes, p_hit):
    counts = run([weapon(attacks="6", psychic=True, **changes)], tgt, context)
    assert_mean(counts.hits, 6 * p_hit)


# 15.09 SNAP SHOOTING: only unmodified 6s hit, no hit re-rolls.


@pytest.mark.parametrize(
    "context, p_hit",
    [
        (e11(overwatch=True, reroll_hits="failed"), Fraction(1, 6)),
        (e11(overwatch=True, reroll_hits="ones", hit_modifier=1, cover=True), Fraction(1, 6)),
        (Context(overwatch=True, reroll_hits="failed"), 1 - Fraction(5, 6) ** 2),  # 10th: re-rolls
    ],
)
def test_snap_shooting_hits_only_on_an_unmodified_six(context, p_hit):
    counts = run([weapon(attacks="6", sustained_hits="2")], target(), context)
    assert_mean(counts.hits, 6 * p_hit * 3)  # every hit is critical: 2 extra hits each


# 24.23 LETHAL HITS: optional.

# 6 attacks BS4+ S4 vs T4 Sv3+, D1, [LETHAL HITS, DEVASTATING WOUNDS] (T09 of cases/README.md).
# Auto-wound: the Critical Hits' automatic wounds are never Critical Wounds, so the mortal wounds
# come from the normal hits' 6s: 6 x 2/6 x 1/6 = 1/3; unsaved = 6 x (1/6 + 2/6 x 2/6) x 1/3 = 5/9.
# Roll to wound: every hit (1/2) rolls; 6 -> MW, 4-5 -> save 3+: MW = 6 x 1/2 x 1/6 = 1/2,
# unsaved = 6 x 1/2 x 2/6 x 1/3 = 1/3; damage 5/6 < 8/9, so the engine's own choice is auto-wound.
T09 = dict(attacks="6", skill=4, lethal_hits=True, devastating_wounds=True)


@pytest.mark.parametrize(
    "choice, mortal, unsaved",
    [(True, Fraction(1, 3), Fraction(5, 9)), (False, Fraction(1, 2), Fraction(1, 3))],
)
def test_lethal_hits_choice_with_devastating_wounds(choice, mortal, unsaved):
    counts = run([weapon(**T09)], target(save=3), e11(lethal_hits_choice=choice))
    assert_mean(counts.mortal_wounds, mortal)
    assert_mean(counts.unsaved, unsaved)
    assert_mean(counts.damage, mortal + unsaved)


# 6 attacks BS4+ S4 D2 [LETHAL HITS, DEVASTATING WOUNDS, ANTI-INFANTRY 4+] vs T4 Sv2+ INFANTRY.
# Auto-wound, per attack: crit hit 1/6 -> save 2+ -> unsaved 1/6 x 1/6; normal hit 2/6 -> wound
# roll 4+, all critical (Anti 4+) -> 2 MW: damage 6 x (1/36 + 2/6 x 1/2) x 2 = 7/3.
# Roll to wound: every hit 1/2 -> critical on 4+ -> 2 MW: damage 6 x 1/2 x 1/2 x 2 = 3.
ANTI = dict(attacks="6", skill=4, damage="2", lethal_hits=True, devastating_wounds=True,
            anti=(Anti("INFANTRY", 4),))


@pytest.mark.parametrize(
    "choice, mortal, unsaved",
    [(True, 2, Fraction(1, 6)), (False, 3, 0)],
)
def test_lethal_hits_choice_with_anti(choice, mortal, unsaved):
    counts = run([weapon(**ANTI)], target(save=2, keywords=INFANTRY), e11(lethal_hits_choice=choice))
    assert_mean(counts.mortal_wounds, mortal)
    assert_mean(counts.unsaved, unsaved)
    assert_mean(counts.damage, mortal + 2 * unsaved)


def test_lethal_hits_choice_none_keeps_the_better_option_per_weapon():
    ws = [weapon(**ANTI, name="haywire"), weapon(**T09, name="bolter"), weapon(name="plain")]
    tgt = target(save=2, keywords=INFANTRY)
    # haywire: roll to wound (3 > 7/3). bolter against Sv2+, per attack: auto-wound
    # 1/6 x 1/6 + 2/6 x 1/6 + 2/6 x 2/6 x 1/6 = 22/216; roll to wound 1/2 x (1/6 + 2/6 x 1/6) =
    # 24/216: E[damage] 11/18 vs 2/3, so it rolls to wound too. "plain" has no Lethal Hits.
    haywire_anti = ANTI["anti"][0]
    assert attacker_choices(ws, tgt, e11(), trials=TRIALS, seed=11) == (
        AttackerChoice(False, haywire_anti), AttackerChoice(False), AttackerChoice(False))
    # Against Sv6+ the bolter auto-wounds: 6 x (1/6 x 5/6 + 2/6 x 1/6 + 2/6 x 2/6 x 5/6) = 31/18
    # vs 6 x 1/2 x (1/6 + 2/6 x 5/6) = 4/3.
    assert attacker_choices(ws[1:2], target(save=6), e11(), trials=TRIALS, seed=11) == (AttackerChoice(True),)
    result = simulate(ws, tgt, e11(), trials=TRIALS, seed=11)
    assert result.choices == {"Lethal Hits: haywire": LETHAL_HITS_OPTIONS[False],
                              "Lethal Hits: bolter": LETHAL_HITS_OPTIONS[False]}
    forced = simulate(ws, tgt, e11(lethal_hits_choice=False), trials=TRIALS, seed=11)
    for name in TrialCounts.FIELDS:
        assert getattr(result, name) == getattr(forced, name)  # same choice, same seed, same draws


def test_lethal_hits_without_critical_hits_auto_wounds():
    # A Torrent weapon never scores a Critical Hit: nothing to choose, nothing reported.
    ws = [torrent(lethal_hits=True, devastating_wounds=True, name="flamer")]
    assert attacker_choices(ws, target(), e11(), trials=1_000, seed=1) == (AttackerChoice(True),)
    assert simulate(ws, target(), e11(), trials=1_000).choices == {}


def test_lethal_hits_choice_is_ignored_in_the_10th_edition():
    counts = run([weapon(**T09)], target(save=3), Context(lethal_hits_choice=False))
    assert_mean(counts.mortal_wounds, Fraction(1, 3))
    assert simulate([weapon(**T09)], target(), Context(), trials=100).choices == {}


# 24.10 DEVASTATING WOUNDS: the attack ends; D mortal wounds after normal damage, one model at most.


def test_devastating_wounds_damage_one_model_per_critical_wound():
    # Anti 2+: every successful wound roll is critical. D3 mortal wounds against W1 models.
    w = torrent(attacks="3", damage="3", anti=(Anti("INFANTRY", 2),), devastating_wounds=True)
    counts = run([w], target(save=2, models=3, keywords=INFANTRY), e11())
    assert np.all(counts.unsaved == 0)  # the attack sequence ended: no save, no normal damage
    assert np.array_equal(counts.models_destroyed, counts.mortal_wounds // 3)
    assert_mean(counts.mortal_wounds, 3 * 3 * Fraction(5, 6))


def test_devastating_wounds_come_after_the_normal_damage_of_every_weapon():
    # Devastating D2, devastating D1, then a normal D1 against W2 models: with the mortal wounds
    # after the normal damage (1, then 2 and 1) only 1 model is destroyed.
    anti = (Anti("INFANTRY", 2),)
    ws = [torrent(strength=8, damage="2", anti=anti, devastating_wounds=True),
          torrent(strength=8, damage="1", anti=anti, devastating_wounds=True),
          torrent(strength=8, damage="1")]
    counts = run(ws, target(wounds=2, models=3, keywords=INFANTRY), e11())
    all_three = (counts.unsaved == 1) & (counts.mortal_wounds == 3)
    assert all_three.mean() > 0.5
    assert np.all(counts.models_destroyed[all_three] == 1)


# ANTI: any two Anti abilities are duplicates: one is used, the attacker's best.


@pytest.mark.parametrize("edition", [10, 11])
def test_two_anti_abilities_use_the_lowest_threshold(edition):
    # ANTI-INFANTRY 4+ and ANTI-VEHICLE 5+ vs a target with both: critical wounds on 4+; S1 vs T8
    # needs a 6 otherwise. Torrent, 6 attacks, DW D1: E[MW] = 6 x 3/6 = 3, no other wounds.
    anti = (Anti("INFANTRY", 4), Anti("VEHICLE", 5))
    w = torrent(attacks="6", strength=1, anti=anti, devastating_wounds=True)
    counts = run([w], target(toughness=8, keywords=frozenset({"INFANTRY", "VEHICLE"})),
                 Context(edition=edition))
    assert_mean(counts.mortal_wounds, 3)
    assert np.array_equal(counts.wounds, counts.mortal_wounds)


# Torrent, 6 attacks S4 vs T2 (wounds on 2+), D1, DW, ANTI-INFANTRY 2+ and ANTI-VEHICLE 3+, against
# T2 W1 with no save, Feel No Pain 4+ against mortal wounds only. Anti 2+: every wound is
# critical: E[MW] = 5, E[damage] = 5 x 1/2 = 2.5. Anti 3+: E[MW] = 4 (damage 2), the 2s are normal
# wounds with no save and no Feel No Pain: E[unsaved] = 1, E[damage] = 3. So the 11th-edition
# attacker uses Anti-VEHICLE 3+; the 10th edition applies both (2+).
TWO_ANTI = (Anti("INFANTRY", 2), Anti("VEHICLE", 3))
BOTH = frozenset({"INFANTRY", "VEHICLE"})


@pytest.mark.parametrize(
    "context, mortal, unsaved, damage",
    [(e11(), 4, 1, 3), (Context(), 5, 0, Fraction(5, 2))],
)
def test_the_attacker_picks_the_anti_ability_that_does_more_damage(context, mortal, unsaved, damage):
    w = torrent(attacks="6", strength=4, anti=TWO_ANTI, devastating_wounds=True, name="w")
    tgt = target(toughness=2, feel_no_pain_mortal=4, keywords=BOTH)
    counts = run([w], tgt, context)
    assert_mean(counts.mortal_wounds, mortal)
    assert_mean(counts.unsaved, unsaved)
    assert_mean(counts.damage, damage)
    expected = {"Anti: w": "Anti-VEHICLE 3+"} if context.edition == 11 else {}
    assert simulate([w], tgt, context, trials=TRIALS, seed=11).choices == expected


def test_equal_anti_options_take_the_lower_threshold():
    # Without the Feel No Pain both options do 5 damage in every trial (D1, no save): a tie.
    w = torrent(attacks="6", strength=4, anti=TWO_ANTI, devastating_wounds=True, name="w")
    tgt = target(toughness=2, keywords=BOTH)
    assert attacker_choices([w], tgt, e11(), trials=TRIALS, seed=11) == (AttackerChoice(False, TWO_ANTI[0]),)


# 24.05 [BLAST X].


@pytest.mark.parametrize(
    "blast, models, firing, context, attacks",
    [
        (2, 12, 1, e11(), 3 + 4),  # the rules' example: BLAST 2, A3, 12 models: 7 attack dice
        (2, 12, 1, Context(), 3 + 2),  # 10th: +1 per five models whatever X
        (1, 12, 1, e11(), 3 + 2),
        (2, 4, 1, e11(), 3),  # fewer than five models: nothing
        (3, 10, 2, e11(), 2 * (3 + 6)),  # per model firing the weapon
    ],
)
def test_blast_adds_x_per_five_models(blast, models, firing, context, attacks):
    counts = run([weapon(attacks="3", blast=blast, models=firing)], target(models=models), context)
    assert np.all(counts.attacks == attacks)


# Saves: the better of armour (after AP) and InSv.


@pytest.mark.parametrize("ap, unsaved", [(-3, 1.5), (-1, 1.5), (0, 1.0)])
def test_better_of_armour_and_invulnerable_save(ap, unsaved):
    counts = run([torrent(attacks="6", armour_penetration=ap)], target(save=3, invulnerable_save=4), e11())
    assert_mean(counts.unsaved, unsaved)


# 24.15 HAZARDOUS / 06.03 hazard rolls: fail on 1-2.


def test_hazard_rolls_fail_on_one_or_two():
    ws = [weapon(hazardous=True, models=3), weapon(models=2)]
    counts = run(ws, target(), e11())
    assert_mean(counts.hazardous_tests_failed, 3 * Fraction(1, 3))
    assert_mean(run(ws, target(), Context()).hazardous_tests_failed, 3 * Fraction(1, 6))


@pytest.mark.parametrize(
    "context, p_fail, per_failure",
    [
        (e11(), Fraction(1, 3), 1),  # 1 mortal wound per failed hazard roll
        (e11(attacker_keywords=frozenset({"INFANTRY", "CHARACTER"})), Fraction(1, 3), 1),
        (e11(attacker_keywords=frozenset({"VEHICLE"})), Fraction(1, 3), 3),
        (e11(attacker_keywords=frozenset({"MONSTER"})), Fraction(1, 3), 3),
        (Context(), Fraction(1, 6), 3),  # 10th, current wording: 3 mortal wounds per failed test
    ],
)
def test_hazardous_mortal_wounds_on_the_attacker(context, p_fail, per_failure):
    # 3 models fire the Hazardous weapon: 3 rolls; E[mortal wounds] = per_failure x 3 x p_fail.
    ws = [weapon(hazardous=True, models=3), weapon(models=2)]
    result = simulate(ws, target(), context, trials=TRIALS, seed=11)
    bound = 5 * per_failure * np.sqrt(float(3 * p_fail * (1 - p_fail)) / TRIALS)
    assert abs(result.hazardous_mortal_wounds - float(per_failure * 3 * p_fail)) <= bound
    assert result.hazardous_models_destroyed == 0.0


# The result and the inputs.


def test_result_is_a_valid_attack_result():
    ws = [weapon(attacks="D6", models=5, sustained_hits="D3", lethal_hits=True, devastating_wounds=True,
                 blast=2)]
    tgt = target(save=3, wounds=2, models=10, feel_no_pain=5, stealth=True)
    result = simulate(ws, tgt, e11(lethal_hits_choice=True), trials=20_000, seed=3)
    counts = simulate_trials(ws, tgt, e11(lethal_hits_choice=True), trials=20_000, seed=3)
    for name in TrialCounts.FIELDS:
        assert abs(getattr(result, name).pmf.sum() - 1) < 1e-9
        assert abs(getattr(result, name).mean - getattr(counts, name).mean()) < 1e-9
    assert result.choices == {"Lethal Hits: test": LETHAL_HITS_OPTIONS[True]}
    assert "11th edition" in result.notes[0]
    assert result.to_dict()["choices"] == result.choices


def test_unknown_edition_is_refused():
    with pytest.raises(InputError, match="10th and 11th editions"):
        simulate_trials([weapon()], target(), Context(edition=9))
