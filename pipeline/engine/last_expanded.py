"""The allocation chain with the last weapon's unsaved count expanded: two Devastating Wounds
weapons of different Damage against a few models of many Wounds, with one pending count.

The exact engine allocates every weapon's unsaved events (in weapon order), then every weapon's
devastating events (in weapon order), one event at a time onto one model, a wounded model first,
excess damage lost (see ``pipeline.engine.exact`` and ``pipeline.engine.kill_counts``, which
resolve the same allocation). Written as operators on the target's state, the attack is
``x0 N_1 ... N_m D_1 ... D_m``: ``N_i`` the unsaved events of stream i, ``D_i`` its devastating
events; the two of one stream are correlated (a hit makes one or the other), streams are
independent. The main chain carries a pending count of each stream's devastating events until
every ``N`` is applied: with two such streams, the product of two counts (two weapons of 1,000
attacks, Damage 1 and 2, against 5 x W100: 2.4e10 steps), and the kill counts' tensor has
``W^3 x models`` cells (as much there).

Method. The streams before the last carry their pending counts as the main chain does (the state
``P[w, v_1, ..., K]``: the wounded model's damage w, the pending counts, K models destroyed). The
last stream (b) is taken by its counts instead: for each count n of its unsaved events, the
state ``L_n = P N_b^n`` (one move per n), then its pending counts applied in weapon order,
``r_n = sum_v D_1^(v_1) ... L_n[v]`` (a Horner scheme along each pending axis, for a block of n at
once), then ``t_v = sum_n J(n, v) r_n`` with J the joint pmf of stream b's unsaved and
devastating totals, and the state ``sum_v D_b^v t_v``. No pending count of b is carried: the
work is the counts n of b x the cells of P x the damage values (the example above: some 1e9
steps, under a second). It is taken when the last stream has devastating events and exactly one earlier stream
has too (``applies``: with more, the pending counts carried multiply again); a stream without
them after the last such stream would sit between ``N_b`` and ``D_1`` and be applied once for
each n: that attack is left to the other methods.

The moves are ``kill_counts.Move`` along the walk axis (0) of arrays ``[w, ..., K]``: one shifted
add per damage value, kills into K + 1, the mass of every model destroyed leaving the array (put
back on "every model destroyed" at the end, as the main chain does with the mass of a count at
its cap). A count past its cap (``models x ceil(W / least damage)`` events destroy every model
from any state) leaves the arrays the same way.
"""

from __future__ import annotations

import math
from typing import Sequence

import numpy as np

from pipeline.engine.kill_counts import Move, Stream, _used_columns, _without_null_events

#: Cells of the block ``L_n`` for a block of counts n (``allocate``): some 32 MiB of floats.
BLOCK_CELLS = 4_000_000

#: Steps (as ``kill_counts.work``: one shifted add on one cell) that one numpy call of this method
#: costs beyond its cells: some 10 microseconds.
CALL_STEPS = 25_000


def applies(streams: Sequence[Stream]) -> bool:
    """Whether ``allocate`` is taken for ``streams``: the last has devastating events, and so does
    exactly one earlier stream (with none, or the last alone, the main chain carries no product of
    counts; with two or more earlier ones, this method would carry their product, which grows with
    the square of the attacks: the kill counts grow linearly). ``allocate`` itself resolves any
    streams whose last has devastating events."""
    devastating = [_used_columns(s.outcome) > 1 for s in streams]
    return len(streams) >= 2 and devastating[-1] and sum(devastating[:-1]) == 1


def _cap(damage: np.ndarray, models: int, wounds: int) -> int:
    """Events of ``damage`` (pmf of points) that destroy every model from any state: each event of
    at least d points destroys the wounded model within ceil(W / d) events."""
    positive = np.flatnonzero(damage[1:]) + 1
    least = int(positive[0]) if positive.size else 0
    return models * math.ceil(wounds / least) if least else 1 << 62


#: The upper tail of a count that ``allocate`` cuts (its mass put on "every model destroyed"), as
#: the exact engine cuts a pending count's (``exact._truncated``).
TAIL = 1e-15


def _sizes(stream: Stream, models: int, wounds: int) -> tuple[int, int]:
    """(the most unsaved events, the most devastating events) of ``stream`` that matter: at most
    its units x the events of one unit, the cap (``_cap``), and the count past which the upper
    tail is ``TAIL`` or less (the total's pmf: the count of units compounded with one unit's)."""
    units = stream.count.size - 1
    rows, cols = stream.outcome.shape[0], _used_columns(stream.outcome)
    most = []
    for axis, size, damage in ((0, rows, stream.normal_damage), (1, cols, stream.mortal_damage)):
        bound = min(units * (size - 1), _cap(damage, models, wounds))
        if bound > 0:
            from pipeline.engine.exact import _compound  # (exact imports this module where it runs)

            total = _compound(stream.count, stream.outcome[:, :cols].sum(axis=1 - axis))
            tail = np.cumsum(total[::-1])[::-1]  # tail[k] = P(total >= k)
            over = np.flatnonzero(tail[1:] <= TAIL)
            if over.size:
                bound = min(bound, int(over[0]))
        most.append(bound)
    return most[0], most[1]


def _stream(C: np.ndarray, stream: Stream, X: Move, pending: int) -> np.ndarray:
    """The state ``C`` after the unsaved events of ``stream`` (a Horner scheme over its units of
    ``sum_ij outcome[i, j] X^i S^j``), with, when ``pending`` > 0, a new pending axis (before the
    last) of that size counting its devastating events (S moves it on by one; the counts past its
    end are dropped: past the cap, every model destroyed). Each step works on the counts it can
    have reached (j units: at most j x the unit's devastating events)."""
    outcome = stream.outcome[:, : _used_columns(stream.outcome)] if pending else stream.outcome[:, :1]
    rows, cols = outcome.shape
    if pending:
        base = np.zeros(C.shape[:-1] + (pending, C.shape[-1]))
        base[..., 0, :] = C
    else:
        base = C
    count = stream.count
    H = count[-1] * base
    scratch = np.empty_like(base)
    for step, c in enumerate(count[-2::-1], start=1):
        used = min(pending, step * (cols - 1) + 1) if pending else None
        cut = (Ellipsis, slice(0, used), slice(None)) if pending else (Ellipsis,)
        H_u, out = H[cut], np.zeros_like(base)
        acc = None
        for i in range(rows - 1, -1, -1):
            R = out[cut] if i == 0 else np.empty_like(H_u)
            np.multiply(H_u, outcome[i, 0], out=R)
            for j in range(1, cols):
                if outcome[i, j] and j < used:
                    R[..., j:, :] += outcome[i, j] * H_u[..., : used - j, :]
            if i == 0 and c:
                R += c * base[cut]
            if acc is not None:
                X.add_to(R, acc, 1.0, scratch[cut])
            acc = R
        H = out
    return H


def _joint(stream: Stream, most: tuple[int, int]) -> np.ndarray:
    """``J[n, v]``: P(the stream's units make n unsaved and v devastating events in all), for n and v
    up to ``most`` (the mass past them dropped: every model destroyed)."""
    N, V = most
    outcome = stream.outcome[:, : _used_columns(stream.outcome)]
    rows, cols = outcome.shape
    count = stream.count
    J = np.zeros((N + 1, V + 1))
    J[0, 0] = count[-1]
    for c in count[-2::-1]:
        out = np.zeros_like(J)
        for i in range(rows):
            for j in range(cols):
                p = outcome[i, j]
                if p and i <= N and j <= V:
                    out[i:, j:] += p * J[: N + 1 - i, : V + 1 - j]
        out[0, 0] += c
        J = out
    return J


def _horner(R: np.ndarray, Y: Move, axis: int) -> np.ndarray:
    """``sum_v Y^v R[..., v, ...]`` along ``axis`` of ``R`` (Horner's scheme from the last v)."""
    size = R.shape[axis]
    index = (slice(None),) * axis
    h = R[index + (size - 1,)].copy()
    scratch = np.empty_like(h)
    for v in range(size - 2, -1, -1):
        new = R[index + (v,)].copy()
        Y.add_to(new, h, 1.0, scratch)
        h = new
    return h


def _contracted(R: np.ndarray, moves: Sequence[Move]) -> np.ndarray:
    """``R[w, n, v_1, ..., v_k, K]`` with each pending count applied in order: ``sum_v
    D_k^(v_k) ... D_1^(v_1) R[w, n, v, K]``, one Horner scheme along axis 2 for each."""
    for Y in moves:
        R = _horner(R, Y, axis=2)
    return R


def allocate(streams: Sequence[Stream], models: int, wounds: int) -> np.ndarray:
    """The state after every stream's unsaved events (in order), then every stream's devastating
    events (in order): a pmf over ``k * wounds + w`` (k destroyed, w damage on the wounded model)
    and ``models * wounds`` (every model destroyed), as ``kill_counts.allocate`` gives it, for
    ``streams`` that ``applies`` accepts (``ValueError`` otherwise). Exact (no count is cut here).
    Work: ``work``.

    >>> one = Stream(np.array([0.0, 1.0]), np.array([[0.5, 0.25], [0.25, 0.0]]), np.array([0.0, 1.0]),
    ...              np.array([0.0, 0.0, 1.0]))
    >>> from pipeline.engine import kill_counts
    >>> bool(np.allclose(allocate([one, one], 2, 3), kill_counts.allocate([one, one], 2, 3), atol=1e-15))
    True
    """
    if len(streams) < 2 or _used_columns(streams[-1].outcome) == 1:
        raise ValueError("last_expanded.allocate: the last of two or more streams needs devastating events")
    streams = [_without_null_events(s) for s in streams]
    *first, last = streams
    P = np.zeros((wounds, models))
    P[0, 0] = 1.0
    pending_moves = []
    for stream in first:
        pending = _sizes(stream, models, wounds)[1] + 1 if _used_columns(stream.outcome) > 1 else 0
        P = _stream(P, stream, Move(stream.normal_damage, wounds, axis=0), pending)
        if pending:
            pending_moves.append(Move(stream.mortal_damage, wounds, axis=0))
    most = _sizes(last, models, wounds)
    J = _joint(last, most)
    X = Move(last.normal_damage, wounds, axis=0)
    t = np.zeros((wounds, most[1] + 1, models))
    block = max(1, BLOCK_CELLS // P.size)
    current, scratch = P, np.empty_like(P)
    for start in range(0, most[0] + 1, block):
        n_block = min(block, most[0] + 1 - start)
        L = np.empty((wounds, n_block) + P.shape[1:])
        for k in range(n_block):
            L[:, k] = current
            moved = np.zeros_like(current)
            X.add_to(moved, current, 1.0, scratch)
            current = moved
        r = _contracted(L, pending_moves)  # [w, n, K]
        t += np.einsum("wnk,nv->wvk", r, J[start : start + n_block])
    h = _horner(t, Move(last.mortal_damage, wounds, axis=0), axis=1)
    x = np.empty(models * wounds + 1)
    x[:-1] = h.T.reshape(-1)
    x[-1] = max(0.0, 1.0 - float(x[:-1].sum()))
    return x


def work(streams: Sequence[Stream], models: int, wounds: int) -> int:
    """Steps of ``allocate`` (as ``kill_counts.work``: one shifted add on one cell, some 0.4 ns;
    ``1 << 62`` where it does not apply or one model is the target, which ``kill_counts`` takes
    in units x W steps): per stream before the last, its units x the
    cells of the state after it x its moves; for the last, the joint pmf (units x its cells x the
    unit's outcomes), the block moves (counts n x the cells of P x the damage values), the pending
    counts applied (counts n x the cells of each Horner scheme x its damage values), the sum with
    J and the last devastating Horner scheme; and ``CALL_STEPS`` per numpy call of the loops."""
    if not applies(streams) or models == 1:
        return 1 << 62
    streams = [_without_null_events(s) for s in streams]
    *first, last = streams
    cells, total = wounds * models, 0
    pending_sizes, pending_costs = [], []
    for stream in first:
        units, rows, cols = stream.count.size - 1, stream.outcome.shape[0], _used_columns(stream.outcome)
        X = Move(stream.normal_damage, wounds, axis=0)
        if cols > 1:
            size = _sizes(stream, models, wounds)[1] + 1
            cells *= size
            pending_sizes.append(size)
            pending_costs.append(Move(stream.mortal_damage, wounds, axis=0).cost())
        else:
            cols = 1
        total += units * (cells * ((rows - 1) * X.cost() + rows * cols * 2) + rows * cols * 3 * CALL_STEPS)
    units, rows, cols = last.count.size - 1, last.outcome.shape[0], _used_columns(last.outcome)
    N, V = _sizes(last, models, wounds)
    total += units * ((N + 1) * (V + 1) * rows * cols + rows * cols * CALL_STEPS)
    X = Move(last.normal_damage, wounds, axis=0)
    total += (N + 1) * (cells * (X.cost() + 2) + 2 * CALL_STEPS)
    rest = (N + 1) * cells
    for size, cost in zip(pending_sizes, pending_costs):
        blocks = math.ceil((N + 1) / max(1, BLOCK_CELLS // cells))
        total += rest * (cost + 1) + blocks * size * 2 * CALL_STEPS
        rest //= size
    total += (N + 1) * (V + 1) * wounds * models
    total += (V + 1) * (wounds * models * (Move(last.mortal_damage, wounds, axis=0).cost() + 1) + 2 * CALL_STEPS)
    return total
