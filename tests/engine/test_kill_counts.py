"""The allocation chain by kill counts (``pipeline.engine.kill_counts``) against the main chain.

``exact.resolve`` takes the kill counts only where a pending devastating count would be carried
and they are less work; here they are forced on every attack of ``data/chain_reference.json``
(166 attacks, one to four weapons, most with Devastating Wounds; the values of the engine before its chain was
made linear) and must give the same distribution of models destroyed to 1e-12 per count. On
small random streams (hypothesis) the chain equals a direct enumeration of every count of
every stream (the rule itself: all unsaved events in stream order, then all devastating events
in stream order, one model at a time, excess lost) and the kill counts of the Kronecker form
they replaced. Cases the engine refused for their work (Devastating Wounds weapons of different
Damage, 1,000 attacks each, against 250 x W2 and 20 x W25) now resolve within the work limit.
"""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from pipeline import limits
from pipeline.engine import exact, kill_counts, last_expanded
from pipeline.engine.profiles import Context, Target, Weapon
from pipeline.engine.simulate import simulate_trials
from pipeline.normalise.characteristics import dice
from tests.engine.data.make_chain_reference import weapon_from

CASES = json.loads((Path(__file__).resolve().parent / "data" / "chain_reference.json").read_text())


def _plans(weapons, target, context):
    steps, choices = [], {}
    rules = exact.rules_for(context.edition)
    weapons = [exact._limited(exact._against(w, target, steps), rules, steps) for w in weapons]
    return [exact._plan(w, target, context, steps, choices) for w in weapons]


@pytest.mark.parametrize("index", range(len(CASES)))
def test_kill_counts_equal_the_old_chain(index):
    case = CASES[index]
    target = Target(**case["target"])
    plans = _plans([weapon_from(w) for w in case["weapons"]], target, Context(**case["context"]))
    x = kill_counts.allocate(exact._streams(plans), target.models, target.wounds)
    got = exact._models_pmf(x, target)
    want = np.array(case["models_destroyed"])
    assert got.size == want.size
    assert np.max(np.abs(got - want)) <= 1e-12, (got - want).tolist()


def test_two_devastating_weapons_of_different_damage_against_250_models_resolve():
    target = Target(toughness=4, save=3, wounds=2, models=250, name="250 x W2")
    weapons = [Weapon(name=f"d{d}", attacks=dice("1"), skill=3, strength=4, armour_penetration=0, damage=dice(d),
                      models=1000, devastating_wounds=True) for d in "12"]
    plans = _plans(weapons, target, Context())
    assert exact._pending_work(plans, target) > 1e10  # what the main chain would take
    assert exact.chain_work(plans, target) == exact._kill_counts_work(plans, target) < 1e8
    result = exact.resolve(weapons, target)
    pmf = result.models_destroyed.pmf
    assert pmf.size == 251 and abs(pmf.sum() - 1.0) <= 1e-12
    # 2,000 attacks hit on 3+ and wound on 4+ (a 6 is devastating, else saved on 3+ after AP0):
    # E[damage] = 1000 x 2/3 x (1/3 x 1/3 x 1 + 1/6 x 1) + 1000 x 2/3 x (1/3 x 1/3 x 2 + 1/6 x 2)
    assert result.damage.mean == pytest.approx(1000 * 2 / 3 * (1 / 9 + 1 / 6) * 3, abs=1e-9)
    # about 556 damage against 500 wounds: P(unit destroyed) as simulated (seeded), within 5 standard errors
    destroyed = simulate_trials(weapons, target, Context(), trials=4_000, seed=3).models_destroyed
    p = result.target_destroyed
    assert abs((destroyed == 250).mean() - p) <= 5 * np.sqrt(p * (1 - p) / 4_000)
    assert abs(destroyed.mean() - result.models_destroyed.mean) <= 5 * destroyed.std(ddof=1) / np.sqrt(4_000)


def test_one_model_orders_nothing():
    # one model: every event adds its damage to it, so the kill counts are a damage total
    stream = kill_counts.Stream(np.array([0.0, 0.0, 1.0]), np.array([[0.5, 0.5], [0.0, 0.0]]),
                                np.array([1.0]), np.array([0.0, 0.0, 1.0]))
    # two hits, each devastating (2 damage) with P 1/2, against W3: destroyed unless both fail
    assert kill_counts.allocate([stream], models=1, wounds=3).tolist() == [0.25, 0.0, 0.5, 0.25]


def _events(x: np.ndarray, damage: np.ndarray, models: int, wounds: int) -> np.ndarray:
    """The real state (pmf over k * W + w, then every model destroyed) after one event."""
    out = np.zeros_like(x)
    out[-1] = x[-1]
    for s in range(models * wounds):
        k, w = divmod(s, wounds)
        for d, p in enumerate(damage):
            if w + d >= wounds:
                out[min((k + 1) * wounds, models * wounds)] += x[s] * p
            else:
                out[s + d] += x[s] * p
    return out


def _enumerated(streams, models: int, wounds: int) -> np.ndarray:
    """The rule by brute force: every stream's joint count of (unsaved, devastating) events, every
    combination of them, the unsaved events in stream order, then the devastating ones."""
    joints = []
    for stream in streams:
        joint, power = np.zeros((1, 1)), np.ones((1, 1))
        for n, p in enumerate(stream.count):
            if n:
                grown = np.zeros((power.shape[0] + stream.outcome.shape[0] - 1,
                                  power.shape[1] + stream.outcome.shape[1] - 1))
                for (i, j), q in np.ndenumerate(stream.outcome):
                    grown[i:i + power.shape[0], j:j + power.shape[1]] += q * power
                power = grown
            padded = np.zeros((max(joint.shape[0], power.shape[0]), max(joint.shape[1], power.shape[1])))
            padded[:joint.shape[0], :joint.shape[1]] += joint
            padded[:power.shape[0], :power.shape[1]] += p * power
            joint = padded
        joints.append(joint)
    start = np.zeros(models * wounds + 1)
    start[0] = 1.0
    total = np.zeros_like(start)

    def walk(index, weight, counts):
        nonlocal total
        if index == len(streams):
            x = start
            for stream, (i, _) in zip(streams, counts):
                for _ in range(i):
                    x = _events(x, stream.normal_damage, models, wounds)
            for stream, (_, j) in zip(streams, counts):
                for _ in range(j):
                    x = _events(x, stream.mortal_damage, models, wounds)
            total = total + weight * x
            return
        for (i, j), p in np.ndenumerate(joints[index]):
            if p:
                walk(index + 1, weight * p, counts + [(i, j)])

    walk(0, 1.0, [])
    return total


def _kronecker_allocate(streams, models: int, wounds: int) -> np.ndarray:
    """The kill counts as they were before the moves were applied axis by axis: each unit's move
    a dense matrix over (a, c), Kronecker products of powers of the two walks' event operators."""
    def poly_product(A, B):
        out = np.zeros((A.shape[0] + B.shape[0] - 1, A.shape[1], B.shape[2]))
        for i in range(A.shape[0]):
            for j in range(B.shape[0]):
                out[i + j] += A[i] @ B[j]
        return out

    def as_poly(damage):
        stay, kill = kill_counts.event_operators(damage, wounds)
        poly = np.zeros((2, wounds, wounds))
        poly[0], poly[1][:, 0] = stay, kill
        return poly

    size, K = wounds * wounds, models + 1
    C = np.zeros((wounds, wounds, wounds, K))
    for g in range(wounds):
        C[0, g, g, 0] = 1.0
    C = C.reshape(size, wounds * K)
    for stream in streams:
        rows, cols = stream.outcome.shape
        eye = np.eye(wounds)[None]
        powers_n, powers_m = [eye], [eye]
        for _ in range(1, rows):
            powers_n.append(poly_product(powers_n[-1], as_poly(stream.normal_damage)))
        for _ in range(1, cols):
            powers_m.append(poly_product(powers_m[-1], as_poly(stream.mortal_damage)))
        P = np.zeros((rows + cols - 1, size, size))
        for i in range(rows):
            for j in range(cols):
                for d in range(powers_n[i].shape[0]):
                    for e in range(powers_m[j].shape[0]):
                        P[d + e] += stream.outcome[i, j] * np.kron(powers_n[i][d], powers_m[j][e])
        degrees = P.shape[0]
        stacked = P.transpose(0, 2, 1).reshape(degrees * size, size)
        Y = stream.count[-1] * C
        for c in stream.count[-2::-1]:
            moved = (stacked @ Y).reshape(degrees, size, wounds, K)
            out = moved[0]
            for d in range(1, degrees):
                out[..., d:] += moved[d][..., :-d]
                out[..., -1] += moved[d][..., max(K - d, 0):].sum(axis=-1) if d > 1 else moved[d][..., -1]
            Y = out.reshape(size, wounds * K) + c * C
        C = Y
    final = np.einsum("gcgk->kc", C.reshape(wounds, wounds, wounds, K))
    x = np.empty(models * wounds + 1)
    x[:-1] = final[:-1].reshape(-1)
    x[-1] = final[-1].sum()
    return x


def _pmf(draw, size: int, zero: bool = True) -> np.ndarray:
    weights = np.array(draw(st.lists(st.integers(0 if zero else 1, 4), min_size=size, max_size=size)), dtype=float)
    if not weights.any():
        weights[-1] = 1.0
    return weights / weights.sum()


@st.composite
def small_attacks(draw):
    models, wounds = draw(st.integers(2, 4)), draw(st.integers(1, 4))
    streams = []
    for _ in range(draw(st.integers(1, 3))):
        count = _pmf(draw, draw(st.integers(1, 4)))
        rows, cols = draw(st.integers(1, 3)), draw(st.integers(1, 3))
        outcome = _pmf(draw, rows * cols).reshape(rows, cols)
        normal = _pmf(draw, draw(st.integers(1, 4)))
        mortal = _pmf(draw, draw(st.integers(1, 4)))
        streams.append(kill_counts.Stream(count, outcome, normal, mortal))
    return streams, models, wounds


@settings(max_examples=150, deadline=None, derandomize=True)
@given(small_attacks())
def test_kill_counts_equal_the_enumeration_and_the_kronecker_form(attack):
    streams, models, wounds = attack
    x = kill_counts.allocate(streams, models, wounds)
    assert np.max(np.abs(x - _enumerated(streams, models, wounds))) <= 1e-12
    assert np.max(np.abs(x - _kronecker_allocate(streams, models, wounds))) <= 1e-12


def test_devastating_events_come_after_every_unsaved_event():
    # derived by hand, 2 x W2: weapon A makes one unsaved event of 1 damage, weapon B one
    # devastating event of 1 or 2 damage (1/2 each). A's event comes first: the first model has 1
    # damage, B's event destroys it either way (2 damage: 1 is lost): 1 model destroyed, the
    # second untouched. (B first would leave the second model wounded half the time.)
    a = kill_counts.Stream(np.array([0.0, 1.0]), np.array([[0.0], [1.0]]), np.array([0.0, 1.0]), np.array([1.0]))
    b = kill_counts.Stream(np.array([0.0, 1.0]), np.array([[0.0, 1.0]]), np.array([1.0]), np.array([0.0, 0.5, 0.5]))
    assert kill_counts.allocate([b, a], models=2, wounds=2).tolist() == [0.0, 0.0, 1.0, 0.0, 0.0]
    # 2 x W3: A's event with probability 1/2; B's 2 damage then destroys the first model (1 + 2)
    # or leaves it at 2
    half = kill_counts.Stream(np.array([0.0, 1.0]), np.array([[0.5], [0.5]]), np.array([0.0, 1.0]), np.array([1.0]))
    two = kill_counts.Stream(np.array([0.0, 1.0]), np.array([[0.0, 1.0]]), np.array([1.0]), np.array([0.0, 0.0, 1.0]))
    assert kill_counts.allocate([two, half], models=2, wounds=3).tolist() == [0.0, 0.0, 0.5, 0.5, 0.0, 0.0, 0.0]


def test_two_devastating_weapons_of_different_damage_against_20_models_of_25_wounds_resolve():
    # the case the engine refused (about 2.8e10 steps) before the moves were applied axis by axis
    target = Target(toughness=4, save=3, wounds=25, models=20, name="20 x W25")
    weapons = [Weapon(name=f"d{d}", attacks=dice("1"), skill=3, strength=4, armour_penetration=0, damage=dice(d),
                      models=1000, devastating_wounds=True) for d in "12"]
    plans = _plans(weapons, target, Context())
    # the kill counts resolve it; the last weapon's count expanded (pipeline.engine.last_expanded) takes less
    assert exact._kill_counts_work(plans, target) <= exact.limits.MAX_ENGINE_WORK
    assert exact.chain_work(plans, target) == exact._last_expanded_work(plans, target) < exact._kill_counts_work(plans, target)
    streams = exact._streams(plans)
    assert np.max(np.abs(last_expanded.allocate(streams, 20, 25) - kill_counts.allocate(streams, 20, 25))) <= 1e-15
    result = exact.resolve(weapons, target)
    pmf = result.models_destroyed.pmf
    assert pmf.size == 21 and abs(pmf.sum() - 1.0) <= 1e-12
    assert result.damage.mean == pytest.approx(1000 * 2 / 3 * (1 / 9 + 1 / 6) * 3, abs=1e-9)
    destroyed = simulate_trials(weapons, target, Context(), trials=4_000, seed=5).models_destroyed
    spread = max(destroyed.std(ddof=1), 1 / 4_000)
    assert abs(destroyed.mean() - result.models_destroyed.mean) <= 5 * spread / np.sqrt(4_000)


def test_fifteen_devastating_weapons_take_the_kill_counts_not_an_overflowed_estimate():
    # The main chain's estimate multiplies one pending count per weapon: 15 of them pass 2^63,
    # which an int64 product wrapped round (to a small or negative work), so the main chain was
    # taken and asked for hundreds of GiB. Python integers do not wrap.
    target = Target(toughness=4, save=3, wounds=4, models=20, name="20 x W4")
    damages = ("1", "2", "3", "D3", "D6", "D3+1", "4", "5", "6", "D6+1", "2D3", "D6+2", "3D3", "2D6", "7")
    weapons = [Weapon(name=f"d{d}", attacks=dice("1"), skill=3, strength=4, armour_penetration=0, damage=dice(d),
                      models=400, devastating_wounds=True) for d in damages]
    plans = _plans(weapons, target, Context())
    # one more weapon is never less work (a wrapped product broke this from the 13th weapon on)
    works = [exact._pending_work(plans[:n], target) for n in range(1, len(plans) + 1)]
    assert works == sorted(works) and works[-1] > 2 ** 64
    assert exact.chain_work(plans, target) == exact._kill_counts_work(plans, target) < limits.MAX_ENGINE_WORK
    result = exact.resolve(weapons, target)
    pmf = result.models_destroyed.pmf
    assert pmf.size == 21 and abs(pmf.sum() - 1.0) <= 1e-12
    destroyed = simulate_trials(weapons, target, Context(), trials=4_000, seed=5).models_destroyed
    assert abs(destroyed.mean() - result.models_destroyed.mean) <= 5 * destroyed.std(ddof=1) / np.sqrt(4_000)
