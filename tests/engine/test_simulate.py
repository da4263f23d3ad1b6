"""The Monte Carlo simulator against the cases with known answers (cases/README.md).

Statistical bound: a simulated mean passes when it is within 5 standard errors of the exact value,
the standard error being the sample standard deviation over sqrt(trials); a probability is the
mean of an indicator. With a fixed seed every test is deterministic; 5 standard errors leave a
false-alarm rate of about 6e-7 per comparison, should a seed or the trial count be changed.
"""

from __future__ import annotations

from fractions import Fraction

import numpy as np
import pytest

from pipeline.engine.profiles import Anti, Context, Target, Weapon
from pipeline.engine.simulate import TrialCounts, simulate, simulate_trials
from pipeline.errors import InputError
from pipeline.normalise.characteristics import dice

TRIALS = 100_000
_DICE_FIELDS = ("attacks", "damage", "sustained_hits", "melta", "rapid_fire")


def weapon(**changes) -> Weapon:
    """A1 BS3+ S4 AP0 D1 ranged weapon, with ``changes`` (dice fields given as text)."""
    fields = dict(name="test", attacks="1", skill=3, strength=4, armour_penetration=0, damage="1")
    fields.update(changes)
    return Weapon(**{k: dice(v) if k in _DICE_FIELDS else v for k, v in fields.items()})


def torrent(**changes) -> Weapon:
    """A weapon with TORRENT (no hit roll), with ``changes``."""
    return weapon(skill=None, torrent=True, **changes)


def target(**changes) -> Target:
    """20 models of T4 W1 with no save, with ``changes``."""
    return Target(**{"toughness": 4, "save": None, "wounds": 1, "models": 20, **changes})


def assert_mean(samples: np.ndarray, expected: float | Fraction) -> None:
    """The sample mean is within 5 standard errors (sample sd / sqrt(n)) of ``expected``."""
    samples = np.asarray(samples, dtype=np.float64)
    bound = 5 * samples.std(ddof=1) / np.sqrt(samples.size) + 1e-9
    assert abs(samples.mean() - float(expected)) <= bound, (samples.mean(), float(expected), bound)


def run(weapons: list[Weapon], tgt: Target, context: Context | None = None) -> TrialCounts:
    return simulate_trials(weapons, tgt, context, trials=TRIALS, seed=1)


def test_t01_baseline():
    counts = run([weapon(attacks="10")], target(save=3, wounds=2, models=10))
    assert np.all(counts.attacks == 10)
    assert_mean(counts.hits, Fraction(20, 3))
    assert_mean(counts.wounds, Fraction(10, 3))
    assert_mean(counts.unsaved, Fraction(10, 9))
    assert_mean(counts.unsaved >= 1, 1 - Fraction(8, 9) ** 10)
    assert_mean(counts.models_destroyed, 0.3258)
    none_or_one = Fraction(8, 9) ** 10 + 10 * Fraction(1, 9) * Fraction(8, 9) ** 9
    assert_mean(counts.models_destroyed >= 1, 1 - none_or_one)


@pytest.mark.parametrize(
    "reroll, p_hit, p_critical",
    [("ones", Fraction(28, 36), Fraction(7, 36)), ("failed", Fraction(32, 36), Fraction(8, 36)),
     ("all", Fraction(32, 36), Fraction(8, 36))],
)
def test_t02_rerolls(reroll, p_hit, p_critical):
    # Critical Hits counted through Lethal Hits: S1 vs T12 wounds only on a 6 otherwise.
    counts = run([weapon(attacks="12", strength=1, lethal_hits=True)], target(toughness=12),
                 Context(reroll_hits=reroll))
    assert_mean(counts.hits, 12 * p_hit)
    assert_mean(counts.wounds, 12 * (p_critical + (p_hit - p_critical) / 6))


@pytest.mark.parametrize(
    "skill, modifier, p_hit",
    [(4, 2, Fraction(4, 6)), (3, -2, Fraction(3, 6)), (2, 1, Fraction(5, 6)), (5, -1, Fraction(1, 6)),
     (6, -1, Fraction(1, 6))],
)
def test_t03_hit_modifier_cap_and_natural_one_and_six(skill, modifier, p_hit):
    counts = run([weapon(attacks="6", skill=skill)], target(), Context(hit_modifier=modifier))
    assert_mean(counts.hits, 6 * p_hit)


def test_t04_sustained_and_lethal_on_the_same_critical():
    counts = run([weapon(attacks="6", skill=4, sustained_hits="1", lethal_hits=True)], target(toughness=8))
    assert_mean(counts.hits, 4)
    assert_mean(counts.wounds, 1.5)


def test_t05_criticals_on_5_plus():
    counts = run([weapon(attacks="6", sustained_hits="1", lethal_hits=True)], target(toughness=8),
                 Context(critical_hit_on=5))
    assert_mean(counts.hits, 6)
    assert_mean(counts.wounds, Fraction(8, 3))


def test_t07_anti_with_devastating_wounds():
    haywire = dict(attacks="8", skill=4, strength=3, armour_penetration=-1, damage="3")
    vehicle = target(toughness=11, save=2, wounds=13, models=1, keywords=frozenset({"VEHICLE"}))
    anti = (Anti("VEHICLE", 4),)
    counts = run([weapon(**haywire, anti=anti, devastating_wounds=True)], vehicle)
    assert_mean(counts.mortal_wounds, 6)
    assert_mean(counts.models_destroyed, 0.0273)
    assert np.all(counts.unsaved == 0)  # every successful wound roll is critical
    assert_mean(run([weapon(**haywire, anti=anti)], vehicle).damage, 2)
    assert_mean(run([weapon(**haywire, devastating_wounds=True)], vehicle).damage, 2)


def test_t09_lethal_hits_never_trigger_devastating_wounds():
    counts = run([weapon(attacks="6", skill=4, lethal_hits=True, devastating_wounds=True)], target(save=3))
    assert_mean(counts.mortal_wounds, Fraction(1, 3))
    assert_mean(counts.unsaved, Fraction(5, 9))
    assert_mean(counts.damage, Fraction(8, 9))


def test_t10_torrent():
    counts = run([torrent(attacks="D6")], target(toughness=3, save=5))
    assert np.array_equal(counts.attacks, counts.hits)
    assert_mean(counts.attacks, 3.5)
    assert_mean(counts.wounds, Fraction(7, 3))
    assert_mean(counts.unsaved, Fraction(14, 9))
    variant = run([torrent(attacks="6", sustained_hits="1", lethal_hits=True)], target(toughness=8))
    assert np.all(variant.hits == 6)
    assert_mean(variant.wounds, 1)


def test_t12_feel_no_pain_per_damage_point():
    # One automatic hit that wounds on 2+ with no save: the trials with one event.
    counts = run([torrent(strength=8, damage="D6")], target(wounds=10, models=1, feel_no_pain=5))
    one = counts.damage[counts.unsaved == 1]
    assert_mean(one, Fraction(7, 3))
    assert_mean(one == 0, sum(Fraction(1, 3) ** d for d in range(1, 7)) / 6)


def test_feel_no_pain_against_psychic_attacks_only():
    # Every damage point of a [PSYCHIC] weapon's attack is ignored on a 2+; other attacks' are not.
    tgt = target(wounds=10, models=1, feel_no_pain_psychic=2)
    psychic = run([torrent(attacks="6", strength=8, damage="2", psychic=True)], tgt)
    assert_mean(psychic.damage, 6 * Fraction(5, 6) * 2 * Fraction(1, 6))
    plain = run([torrent(attacks="6", strength=8, damage="2")], tgt)
    assert_mean(plain.damage, 10)


def test_t14_d6_against_w3():
    counts = run([torrent(attacks="2", strength=8, damage="D6")], target(wounds=3, models=5))
    two = counts.models_destroyed[counts.unsaved == 2]
    for destroyed, p in {0: Fraction(1, 36), 1: Fraction(19, 36), 2: Fraction(4, 9)}.items():
        assert_mean(two == destroyed, p)
    assert_mean(two, Fraction(17, 12))


def test_t16_melta_at_half_range():
    melta = weapon(attacks="2", skill=4, strength=9, armour_penetration=-4, damage="D6", melta="2")
    vehicle = target(toughness=11, save=2, wounds=13, models=1)
    assert_mean(run([melta], vehicle, Context(half_range=True)).damage, Fraction(55, 36))
    assert_mean(run([melta], vehicle).damage, Fraction(35, 36))


@pytest.mark.parametrize("ap, unsaved", [(-3, 1.5), (-1, 1.5), (0, 1.0)])
def test_t18_invulnerable_against_modified_armour(ap, unsaved):
    counts = run([torrent(attacks="6", armour_penetration=ap)], target(save=3, invulnerable_save=4))
    assert_mean(counts.unsaved, unsaved)


@pytest.mark.parametrize(
    "save, invulnerable, ap, changes, unsaved",
    [
        (3, None, 0, {}, 1.0),  # Sv3+ against AP0: no cover
        (4, None, 0, {}, 1.0),  # 4+ becomes 3+
        (3, None, -1, {}, 1.0),  # 4+ becomes 3+
        (3, 4, -3, {}, 1.5),  # armour 6+ becomes 5+: the invulnerable 4+ is still better
        (3, 5, -4, {}, 2.0),  # armour 7+ becomes 6+; the invulnerable 5+ is never improved to 4+
        (None, 4, 0, {}, 1.5),  # no armour save: cover does nothing for an invulnerable save
        (4, None, 0, {"ignores_cover": True}, 1.5),
        (4, None, 0, {"is_melee": True}, 1.5),
    ],
)
def test_t19_benefit_of_cover(save, invulnerable, ap, changes, unsaved):
    counts = run([torrent(attacks="6", armour_penetration=ap, **changes)],
                 target(save=save, invulnerable_save=invulnerable), Context(cover=True))
    assert_mean(counts.unsaved, unsaved)


@pytest.mark.parametrize(
    "damage, reduction, modifier, per_event",
    [("D3", "one", 0, Fraction(4, 3)), ("D6", "half", 0, 2), ("D6", "half", -1, Fraction(4, 3)),
     ("2", "one", 0, 1), ("1", "one", 0, 1), ("1", "one", 1, 1)],
)
def test_t20_damage_modifiers(damage, reduction, modifier, per_event):
    context = Context(damage_reduction=reduction, damage_modifier=modifier)
    counts = run([torrent(attacks="5", strength=8, damage=damage)], target(wounds=20, models=1), context)
    assert_mean(counts.damage[counts.unsaved == 5], 5 * per_event)


@pytest.mark.parametrize(
    "changes, context, p_wound",
    [
        ({"lance": True}, Context(charged=True), Fraction(4, 6)),
        ({"lance": True}, Context(charged=True, wound_modifier=-1), Fraction(3, 6)),
        ({"lance": True}, Context(charged=True, wound_modifier=1), Fraction(4, 6)),  # capped at +1
        ({"lance": True}, Context(), Fraction(3, 6)),
    ],
)
def test_t22_lance_inside_the_cap(changes, context, p_wound):
    counts = run([torrent(attacks="6", **changes)], target(), context)
    assert_mean(counts.wounds, 6 * p_wound)


@pytest.mark.parametrize(
    "tgt, context, p_hit",
    [
        (target(), Context(stationary=True), Fraction(4, 6)),
        (target(), Context(stationary=True, hit_modifier=-1), Fraction(3, 6)),
        (target(), Context(stationary=True, hit_modifier=2), Fraction(4, 6)),
        (target(stealth=True), Context(stationary=True), Fraction(3, 6)),  # 10th-edition Stealth: -1
        (target(stealth=True), Context(hit_modifier=-1), Fraction(2, 6)),
    ],
)
def test_t22_heavy_and_stealth_inside_the_cap(tgt, context, p_hit):
    counts = run([weapon(attacks="6", skill=4, heavy=True)], tgt, context)
    assert_mean(counts.hits, 6 * p_hit)


@pytest.mark.parametrize("modifier", [-1, 0, 1])
def test_t24_overwatch_hits_only_on_six(modifier):
    context = Context(overwatch=True, hit_modifier=modifier)
    counts = run([weapon(attacks="6", sustained_hits="2")], target(), context)
    assert_mean(counts.hits, 3)


def test_t24_lascannon_published_expected_damage():
    lascannon = weapon(strength=9, armour_penetration=-3, damage="D6")
    counts = run([lascannon], target(toughness=7, save=3, wounds=8, models=1))
    assert_mean(counts.damage, Fraction(35, 27))


def test_p33_devastating_wounds_do_not_spill_over():
    # Anti 2+: every successful wound roll is critical, so every event is a devastating D3.
    counts = run([torrent(attacks="3", damage="3", anti=(Anti("INFANTRY", 2),), devastating_wounds=True)],
                 target(save=2, models=3, keywords=frozenset({"INFANTRY"})))
    assert np.array_equal(counts.models_destroyed, counts.mortal_wounds // 3)


def test_devastating_wounds_are_allocated_after_the_other_weapons():
    # Devastating D2, devastating D1, then a normal D1 against W2 models. Resolved in the order
    # given (2, 1, 1) they would destroy 2 models; with the devastating attacks after the normal
    # one (1, 2, 1) the 2 is wasted on the wounded model and only 1 is destroyed.
    anti = (Anti("INFANTRY", 2),)  # every successful wound roll is a Critical Wound
    ws = [torrent(strength=8, damage="2", anti=anti, devastating_wounds=True),
          torrent(strength=8, damage="1", anti=anti, devastating_wounds=True),
          torrent(strength=8, damage="1")]
    counts = run(ws, target(wounds=2, models=3, keywords=frozenset({"INFANTRY"})))
    all_three = (counts.unsaved == 1) & (counts.mortal_wounds == 3)
    assert all_three.mean() > 0.5
    assert np.all(counts.models_destroyed[all_three] == 1)


def test_p34_damage_does_not_carry_over():
    counts = run([torrent(attacks="3", strength=8, damage="3")], target(wounds=2, models=5))
    assert np.array_equal(counts.models_destroyed, counts.unsaved)


def test_result_is_an_attack_result_with_pmfs():
    ws = [weapon(attacks="D6", models=5, sustained_hits="D3", devastating_wounds=True)]
    tgt = target(save=3, wounds=2, models=10, feel_no_pain=5)
    result = simulate(ws, tgt, trials=20_000, seed=3)
    counts = simulate_trials(ws, tgt, trials=20_000, seed=3)
    for name in TrialCounts.FIELDS:
        dist = getattr(result, name)
        assert dist.pmf.dtype == np.float64
        assert abs(dist.pmf.sum() - 1) < 1e-9
        assert dist.pmf.size == getattr(counts, name).max() + 1
        assert abs(dist.mean - getattr(counts, name).mean()) < 1e-9
    assert result.target_destroyed == pytest.approx(np.mean(counts.models_destroyed == 10))


def test_hazardous_tests_fail_on_a_one_for_3_mortal_wounds_each():
    # 10th edition (current wording): each of 3 models fails on a 1 (1/6): 3 mortal wounds each
    result = simulate([weapon(hazardous=True, models=3), weapon(models=2)], target())
    assert result.hazardous_mortal_wounds == pytest.approx(1.5, abs=3 * 5 * np.sqrt(3 * 5 / 36 / TRIALS))


def test_same_seed_same_result_and_other_seed_differs():
    ws = [weapon(attacks="2D6", damage="D3", sustained_hits="1"),
          weapon(attacks="D3+1", strength=8, devastating_wounds=True)]
    tgt = target(save=3, wounds=3, models=5)
    a, b = (simulate_trials(ws, tgt, trials=30_000, seed=7) for _ in range(2))
    c = simulate_trials(ws, tgt, trials=30_000, seed=8)
    for name in TrialCounts.FIELDS:
        assert np.array_equal(getattr(a, name), getattr(b, name))
    assert not np.array_equal(a.damage, c.damage)
    assert simulate(ws, tgt, trials=5_000, seed=7) == simulate(ws, tgt, trials=5_000, seed=7)


def test_small_chunks_give_the_same_distribution(monkeypatch):
    import pipeline.engine.simulate as sim

    ws = [weapon(attacks="D6", models=10, damage="D3"),
          weapon(attacks="2", models=10, devastating_wounds=True, damage="2")]
    tgt = target(save=4, wounds=3, models=6)
    whole = simulate_trials(ws, tgt, trials=50_000, seed=3).models_destroyed
    monkeypatch.setattr(sim, "_MAX_CELLS", 10_000)  # chunks of 125 trials
    chunked = simulate_trials(ws, tgt, trials=50_000, seed=4).models_destroyed
    se = np.hypot(whole.std(ddof=1), chunked.std(ddof=1)) / np.sqrt(50_000)
    assert abs(whole.mean() - chunked.mean()) <= 5 * se


@pytest.mark.parametrize("tgt, models", [(target(wounds=0), 1), (target(models=0), 1), (target(), 0)])
def test_empty_units_are_refused(tgt, models):
    with pytest.raises(InputError, match="at least 1 model"):
        simulate_trials([weapon(models=models)], tgt)
