"""``Distribution`` and ``AttackResult`` (``pipeline.engine.result``), and the engine's input checks."""

from __future__ import annotations

import json
from fractions import Fraction

import numpy as np
import pytest

from pipeline.engine.exact import EngineInputError, resolve
from pipeline.engine.profiles import Anti, Context, Target, Weapon
from pipeline.engine.result import STAGES, Distribution
from pipeline.errors import InputError
from pipeline.normalise.characteristics import dice


def weapon(**kw) -> Weapon:
    base = dict(name="w", attacks=dice("10"), skill=3, strength=4, armour_penetration=0, damage=dice("1"))
    return Weapon(**{**base, **kw})


MEQ = Target(toughness=4, save=3, wounds=2, models=10)


def test_distribution_summaries():
    d = Distribution([0.1, 0.2, 0.3, 0.4])
    assert abs(d.mean - 2.0) < 1e-12
    assert abs(d.variance - 1.0) < 1e-12
    assert abs(d.at_least(2) - 0.7) < 1e-12 and d.at_least(0) == 1.0 and d.at_least(9) == 0.0
    assert (d.percentile(0.0), d.percentile(0.1), d.percentile(0.3), d.percentile(0.31), d.percentile(1.0)) == (0, 0, 1, 2, 3)
    assert d.maximum == 3
    with pytest.raises(ValueError, match="between 0 and 1"):
        d.percentile(50)


@pytest.mark.parametrize("pmf, message", [([0.5, 0.4], "sum to 1"), ([], "non-empty"), ([1.5, -0.5], "non-negative"),
                                          ([[1.0]], "1-D")])
def test_distribution_rejects_bad_pmfs(pmf, message):
    with pytest.raises(ValueError, match=message):
        Distribution(pmf)


def test_distribution_is_read_only_and_compares_by_value():
    d = Distribution([0.5, 0.5])
    with pytest.raises(ValueError):
        d.pmf[0] = 1.0
    assert d == Distribution(np.array([0.5, 0.5])) and d != Distribution([1.0])
    assert Distribution.point(2).pmf.tolist() == [0.0, 0.0, 1.0]


def test_result_to_dict_is_json_ready():
    r = resolve([weapon(hazardous=True)], MEQ, Context(reroll_hits="ones"))
    data = json.loads(json.dumps(r.to_dict()))
    for stage in STAGES:
        assert abs(sum(data[stage]["pmf"]) - 1) < 1e-12
        assert abs(data[stage]["mean"] - r.stage(stage).mean) < 1e-12
    assert abs(data["unsaved"]["mean"] - 10 * (Fraction(28, 36) * Fraction(1, 2) * Fraction(1, 3))) < 1e-12
    assert data["target_destroyed"] == r.target_destroyed
    assert abs(data["hazardous_mortal_wounds"] - 3 / 6) < 1e-12  # 1/6 fails x 3 mortal wounds
    assert data["choices"]["rerolls"] == [{"weapon": "w", "roll": "hit", "policy": "ones", "faces": [1]}]
    assert any("re-roll hits" in note for note in data["notes"])
    with pytest.raises(KeyError):
        r.stage("saves")


def test_notes_name_the_rules_applied():
    r = resolve([weapon(heavy=True, lethal_hits=True, devastating_wounds=True, anti=(Anti("INFANTRY", 4),))],
                Target(toughness=4, save=3, wounds=2, models=10, keywords=frozenset({"INFANTRY"}), stealth=True),
                Context(stationary=True, hit_modifier=1, cover=True))
    text = "\n".join(r.notes)
    for fragment in ("Heavy +1", "Stealth -1", "modifier +1", "Lethal Hits",
                     "Anti-INFANTRY 4+", "Devastating Wounds", "allocated after"):
        assert fragment in text, fragment
    capped = resolve([weapon()], MEQ, Context(hit_modifier=2))
    assert any("modifier +1, capped from +2" in note for note in capped.notes)


@pytest.mark.parametrize(
    "weapons, target, context, fragment",
    [
        ([], MEQ, Context(), "no weapons"),
        ([weapon(models=0)], MEQ, Context(), "models must be at least 1"),
        ([weapon(armour_penetration=1)], MEQ, Context(), "armour_penetration"),
        ([weapon(skill=1)], MEQ, Context(), "skill must be"),
        ([weapon(strength=0)], MEQ, Context(), "strength"),
        ([weapon(anti=(Anti("INFANTRY", 7),))], MEQ, Context(), "threshold"),
        ([weapon()], Target(toughness=4, save=3, wounds=0, models=10), Context(), "wounds must be at least 1"),
        ([weapon()], Target(toughness=4, save=3, wounds=2, models=0), Context(), "models must be at least 1"),
        ([weapon()], Target(toughness=0, save=3, wounds=2), Context(), "toughness"),
        ([weapon()], Target(toughness=4, save=1, wounds=2), Context(), "save must be"),
        ([weapon()], Target(toughness=4, save=3, wounds=100, models=100), Context(), "10000 wounds: at most 500 wounds in the target unit"),
        ([weapon()], MEQ, Context(edition=9), "edition must be 10 or 11"),
        ([weapon()], MEQ, Context(critical_hit_on=1), "critical_hit_on"),
        ([weapon()], MEQ, Context(reroll_hits="sixes"), "reroll_hits"),
        ([weapon()], MEQ, Context(damage_reduction="two"), "damage_reduction"),
    ],
)
def test_invalid_inputs_raise_a_clear_error(weapons, target, context, fragment):
    with pytest.raises(EngineInputError, match=fragment) as err:
        resolve(weapons, target, context)
    assert isinstance(err.value, ValueError) and isinstance(err.value, InputError)


def test_every_stage_sums_to_one_on_a_large_mixed_case():
    ws = [weapon(attacks=dice("2D6"), models=5, sustained_hits=dice("D3"), lethal_hits=True, devastating_wounds=True,
                 damage=dice("D6+1"), twin_linked=True),
          weapon(attacks=dice("D6"), skill=None, torrent=True, models=3, damage=dice("D3"), devastating_wounds=True,
                 anti=(Anti("INFANTRY", 2),))]
    r = resolve(ws, Target(toughness=5, save=3, wounds=3, models=10, keywords=frozenset({"INFANTRY"}), feel_no_pain=6),
                Context(reroll_hits="failed", cover=True))
    for stage in STAGES:
        pmf = r.stage(stage).pmf
        assert abs(pmf.sum() - 1) < 1e-12 and pmf.min() >= 0
    assert r.models_destroyed.pmf.size == 11
    assert abs(r.target_destroyed - r.models_destroyed.pmf[10]) < 1e-15
    # Means agree with the per-stage linearity of expectation.
    per_attack_hits = Fraction(32, 36) - Fraction(8, 36) + Fraction(8, 36) * 3  # normal + crit (1 + E[D3])
    assert abs(r.hits.mean - (5 * 7 * per_attack_hits + 3 * 3.5)) < 1e-9
