"""The allocation chain by kill counts: any number of Devastating Wounds weapons, linear work.

The exact engine allocates every weapon's unsaved events (in weapon order), then every weapon's
devastating events (in weapon order), one event at a time onto one model, a wounded model first,
excess damage lost (10th edition "Devastating Wounds", current wording; 11th edition 24.10, 06.02;
see ``pipeline.engine.exact``). Its main chain carries, for each Devastating Wounds weapon whose
devastating events differ from the previous one's, the count of those events still pending: the
work grows with the product of those counts (two weapons of 1,000 attacks against 250 x W2: about
3e10 steps). This module resolves the same allocation with no pending counts.

Method. One event changes the state (k destroyed, w damage on the wounded model) in a way that does
not depend on k (until every model is destroyed, after which nothing changes): from w it destroys
no model and leaves w' damage, or destroys one model and leaves 0. So the whole attack is a walk
over w (the wounded model's damage) with a count of models destroyed that only adds up, capped at
the unit's models. The walk of the unsaved events (index ``a``) and the walk of the devastating
events (index ``c``) are joined where the first ends and the second starts (index ``g``): the
chain carries ``C[K, g, c, a]``, the probability of K models destroyed in all, for each starting
point g of the devastating walk guessed in advance, with the normal walk at a and the
devastating walk at c; at the end only the guesses that came true (a == g) are kept. One weapon's
independent units (hits, or attacks with Lethal Hits) each move a and c at once, and moves of
different indices commute, so each weapon is one Horner scheme over its units: work
``units x (models + 1) x W^3 x W``, linear in the attacks, whatever the number of weapons.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Sequence

import numpy as np


@dataclass(frozen=True)
class Stream:
    """One weapon's events for the chain: ``count`` is the pmf of its independent units (the
    unsaved events of a weapon without Devastating Wounds, its hits, or with Lethal Hits its
    attacks), ``outcome[i, j]`` the probability that one unit makes i unsaved and j devastating
    events, ``normal_damage`` and ``mortal_damage`` the damage pmfs (points after Feel No Pain, 0
    allowed) of one unsaved and one devastating event."""

    count: np.ndarray
    outcome: np.ndarray
    normal_damage: np.ndarray
    mortal_damage: np.ndarray


def event_operators(damage: np.ndarray, wounds: int) -> tuple[np.ndarray, np.ndarray]:
    """(``stay``, ``kill``) of one event of ``damage`` (pmf of its points) on a model of ``wounds``
    Wounds: ``stay[w, w']`` = P(no model destroyed, the wounded model now at w' damage) from w
    damage; ``kill[w]`` = P(the model is destroyed) from w (the next model starts at 0).

    >>> stay, kill = event_operators(np.array([0.5, 0.5]), 2)
    >>> stay.tolist(), kill.tolist()
    ([[0.5, 0.5], [0.0, 0.5]], [0.0, 0.5])
    """
    stay = np.zeros((wounds, wounds))
    kill = np.zeros(wounds)
    for x, p in enumerate(damage):
        if p == 0.0:
            continue
        for w in range(wounds):
            if w + x >= wounds:
                kill[w] += p
            else:
                stay[w, w + x] += p
    return stay, kill


def _poly_product(A: np.ndarray, B: np.ndarray) -> np.ndarray:
    """The product of two matrices of polynomials in the kills (``[degree, row, column]``)."""
    out = np.zeros((A.shape[0] + B.shape[0] - 1, A.shape[1], B.shape[2]))
    for i in range(A.shape[0]):
        for j in range(B.shape[0]):
            out[i + j] += A[i] @ B[j]
    return out


def unit_operator(outcome: np.ndarray, normal: np.ndarray, mortal: np.ndarray, wounds: int) -> np.ndarray:
    """One unit's move of the two walks as polynomials in the kills: ``P[d, (a, c), (a', c')]``
    = P(the walks go from (a, c) to (a', c') and d models are destroyed), for a unit making i
    unsaved events of ``normal`` damage and j devastating events of ``mortal`` damage with
    probability ``outcome[i, j]`` (``event_operators`` of each, as polynomials of degree 1).

    >>> P = unit_operator(np.array([[0.0], [1.0]]), np.array([0.0, 1.0]), np.array([1.0]), 1)
    >>> P.tolist()  # one unsaved event of 1 damage on W1 models: one model destroyed
    [[[0.0]], [[1.0]]]
    """
    def as_poly(damage: np.ndarray) -> np.ndarray:
        stay, kill = event_operators(damage, wounds)
        poly = np.zeros((2, wounds, wounds))
        poly[0], poly[1][:, 0] = stay, kill
        return poly

    rows, cols = outcome.shape
    eye = np.eye(wounds)[None]
    powers_n, powers_m = [eye], [eye]
    for _ in range(1, rows):
        powers_n.append(_poly_product(powers_n[-1], as_poly(normal)))
    for _ in range(1, cols):
        powers_m.append(_poly_product(powers_m[-1], as_poly(mortal)))
    size = wounds * wounds
    P = np.zeros((rows + cols - 1, size, size))
    for i in range(rows):
        for j in range(cols):
            if outcome[i, j]:
                for d in range(powers_n[i].shape[0]):
                    for e in range(powers_m[j].shape[0]):
                        P[d + e] += outcome[i, j] * np.kron(powers_n[i][d], powers_m[j][e])
    return P[: max(1, int(np.flatnonzero(P.reshape(P.shape[0], -1).any(axis=1))[-1]) + 1)] if P.any() else P[:1]


def allocate(streams: Sequence[Stream], models: int, wounds: int) -> np.ndarray:
    """The state after every stream's unsaved events (in order), then every stream's devastating
    events (in order): a pmf over ``k * wounds + w`` (k destroyed, w damage on the wounded model)
    and ``models * wounds`` (every model destroyed), as the exact engine's chain state.

    The chain tensor is ``C[(a, c), g, K]``; each stream is a Horner scheme over its units of the
    unit's move (``unit_operator``): one matrix product and one shift of K per kill degree per
    unit. Exact (no count is cut here; the caller may cut a count's tail).

    >>> one = Stream(np.array([0.0, 1.0]), np.array([[0.0], [1.0]]), np.array([0.0, 1.0]), np.array([1.0]))
    >>> allocate([one, one, one], models=2, wounds=2).tolist()
    [0.0, 0.0, 0.0, 1.0, 0.0]
    """
    if models == 1:
        return _one_model(streams, wounds)
    size, K = wounds * wounds, models + 1
    C = np.zeros((wounds, wounds, wounds, K))  # [a, c, g, K]
    for g in range(wounds):
        C[0, g, g, 0] = 1.0
    C = C.reshape(size, wounds * K)
    for stream in streams:
        P = unit_operator(stream.outcome, stream.normal_damage, stream.mortal_damage, wounds)
        degrees = P.shape[0]
        stacked = P.transpose(0, 2, 1).reshape(degrees * size, size)  # row (d, a'c'), column ac
        count = stream.count
        Y = count[-1] * C
        for c in count[-2::-1]:
            moved = (stacked @ Y).reshape(degrees, size, wounds, K)
            out = moved[0]
            for d in range(1, degrees):
                out[..., d:] += moved[d][..., :-d]
                out[..., -1] += moved[d][..., max(K - d, 0):].sum(axis=-1) if d > 1 else moved[d][..., -1]
            out = out.reshape(size, wounds * K)
            out += c * C
            Y = out
        C = Y
    final = np.einsum("gcgk->kc", C.reshape(wounds, wounds, wounds, K))  # the guesses that came true: a == g
    x = np.empty(models * wounds + 1)
    x[:-1] = final[:-1].reshape(-1)
    x[-1] = final[-1].sum()
    return x


def _added(x: np.ndarray, damage: np.ndarray) -> np.ndarray:
    """The one model's state (damage 0..W-1, then destroyed) after an event of ``damage``."""
    wounds = x.size - 1
    out = np.zeros(wounds + 1)
    added = np.convolve(x[:wounds], damage)
    out[:wounds] = added[:wounds]
    out[wounds] = x[wounds] + added[wounds:].sum()
    return out


def _one_model(streams: Sequence[Stream], wounds: int) -> np.ndarray:
    """``allocate`` for a unit of one model: every event, unsaved or devastating, adds its damage
    to that model, so their order does not matter and the state is the damage so far, capped at
    W (the model destroyed): no walk to join, work units x W x the damage values."""
    x = np.zeros(wounds + 1)
    x[0] = 1.0
    for stream in streams:
        normal, mortal = stream.normal_damage, stream.mortal_damage
        rows, cols = stream.outcome.shape
        count = stream.count
        Y = count[-1] * x
        for c in count[-2::-1]:
            out = c * x
            Z_i = Y
            for i in range(rows):
                if i:
                    Z_i = _added(Z_i, normal)
                Z = Z_i
                for j in range(cols):
                    if j:
                        Z = _added(Z, mortal)
                    if stream.outcome[i, j]:
                        out += stream.outcome[i, j] * Z
            Y = out
        x = Y
    return x


def work(streams_units: Sequence[tuple[int, int, int]], models: int, wounds: int) -> int:
    """Multiply-adds of ``allocate``: per stream (its units, the kill degrees of its unit's move:
    rows + cols - 1 of ``outcome``, the damage values of one event), units x degrees x
    ``wounds^4`` x the ``wounds x (models + 1)`` columns of the chain tensor; for one model,
    units x degrees x wounds x the damage values.

    >>> work([(100, 2, 3)], models=10, wounds=2), work([(100, 2, 3)], models=1, wounds=500)
    (70400, 300000)
    """
    if models == 1:
        return sum(units * degrees * wounds * values for units, degrees, values in streams_units)
    per_unit = wounds ** 5 * (models + 1)
    return sum(units * degrees * per_unit for units, degrees, _ in streams_units)
