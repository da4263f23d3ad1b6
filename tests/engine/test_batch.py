"""The batch engine (``pipeline.engine.batch``) against the exact engine, pair by pair: a seeded
random sample of a generated grid of weapons and targets in both editions, and every pair of the
real profiles of a database built from the committed seeds."""

from __future__ import annotations

import dataclasses
from pathlib import Path

import numpy as np
import pytest

from pipeline.build import build
from pipeline.database import open_database
from pipeline.engine import exact, from_db
from pipeline.engine.batch import resolve_batch, target_key
from pipeline.engine.inputs import STANDARD_PROFILES
from pipeline.engine.profiles import Anti, Context, Target, Weapon
from pipeline.normalise.characteristics import dice
from tests.conftest import RAW

TOLERANCE = 1e-9


def _expected(weapon: Weapon, target: Target, context: Context) -> tuple[float, float, float, float] | None:
    try:
        r = exact.resolve([weapon], target, context)
    except exact.EngineInputError:
        return None
    m = r.models_destroyed
    return r.damage.mean, m.mean, 1.0 - float(m.pmf[0]), r.target_destroyed


def _grid(seed: int) -> tuple[list[Weapon], list[Target]]:
    rng = np.random.default_rng(seed)
    attacks = ["1", "2", "3", "D3", "D6", "2D6", "D6+1"]
    damage = ["1", "2", "3", "D3", "D6", "D6+2"]
    weapons = []
    for n in range(24):
        abilities = {}
        roll = rng.random(6)
        if roll[0] < 0.3:
            abilities["sustained_hits"] = dice(str(rng.choice(["1", "2", "D3"])))
        if roll[1] < 0.3:
            abilities["lethal_hits"] = True
        if roll[2] < 0.15:
            abilities["devastating_wounds"] = True
        if roll[3] < 0.2:
            abilities["anti"] = (Anti(str(rng.choice(["INFANTRY", "VEHICLE", "MONSTER"])), int(rng.integers(2, 6))),)
        if roll[4] < 0.2:
            abilities["twin_linked"] = True
        if roll[5] < 0.15:
            abilities["blast"] = 1
        weapons.append(Weapon(
            name=f"w{n}", attacks=dice(str(rng.choice(attacks))), skill=int(rng.integers(2, 6)),
            strength=int(rng.integers(3, 13)), armour_penetration=-int(rng.integers(0, 4)),
            damage=dice(str(rng.choice(damage))), models=int(rng.choice([1, 2, 5, 10])), **abilities))
    targets = list(STANDARD_PROFILES.values())
    for n in range(10):
        targets.append(Target(
            toughness=int(rng.integers(2, 13)), save=int(rng.integers(2, 7)), wounds=int(rng.choice([1, 2, 3, 5, 12])),
            models=int(rng.choice([1, 3, 5, 10])), invulnerable_save=[None, 4, 5][int(rng.integers(0, 3))],
            feel_no_pain=[None, None, 5, 6][int(rng.integers(0, 4))],
            keywords=frozenset({str(rng.choice(["INFANTRY", "VEHICLE", "MONSTER"])), "IMPERIUM"}), name=f"t{n}"))
    return weapons, targets


@pytest.mark.parametrize("edition", [10, 11])
def test_batch_equals_exact_on_a_seeded_sample_of_a_generated_grid(edition):
    weapons, targets = _grid(seed=14)
    context = Context(edition=edition)
    result = resolve_batch(weapons, targets, context)
    assert result.expected_damage.shape == (len(weapons), len(targets))
    rng = np.random.default_rng(edition)
    for i, j in zip(rng.integers(0, len(weapons), 60), rng.integers(0, len(targets), 60)):
        expected = _expected(weapons[i], targets[j], context)
        got = tuple(result.figures(int(i), int(j)).values())
        if expected is None:
            assert all(np.isnan(got))
        else:
            assert got == pytest.approx(expected, abs=TOLERANCE, rel=0)
    assert result.vectorised_pairs + result.refused_pairs == result.distinct_pairs
    assert result.vectorised_pairs > result.devastating_pairs > 0  # the grid has Devastating Wounds weapons
    assert any(w.devastating_wounds and w.lethal_hits for w in weapons)


def test_identical_profiles_are_resolved_once_and_share_their_figures():
    weapons, targets = _grid(seed=3)
    twins = weapons[:4] + [dataclasses.replace(w, name=w.name + " (copy)") for w in weapons[:4]]
    other = [dataclasses.replace(t, name="renamed", keywords=t.keywords | {"CHAOS"}) for t in targets[:3]]
    result = resolve_batch(twins, targets[:3] + other, Context())
    # CHAOS is read by no weapon (no Anti-CHAOS, no condition on it): the renamed targets are the same
    assert result.distinct_pairs == 4 * 3
    assert np.array_equal(result.expected_damage[:4], result.expected_damage[4:])
    assert np.array_equal(result.p_unit_destroyed[:, :3], result.p_unit_destroyed[:, 3:])


def test_a_keyword_an_anti_ability_reads_keeps_targets_apart():
    w = Weapon(name="anti", attacks=dice("4"), skill=3, strength=3, armour_penetration=0, damage=dice("1"),
               anti=(Anti("INFANTRY", 4),))
    plain = Target(toughness=4, save=3, wounds=1, models=5, keywords=frozenset({"BEASTS"}))
    infantry = dataclasses.replace(plain, keywords=frozenset({"INFANTRY"}))
    result = resolve_batch([w], [plain, infantry], Context())
    assert result.distinct_pairs == 2
    assert result.expected_damage[0, 1] > result.expected_damage[0, 0]
    assert target_key(plain, frozenset({"INFANTRY"})).keywords == frozenset()


def test_a_pair_the_exact_engine_refuses_is_nan_and_counted():
    w = Weapon(name="bolter", attacks=dice("2"), skill=3, strength=4, armour_penetration=0, damage=dice("1"))
    huge = Target(toughness=4, save=3, wounds=1000, models=1000, name="huge")
    result = resolve_batch([w], [huge, STANDARD_PROFILES["MEQ"]], Context())
    assert np.isnan(result.expected_damage[0, 0]) and not np.isnan(result.expected_damage[0, 1])
    assert result.refused_pairs == 1 and sum(result.refusals.values()) == 1
    assert "at most" in next(iter(result.refusals))


def test_an_edition_the_engine_does_not_know_is_an_input_error():
    with pytest.raises(exact.EngineInputError, match="edition must be 10 or 11"):
        resolve_batch([], [], Context(edition=9))  # type: ignore[arg-type]


@pytest.fixture(scope="module")
def seed_db(tmp_path_factory) -> Path:
    path = tmp_path_factory.mktemp("batch") / "wh40k.duckdb"
    build(RAW, path)
    return path


def test_batch_equals_exact_on_every_pair_of_the_real_profiles_of_a_built_database(seed_db):
    con = open_database(seed_db)
    try:
        weapons = from_db.all_weapon_profiles(con) + from_db.all_weapon_profiles(con, is_melee=True)
    finally:
        con.close()
    assert len(weapons) >= 10
    targets = list(STANDARD_PROFILES.values())
    for edition in (10, 11):
        context = Context(edition=edition)
        result = resolve_batch(weapons, targets, context)
        for i, weapon in enumerate(weapons):
            for j, target in enumerate(targets):
                expected = _expected(weapon, target, context)
                assert tuple(result.figures(i, j).values()) == pytest.approx(expected, abs=TOLERANCE, rel=0)


@pytest.mark.parametrize("edition", [10, 11])
def test_twin_linked_fishing_chosen_per_pair_as_the_exact_engine_does(edition):
    weapons, targets = _grid(seed=5)
    assert any(w.twin_linked for w in weapons)
    context = Context(edition=edition, twin_linked_reroll="best")
    result = resolve_batch(weapons, targets, context)
    for i, weapon in enumerate(weapons):
        if not weapon.twin_linked:
            continue
        for j, target in enumerate(targets):
            expected = _expected(weapon, target, context)
            got = tuple(result.figures(i, j).values())
            assert got == pytest.approx(expected, abs=TOLERANCE, rel=0) if expected else all(np.isnan(got))


def test_a_re_roll_of_one_die_is_for_the_exact_engine():
    with pytest.raises(exact.EngineInputError, match="no re-roll of one die"):
        resolve_batch([], [], Context(reroll_one_hit=True))
