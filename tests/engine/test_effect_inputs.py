"""The engine inputs that rules' effects set (issue 12): mortal wounds on a Critical Hit or Wound
and after the attack, a re-roll of one die, ignoring wound roll modifiers, [TWIN-LINKED]
fishing for Critical Wounds and the 11th edition's [HEAVY] conditions. Each exact value is
derived by hand in the test; the simulator (an independent implementation reading the same
declarations) is checked against the exact engine on the same inputs."""

from __future__ import annotations

from dataclasses import replace
from fractions import Fraction

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from pipeline.engine import exact
from pipeline.engine.exact import EngineInputError
from pipeline.engine.profiles import Context, Target, Weapon
from pipeline.engine.simulate import simulate
from pipeline.normalise.characteristics import dice


def _close(value: float, fraction: Fraction | float) -> bool:
    return abs(value - float(fraction)) < 1e-9


BOLT2 = Weapon(name="Boltgun", attacks=dice("2"), skill=3, strength=4, armour_penetration=0, damage=dice("1"))
NO_SAVE_10 = Target(toughness=4, save=None, wounds=1, models=10)
ONE_W2 = Target(toughness=4, save=None, wounds=2, models=1)
GEQ = Target(toughness=3, save=5, wounds=1, models=10, keywords=frozenset({"INFANTRY"}))


# --- mortal wounds (06.02: one wound each; after the normal damage) --------------------------


def test_a_mortal_wound_on_a_critical_hit_is_added_to_the_attack():
    # 1 attack BS4+ S4 vs T4 (wound 4+, 1/2), 1 model W2, no save, D1; "each time an attack
    # scores a Critical Hit, the target suffers 1 mortal wound" (in addition to the attack):
    # a 6 (1/6): 1 mortal wound, and the attack still rolls to wound (1/2): 1 more damage;
    # a 4-5 (2/6): wounds on 1/2.
    # E[mortal wounds] = 1/6; E[damage] = 1/6 x (1 + 1/2) + 2/6 x 1/2 = 5/12;
    # the W2 model is destroyed only by a 6 that also wounds: 1/6 x 1/2 = 1/12.
    w = Weapon(name="w", attacks=dice("1"), skill=4, strength=4, armour_penetration=0, damage=dice("1"),
               mortal_wounds_on_critical_hit=dice("1"))
    r = exact.resolve([w], ONE_W2, Context())
    assert _close(r.mortal_wounds.mean, Fraction(1, 6))
    assert _close(r.damage.mean, Fraction(5, 12))
    assert _close(r.target_destroyed, Fraction(1, 12))


def test_mortal_wounds_on_a_critical_wound_spill_over_unlike_devastating_wounds():
    # [TORRENT] (every attack hits) S4 vs T3 (wound 3+), GEQ Sv5+ (unsaved 2/3), 10 x W1, D1;
    # "on a Critical Wound, the target suffers D3 mortal wounds": a 3-5 (1/2): unsaved 2/3,
    # 1 model; a 6 (1/6): the attack goes on (2/3 unsaved: 1 model) and D3 (mean 2) mortal
    # wounds, one wound each, each destroying a W1 model (they spill over):
    # E[models destroyed] = 1/2 x 2/3 + 1/6 x (2/3 + 2) = 1/3 + 4/9 = 7/9.
    w = Weapon(name="flamer", attacks=dice("1"), skill=None, strength=4, armour_penetration=0, damage=dice("1"),
               torrent=True, mortal_wounds_on_critical_wound=dice("D3"))
    r = exact.resolve([w], GEQ, Context())
    assert _close(r.mortal_wounds.mean, Fraction(1, 3))
    assert _close(r.models_destroyed.mean, Fraction(7, 9))


def test_a_lethal_hits_automatic_wound_is_no_critical_wound_for_mortal_wounds():
    # 24.23 / 10th Lethal Hits: the automatic wound is not a Critical Wound. 1 attack BS4+ [LETHAL
    # HITS], mortal wounds on a Critical Wound only: a 6 to hit wounds automatically (no wound
    # roll, no mortal wound); a 4-5 (2/6) rolls to wound, a 6 (1/6) is the Critical Wound:
    # E[mortal wounds] = 2/6 x 1/6 = 1/18.
    w = Weapon(name="w", attacks=dice("1"), skill=4, strength=4, armour_penetration=0, damage=dice("1"),
               lethal_hits=True, mortal_wounds_on_critical_wound=dice("1"))
    assert _close(exact.resolve([w], ONE_W2, Context()).mortal_wounds.mean, Fraction(1, 18))


def test_the_11th_edition_lethal_hits_choice_counts_mortal_wounds_on_a_critical_wound():
    # 24.23: wounding automatically is the attacker's choice. A4 BS3+ [LETHAL HITS] S4 vs T4 Sv2+
    # (unsaved 1/6) D1, D3 mortal wounds (mean 2) on a Critical Wound. Rolling to wound, each hit
    # (2/3) does 1/2 x 1/6 + 1/6 x 2 = 5/12: E = 4 x 2/3 x 5/12 = 10/9. Auto-wounding, a 3-5 (1/2)
    # does 5/12 and a 6 (1/6) 1/6: E = 4 x (5/24 + 1/36) = 17/18. The engine declines: 10/9.
    w = Weapon(name="w", attacks=dice("4"), skill=3, strength=4, armour_penetration=0, damage=dice("1"),
               lethal_hits=True, mortal_wounds_on_critical_wound=dice("D3"))
    t = Target(toughness=4, save=2, wounds=2, models=5)
    assert _close(exact.resolve([w], t, Context(edition=11, lethal_hits_choice=True)).damage.mean, Fraction(17, 18))
    chosen = exact.resolve([w], t, Context(edition=11))
    assert _close(chosen.damage.mean, Fraction(10, 9))
    assert chosen.choices["Lethal Hits: w"].startswith("roll to wound")


def test_mortal_wounds_after_the_attack_on_a_4_plus():
    # "roll one D6: on a 4+, the target suffers D3 mortal wounds": P = 1/2, mean D3 = 2:
    # E[mortal wounds] = 1; against 10 W1 models with no save (each a model) and Boltgun A2 BS3+
    # S4 (E[models] = 2 x 2/3 x 1/2 = 2/3, at most 2 + 3 = 5 < 10 models, so nothing is lost):
    # E[models destroyed] = 2/3 + 1 = 5/3. A Feel No Pain 5+ ignores 1/3 of every damage point,
    # the Boltgun's and the mortal wounds': 2/3 x (2/3 + 1) = 10/9.
    context = Context(mortal_wounds_after=((4, dice("D3")),))
    r = exact.resolve([BOLT2], NO_SAVE_10, context)
    assert _close(r.mortal_wounds.mean, 1) and _close(r.models_destroyed.mean, Fraction(5, 3))
    r = exact.resolve([BOLT2], replace(NO_SAVE_10, feel_no_pain=5), context)
    assert _close(r.models_destroyed.mean, Fraction(10, 9))


def test_mortal_wounds_on_a_critical_with_devastating_wounds_are_refused():
    w = replace(BOLT2, devastating_wounds=True, mortal_wounds_on_critical_hit=dice("1"))
    with pytest.raises(EngineInputError, match="mortal wounds on a critical with \\[DEVASTATING WOUNDS\\]"):
        exact.resolve([w], NO_SAVE_10, Context())


# --- a re-roll of one die (01.05: re-rolled once, before modifiers) --------------------------


def test_re_rolling_one_hit_roll():
    # A2 BS3+: E[hits] = 2 x 2/3 = 4/3; one failed hit roll is re-rolled when there is one:
    # P(at least one miss) = 1 - (2/3)^2 = 5/9, the re-roll hits 2/3: 4/3 + 5/9 x 2/3 = 46/27.
    r = exact.resolve([BOLT2], NO_SAVE_10, Context(reroll_one_hit=True))
    assert _close(r.hits.mean, Fraction(46, 27))
    # with [SUSTAINED HITS 1] the re-rolled die can be a Critical Hit: one attack makes
    # 2/3 + 1/6 = 5/6 hits: E = 2 x 5/6 + 5/9 x 5/6 = 5/3 + 25/54 = 115/54.
    r = exact.resolve([replace(BOLT2, sustained_hits=dice("1"))], NO_SAVE_10, Context(reroll_one_hit=True))
    assert _close(r.hits.mean, Fraction(115, 54))


def test_re_rolling_one_wound_roll():
    # A2 BS3+ S4 vs T4: hits H ~ Bin(2, 2/3), each wounds 1/2: E[wounds] = 2/3. One failed wound
    # roll is re-rolled: P(H = 1) = 4/9 fails with 1/2, P(H = 2) = 4/9 has a failure with 3/4:
    # P(a failed wound roll) = 2/9 + 1/3 = 5/9; E[wounds] = 2/3 + 5/9 x 1/2 = 17/18.
    r = exact.resolve([BOLT2], NO_SAVE_10, Context(reroll_one_wound=True))
    assert _close(r.wounds.mean, Fraction(17, 18))
    # the re-roll goes on one weapon only: the first that can take it (here the second Boltgun
    # gains nothing): two Boltguns, 4/3 + 5/18 = 29/18 (not 2 x 17/18)
    r = exact.resolve([BOLT2, replace(BOLT2, name="Boltgun 2")], NO_SAVE_10, Context(reroll_one_wound=True))
    assert _close(r.wounds.mean, Fraction(29, 18))


def test_re_rolling_one_die_skips_dice_re_rolled_already():
    # a die is re-rolled at most once: with every failed hit re-rolled (--reroll-hits failed) the
    # re-roll of one Hit roll adds nothing: 2 x (2/3 + 1/3 x 2/3) = 16/9.
    r = exact.resolve([BOLT2], NO_SAVE_10, Context(reroll_hits="failed", reroll_one_hit=True))
    assert _close(r.hits.mean, Fraction(16, 9))
    assert any("no weapon of the attack can take it" in n for n in r.notes)


def test_re_rolling_one_damage_roll_in_the_allocation():
    # [TORRENT] A1 S16 vs T4 (wounds on 2+, 5/6), no save, D3 against one W3 model: destroyed only by
    # a 3. The first Damage roll below the mean (2: a 1) is re-rolled: P(3) = 1/3 + 1/3 x 1/3 = 4/9:
    # P(destroyed) = 5/6 x 4/9 = 10/27 (5/6 x 1/3 = 5/18 without). Two such attacks against two W3
    # models (one event each, both must wound: 25/36, both be a 3): the first event e1 is a 3 (1/3,
    # the re-roll kept for e2: 4/9), or a 1 re-rolled to a 3 (1/3 x 1/3, e2 then 1/3):
    # P(both destroyed) = 25/36 x (1/3 x 4/9 + 1/9 x 1/3) = 25/36 x 5/27 = 125/972
    flamer = Weapon(name="Flamer", attacks=dice("1"), skill=None, strength=16, armour_penetration=0,
                    damage=dice("D3"), torrent=True)
    w3 = Target(toughness=4, save=None, wounds=3, models=1)
    assert _close(exact.resolve([flamer], w3, Context()).target_destroyed, Fraction(5, 18))
    assert _close(exact.resolve([flamer], w3, Context(reroll_one_damage=True)).target_destroyed, Fraction(10, 27))
    two = exact.resolve([replace(flamer, models=2)], replace(w3, models=2), Context(reroll_one_damage=True))
    assert _close(two.target_destroyed, Fraction(125, 972))


# --- ignoring modifiers to the wound roll ----------------------------------------------------


def test_ignoring_wound_roll_modifiers_drops_a_negative_one():
    # A6 BS3+: 4 hits; S4 vs T4 wounds on 4+ (1/2), with -1 on 5+ (1/3): 4/3; ignoring it: 2;
    # a +1 stays: 3+ (2/3): 8/3.
    six = replace(BOLT2, attacks=dice("6"))
    assert _close(exact.resolve([six], NO_SAVE_10, Context(wound_modifier=-1)).wounds.mean, Fraction(4, 3))
    assert _close(exact.resolve([six], NO_SAVE_10, Context(wound_modifier=-1, ignore_wound_modifiers=True)).wounds.mean, 2)
    assert _close(exact.resolve([six], NO_SAVE_10, Context(wound_modifier=1, ignore_wound_modifiers=True)).wounds.mean,
                  Fraction(8, 3))


# --- [TWIN-LINKED]: "you can re-roll the wound roll" (24.38; 10th: "that attack's Wound roll") --


TWIN_DEV = replace(BOLT2, damage=dice("2"), twin_linked=True, devastating_wounds=True)
SV2 = Target(toughness=4, save=2, wounds=2, models=5)


def test_twin_linked_fishing_for_critical_wounds_with_devastating_wounds():
    # A2 BS3+ (4/3 hits), S4 vs T4, D2 [DEVASTATING WOUNDS] against Sv2+ (unsaved 1/6).
    # Re-roll failed (1-3): P(Critical Wound) = 1/6 + 1/2 x 1/6 = 1/4, P(normal) = 2/6 + 1/2 x 2/6 = 1/2;
    #   damage per hit = 1/4 x 2 + 1/2 x 1/6 x 2 = 2/3; E[damage] = 4/3 x 2/3 = 8/9.
    # Re-roll every roll but a 6 (1-5): P(Critical Wound) = 1/6 + 5/6 x 1/6 = 11/36, P(normal) =
    #   5/6 x 2/6 = 10/36; damage per hit = 22/36 + 10/36 x 1/6 x 2 = 19/27; E = 4/3 x 19/27 = 76/81.
    failed = exact.resolve([TWIN_DEV], SV2, Context())
    fishing = exact.resolve([TWIN_DEV], SV2, Context(twin_linked_reroll="non-critical"))
    best = exact.resolve([TWIN_DEV], SV2, Context(twin_linked_reroll="best"))
    assert _close(failed.damage.mean, Fraction(8, 9)) and _close(fishing.damage.mean, Fraction(76, 81))
    assert _close(best.damage.mean, Fraction(76, 81))
    assert best.choices["Twin-linked: Boltgun"] == "re-roll non-critical wound rolls"


def test_twin_linked_best_keeps_re_rolling_failed_rolls_without_a_critical_to_fish_for():
    # without Devastating Wounds or Anti a Critical Wound is a wound: re-rolling a success can
    # only lose. Failed: P(wound) = 1/2 + 1/2 x 1/2 = 3/4 per hit: E[wounds] = 4/3 x 3/4 = 1.
    plain = replace(BOLT2, twin_linked=True)
    best = exact.resolve([plain], SV2, Context(twin_linked_reroll="best"))
    assert _close(best.wounds.mean, 1) and best.choices["Twin-linked: Boltgun"] == "re-roll failed wound rolls"


# --- [HEAVY]: 11th edition 24.16, 10th edition Heavy --------------------------------------------


HEAVY = Weapon(name="Heavy bolter", attacks=dice("1"), skill=4, strength=5, armour_penetration=-1, damage=dice("2"),
               heavy=True)


@pytest.mark.parametrize("context, p_hit", [
    # 24.16 "add 1 to the hit roll if all of the following apply: That unit is unengaged. That unit
    # was not set up on the battlefield this turn. No model in that unit has moved more than 3"":
    # BS4+ with +1 hits on 3+ (2/3), else on 4+ (1/2)
    (Context(edition=11, stationary=True), Fraction(2, 3)),
    (Context(edition=11, moved_inches=3), Fraction(2, 3)),
    (Context(edition=11, moved_inches=3.5), Fraction(1, 2)),
    (Context(edition=11, stationary=True, set_up_this_turn=True), Fraction(1, 2)),
    (Context(edition=11, stationary=True, close_quarters=True), Fraction(1, 2)),  # engaged
    # 10th edition Heavy: "if the attacking model's unit Remained Stationary this turn" only
    (Context(edition=10, moved_inches=3), Fraction(1, 2)),
    (Context(edition=10, stationary=True, set_up_this_turn=True), Fraction(2, 3)),
])
def test_heavy_conditions_by_edition(context, p_hit):
    assert _close(exact.resolve([HEAVY], NO_SAVE_10, context).hits.mean, p_hit)


# --- the simulator agrees ---------------------------------------------------------------------


@pytest.mark.parametrize("weapons, context", [
    ([replace(BOLT2, models=3, sustained_hits=dice("1"), mortal_wounds_on_critical_hit=dice("1"))], Context()),
    ([replace(BOLT2, models=3, mortal_wounds_on_critical_wound=dice("D3"))], Context(edition=11)),
    ([replace(BOLT2, models=3), replace(BOLT2, name="b2", models=2)], Context(reroll_one_hit=True, reroll_one_wound=True)),
    ([replace(BOLT2, models=3)], Context(mortal_wounds_after=((4, dice("D3")),), wound_modifier=-1,
                                         ignore_wound_modifiers=True)),
    ([replace(TWIN_DEV, models=3)], Context(twin_linked_reroll="non-critical")),
    ([replace(HEAVY, models=3)], Context(edition=11, moved_inches=2)),
    ([replace(HEAVY, models=3)], Context(edition=11, cover=True, hit_modifier=-1, ignore_skill_modifiers=True)),
    ([replace(HEAVY, models=3, damage=dice("D6"), melta=dice("2"))], Context(reroll_one_damage=True, half_range=True)),
    ([replace(HEAVY, models=3, damage=dice("D3+1"))], Context(reroll_damage="below-mean", reroll_one_hit=True)),
])
def test_the_simulator_agrees_with_the_exact_engine(weapons, context):
    target = Target(toughness=4, save=4, wounds=2, models=5, feel_no_pain=5)
    e = exact.resolve(weapons, target, context)
    m = simulate(weapons, target, context, trials=40_000, seed=7)
    for stage in ("hits", "wounds", "mortal_wounds", "damage", "models_destroyed"):
        want, got = getattr(e, stage), getattr(m, stage)
        se = (want.variance / 40_000) ** 0.5
        assert abs(got.mean - want.mean) < 5 * se + 1e-9, (stage, got.mean, want.mean)


@settings(max_examples=12, derandomize=True, deadline=None)
@given(attacks=st.integers(1, 3), models=st.integers(1, 3), skill=st.integers(2, 5), damage=st.sampled_from(["1", "2", "D3", "D6"]),
       mw=st.sampled_from([None, "hit", "wound"]), rerolls=st.sets(st.sampled_from(["hit", "wound", "damage"])),
       sustained=st.booleans(), wounds=st.integers(1, 3), fnp=st.sampled_from([None, 5]))
def test_the_simulator_agrees_on_random_combinations(attacks, models, skill, damage, mw, rerolls, sustained, wounds, fnp):
    # a property (STYLE 12): the exact engine and the independent simulator agree on the mean of
    # every stage within 5 standard errors, whatever mix of the new inputs
    w = Weapon(name="w", attacks=dice(str(attacks)), skill=skill, strength=4, armour_penetration=-1, damage=dice(damage),
               models=models, sustained_hits=dice("1") if sustained else None,
               mortal_wounds_on_critical_hit=dice("1") if mw == "hit" else None,
               mortal_wounds_on_critical_wound=dice("D3") if mw == "wound" else None)
    target = Target(toughness=4, save=4, wounds=wounds, models=4, feel_no_pain=fnp)
    context = Context(reroll_one_hit="hit" in rerolls, reroll_one_wound="wound" in rerolls,
                      reroll_one_damage="damage" in rerolls)
    e = exact.resolve([w, replace(w, name="w2")], target, context)
    m = simulate([w, replace(w, name="w2")], target, context, trials=20_000, seed=11)
    for stage in ("hits", "wounds", "mortal_wounds", "damage", "models_destroyed"):
        want, got = getattr(e, stage), getattr(m, stage)
        assert abs(got.mean - want.mean) < 5 * (want.variance / 20_000) ** 0.5 + 1e-9, (stage, got.mean, want.mean)
