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
over w (the wounded model's damage) with a count of models destroyed that only adds up. The walk of
the unsaved events (index ``a``) and the walk of the devastating events (index ``c``) are joined
where the first ends and the second starts (index ``g``): the chain carries ``C[a, c, g, K]``, the
probability of K models destroyed in all (K < models: the mass of every model destroyed is what the
rest leaves of 1), for each starting point g of the devastating walk guessed in advance, with the
normal walk at a and the devastating walk at c; at the end only the guesses that came true (a == g)
are kept. One weapon's independent units (hits, or attacks with Lethal Hits) each make i unsaved
and j devastating events with probability ``outcome[i, j]``: the unit's move is
``sum_ij outcome[i, j] X^i Y^j``, X one unsaved event, acting on a only, and Y one devastating
event, acting on c only (each adding its kill to K); they commute, so each weapon is one Horner
scheme over its units, and each X or Y is applied along its own axis (``Move``: one shifted add per
damage value, the kills into the walk's 0), never as a matrix over (a, c). Work ``units x W^3 x
models x`` (the moves' damage values), linear in the attacks, whatever the number of weapons
(``work``); the tensor has ``W^3 x models`` cells (20 x W25: 312,500; 5 x W100: 5e6, where the main
chain's pending counts may be less work).
"""

from __future__ import annotations

from typing import Sequence

import numpy as np

from pipeline.frozen_record import FrozenRecord

class Stream(FrozenRecord):
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


#: Steps per cell of the matrix product along one axis (``Move`` with ``dense``), a step being
#: one shifted add of one damage value: measured at W10 to W50 (some 8 ns a cell for the
#: product, 0.4 ns for a shifted add), so the product is taken only for damage of more values.
DENSE_STEPS = 24


class Move:
    """One event of ``damage`` (pmf of its points after Feel No Pain, 0 allowed) on one walk of
    the chain tensor ``T[a, c, g, K]`` (shape ``(W, W, W, models)``): ``axis`` 0 is the walk of
    the unsaved events (a), 1 the devastating walk (c). From w damage the walk goes to w + x with
    probability ``damage[x]`` while w + x < W, else the model is destroyed: K + 1 and the walk
    starts again at 0 (the next model); at K = models - 1 + 1 every model is destroyed and the
    cell leaves the tensor (``allocate`` puts the mass lost on "every model destroyed").

    The move is applied axis by axis, never as a matrix over (a, c): the stay part by one shifted
    add per damage value (work cells x values) or, for damage of more than ``DENSE_STEPS``
    values, one matrix product along the axis (``dense``: cells x W multiply-adds), the kills by
    one product with the kill probabilities of the last ``max damage`` values of w.
    """

    def __init__(self, damage: np.ndarray, wounds: int, axis: int):
        self.axis, self.wounds = axis, wounds
        self.stay, kill = event_operators(damage, wounds)
        self.values = [(x, float(p)) for x, p in enumerate(damage[:wounds]) if p]
        self.dense = len(self.values) > DENSE_STEPS
        nonzero = np.flatnonzero(kill)
        self.low = int(nonzero[0]) if nonzero.size else wounds
        self.kill = kill[self.low:]

    def cost(self) -> int:
        """Steps per cell of the tensor: the damage values (one shifted add each), or
        ``DENSE_STEPS`` for the matrix product."""
        return DENSE_STEPS if self.dense else len(self.values)

    def add_to(self, out: np.ndarray, T: np.ndarray, coef: float, scratch: np.ndarray) -> None:
        """``out += coef x`` the move of ``T`` (same shapes; ``scratch`` of that shape is
        overwritten).

        >>> T = np.zeros((2, 1, 1, 2)); T[0, 0, 0, 0] = 1.0
        >>> out = np.zeros_like(T)
        >>> Move(np.array([0.0, 0.5, 0.5]), 2, axis=0).add_to(out, T, 1.0, np.empty_like(T))
        >>> out.reshape(2, 2).tolist()  # from 0 damage: 1 damage (W2), or a kill and back to 0
        [[0.0, 0.5], [0.5, 0.0]]
        """
        W, axis = self.wounds, self.axis
        ahead = (slice(None),) * axis
        if self.dense:
            moved = np.matmul(self.stay.T, T.reshape(T.shape[: axis + 1] + (-1,))).reshape(T.shape)
            out += coef * moved if coef != 1.0 else moved
        else:
            for x, p in self.values:
                source = T[ahead + (slice(0, W - x),)]
                buffer = scratch[ahead + (slice(0, W - x),)]
                np.multiply(source, coef * p, out=buffer)
                out[ahead + (slice(x, None),)] += buffer
        if self.low < W and T.shape[-1] > 1:
            rest = T[ahead + (slice(self.low, None),)]
            if axis == 0:
                killed = np.tensordot(self.kill, rest, axes=([0], [0]))
            else:
                killed = np.matmul(self.kill[None, :], rest.reshape(rest.shape[:2] + (-1,))).reshape(
                    rest.shape[:1] + rest.shape[2:])
            start = out[ahead + (0,)]  # the walk at 0 after a kill: a view of ``out``
            start[..., 1:] += coef * killed[..., :-1]


def allocate(streams: Sequence[Stream], models: int, wounds: int) -> np.ndarray:
    """The state after every stream's unsaved events (in order), then every stream's devastating
    events (in order): a pmf over ``k * wounds + w`` (k destroyed, w damage on the wounded model)
    and ``models * wounds`` (every model destroyed), as the exact engine's chain state.

    The chain tensor is ``C[a, c, g, K]`` for K < models (the mass of every model destroyed is
    what the others leave of 1); each stream is a Horner scheme over its units of the unit's move
    ``U = sum_ij outcome[i, j] X^i Y^j``, X one unsaved event on the walk a and Y one devastating
    event on the walk c (``Move``; moves of different walks commute, their kills add up): per
    unit the powers ``Y^j`` of the Horner value (j < the used columns of ``outcome``), then a
    Horner scheme in X over the rows. Exact (no count is cut here; the caller may cut a count's
    tail). Work: ``work``.

    >>> one = Stream(np.array([0.0, 1.0]), np.array([[0.0], [1.0]]), np.array([0.0, 1.0]), np.array([1.0]))
    >>> allocate([one, one, one], models=2, wounds=2).tolist()
    [0.0, 0.0, 0.0, 1.0, 0.0]
    """
    if models == 1:
        return _one_model(streams, wounds)
    C = np.zeros((wounds, wounds, wounds, models))  # [a, c, g, K]
    for g in range(wounds):
        C[0, g, g, 0] = 1.0
    scratch = np.empty_like(C)
    for stream in map(_without_null_events, streams):
        X, Y = Move(stream.normal_damage, wounds, axis=0), Move(stream.mortal_damage, wounds, axis=1)
        count = stream.count
        H = count[-1] * C  # the Horner value
        for c in count[-2::-1]:
            H = _unit_move(H, c, C, stream.outcome, X, Y, scratch)
        C = H
    final = np.einsum("gcgk->kc", C)  # the guesses that came true: a == g
    x = np.empty(models * wounds + 1)
    x[:-1] = final.reshape(-1)
    x[-1] = max(0.0, 1.0 - float(x[:-1].sum()))
    return x


def _unit_move(H: np.ndarray, c: float, C: np.ndarray, outcome: np.ndarray, X: Move, Y: Move,
               scratch: np.ndarray) -> np.ndarray:
    """One Horner step of a stream: ``U(H) + c C`` with ``U = sum_ij outcome[i, j] X^i Y^j``, as
    ``sum_i X^i R_i``, ``R_i = sum_j outcome[i, j] Y^j H`` (a Horner scheme in X from the last
    row). A term used once is added by its move with its coefficient, not made first: the hit of
    a Devastating Wounds weapon (``outcome`` [[p0, p_devastating], [p_unsaved, 0]]) costs one X
    and one Y move added to ``c C + p0 H``."""
    rows, cols = outcome.shape[0], _used_columns(outcome)
    powers = [H]  # Y^j H made for j < cols - 1; the last power is only ever added by its move
    for _ in range(1, cols - 1):
        power = np.zeros_like(H)
        Y.add_to(power, powers[-1], 1.0, scratch)
        powers.append(power)

    def add_row(out: np.ndarray, i: int) -> None:
        for j in range(cols):
            coef = float(outcome[i, j])
            if coef and j == cols - 1 and j > 0:
                Y.add_to(out, powers[j - 1], coef, scratch)
            elif coef:
                np.multiply(powers[j], coef, out=scratch)
                out += scratch

    acc, acc_coef = None, 1.0  # X^(i - 1 - row) R_row summed: the Horner value in X
    for i in range(rows - 1, -1, -1):
        single = [j for j in range(cols) if outcome[i, j]]
        if i > 0 and acc is None and single == [0]:  # R_i = outcome[i, 0] H: kept as a coefficient
            acc, acc_coef = H, float(outcome[i, 0])
            continue
        if i > 0 and acc is None and not single:  # R_i = 0
            continue
        row = c * C if i == 0 else np.zeros_like(H)
        add_row(row, i)
        if acc is not None:
            X.add_to(row, acc, acc_coef, scratch)
        acc, acc_coef = row, 1.0
    return acc


def _thinned_axis(outcome: np.ndarray, keep: float, axis: int) -> np.ndarray:
    """``outcome`` with each of its events along ``axis`` kept with probability ``keep`` (the
    binomial thinning of the count of that axis, by the exact engine's binomial table).

    >>> _thinned_axis(np.array([[0.5, 0.5]]), 0.5, 1).tolist()
    [[0.75, 0.25]]
    """
    from pipeline.engine.exact import _binomial_matrix  # (exact imports this module)

    thin = _binomial_matrix(outcome.shape[axis] - 1, keep)  # thin[n, m] = P(m of n events kept)
    return thin.T @ outcome if axis == 0 else outcome @ thin


def _without_null_events(stream: Stream) -> Stream:
    """``stream`` with its events of 0 damage (all points saved by Feel No Pain) dropped: an event
    of 0 damage changes nothing, so the unit's counts are thinned by P(damage > 0) and the damage
    pmfs are those given damage > 0 (one damage value less for each move of ``allocate``).

    >>> one = Stream(np.array([0.0, 1.0]), np.array([[0.5], [0.5]]), np.array([0.5, 0.5]), np.array([1.0]))
    >>> s = _without_null_events(one)  # one unsaved event with P 1/2, of 0 or 1 damage
    >>> s.outcome.tolist(), s.normal_damage.tolist()
    ([[0.75], [0.25]], [0.0, 1.0])
    """
    outcome = stream.outcome
    damages = []
    for axis, damage in ((0, stream.normal_damage), (1, stream.mortal_damage)):
        keep = float(damage[1:].sum())
        if damage[0] == 0.0 or keep == 0.0:
            damages.append(damage)
            continue
        outcome = _thinned_axis(outcome, keep, axis)
        damages.append(np.concatenate(([0.0], damage[1:] / keep)))
    if all(a is b for a, b in zip(damages, (stream.normal_damage, stream.mortal_damage))):
        return stream
    return Stream(stream.count, outcome, damages[0], damages[1])


def _used_columns(outcome: np.ndarray) -> int:
    """The columns of ``outcome`` up to its last nonzero one (at least 1)."""
    used = np.flatnonzero(outcome.any(axis=0))
    return int(used[-1]) + 1 if used.size else 1


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


def work(streams: Sequence[Stream], models: int, wounds: int) -> int:
    """Steps of ``allocate`` for ``streams`` (a step: one shifted add of ``Move`` on one cell,
    some 0.4 ns; ``exact._kill_counts_work`` turns them into the main chain's multiply-adds): per
    stream, its units (the count's support less 1) x (the ``W^3 x models`` cells of the chain
    tensor x (rows - 1 unsaved moves x ``Move.cost`` + used columns - 1 devastating moves x
    theirs + rows x columns Horner terms) + ``UNIT_STEPS``); for one model (``_one_model``),
    units x rows x columns x W x the damage values. Linear in each weapon's attacks.

    >>> d1 = np.array([0.0, 1.0])
    >>> s = Stream(np.full(101, 1 / 101), np.array([[0.5, 0.25], [0.25, 0.0]]), d1, d1)
    >>> work([s], models=10, wounds=2), work([s], models=1, wounds=500)
    (10048000, 400000)
    """
    total = 0
    for stream in map(_without_null_events, streams):
        units, rows, cols = stream.count.size - 1, stream.outcome.shape[0], _used_columns(stream.outcome)
        if models == 1:
            total += units * rows * cols * wounds * max(stream.normal_damage.size, stream.mortal_damage.size)
            continue
        X, Y = Move(stream.normal_damage, wounds, axis=0), Move(stream.mortal_damage, wounds, axis=1)
        per_cell = (rows - 1) * X.cost() + (cols - 1) * Y.cost() + rows * cols
        total += units * (wounds ** 3 * models * per_cell + UNIT_STEPS)
    return total


#: Steps of ``allocate`` that take the time of one multiply-add of the exact engine's main chain
#: (``exact._pending_work``; measured: some 0.35 ns a step, 0.7 ns a multiply-add).
STEPS_PER_MULTIPLY_ADD = 2

#: The fixed cost of one unit's move of ``allocate`` in steps (some 20 numpy calls, measured
#: against 500 x W1, where the tensor has 500 cells).
UNIT_STEPS = 100_000
