"""The result of an attack: one probability distribution per stage, plus the unit-level figures.

Both the exact engine (``pipeline.engine.exact``) and the Monte Carlo simulator
(``pipeline.engine.simulate``) return an ``AttackResult``; the CLI renders it and
``AttackResult.to_dict`` gives its JSON form.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

import numpy as np

#: The stages of an ``AttackResult`` in the order of the attack sequence.
STAGES: tuple[str, ...] = (
    "attacks",
    "hits",
    "wounds",
    "unsaved",
    "mortal_wounds",
    "damage",
    "models_destroyed",
)

_SUM_TOLERANCE = 1e-6


@dataclass(frozen=True)
class Distribution:
    """The probability distribution of a count (attacks, hits, damage points, models).

    ``pmf[k]`` is the probability that the count is exactly ``k`` (a 1-D float64 array, index =
    count, summing to 1; read-only). Build one with ``Distribution(pmf)`` from any sequence.

    >>> d = Distribution([0.25, 0.5, 0.25])
    >>> d.mean, d.at_least(1), d.percentile(0.5)
    (1.0, 0.75, 1)

    Raises ``ValueError`` for an empty, non 1-D or negative array, or one that does not sum to 1
    (within 1e-6).
    """

    pmf: np.ndarray

    def __post_init__(self) -> None:
        pmf = np.array(self.pmf, dtype=np.float64)
        if pmf.ndim != 1 or pmf.size == 0:
            raise ValueError(f"a distribution needs a non-empty 1-D pmf, got shape {pmf.shape}")
        if not np.all(np.isfinite(pmf)) or pmf.min() < -1e-12:
            raise ValueError("a distribution's probabilities must be finite and non-negative")
        total = float(pmf.sum())
        if abs(total - 1.0) > _SUM_TOLERANCE:
            raise ValueError(f"a distribution's probabilities must sum to 1, got {total!r}")
        pmf = np.clip(pmf, 0.0, None)
        pmf.flags.writeable = False
        object.__setattr__(self, "pmf", pmf)

    @classmethod
    def normalised(cls, pmf: np.ndarray) -> "Distribution":
        """The distribution of a float64 pmf the engine built (non-negative, summing to 1 up to
        rounding): taken as it is, without the checks of ``Distribution(pmf)``, made read-only.

        >>> Distribution.normalised(np.array([0.5, 0.5])).mean
        0.5
        """
        pmf.flags.writeable = False
        out = object.__new__(cls)
        object.__setattr__(out, "pmf", pmf)
        return out

    @classmethod
    def point(cls, value: int) -> "Distribution":
        """The distribution that is ``value`` with certainty.

        >>> Distribution.point(2).pmf.tolist()
        [0.0, 0.0, 1.0]
        """
        if value < 0:
            raise ValueError(f"a count is never negative, got {value}")
        pmf = np.zeros(value + 1)
        pmf[value] = 1.0
        return cls(pmf)

    @property
    def mean(self) -> float:
        """Expected value, in the count's unit."""
        return float(np.dot(np.arange(self.pmf.size), self.pmf))

    @property
    def variance(self) -> float:
        """Variance, in the count's unit squared."""
        k = np.arange(self.pmf.size)
        return float(np.dot((k - self.mean) ** 2, self.pmf))

    @property
    def maximum(self) -> int:
        """The largest count with a non-zero probability."""
        nonzero = np.nonzero(self.pmf)[0]
        return int(nonzero[-1]) if nonzero.size else 0

    def at_least(self, k: int) -> float:
        """P(count >= k); 1.0 for k <= 0.

        >>> Distribution([0.5, 0.5]).at_least(1)
        0.5
        """
        if k <= 0:
            return 1.0
        return float(self.pmf[k:].sum())

    def percentile(self, q: float) -> int:
        """The smallest count ``k`` with P(count <= k) >= q, for a probability ``q`` in [0, 1]
        (0.5 is the median).

        >>> d = Distribution([0.1, 0.2, 0.7])
        >>> d.percentile(0.25), d.percentile(0.5), d.percentile(0.9)
        (1, 2, 2)

        Raises ``ValueError`` for q outside [0, 1].
        """
        if not 0 <= q <= 1:
            raise ValueError(f"a percentile is a probability between 0 and 1 (0.5 = median), got {q!r}")
        cdf = np.cumsum(self.pmf)
        index = int(np.searchsorted(cdf, q - 1e-12, side="left"))
        return min(index, self.pmf.size - 1)

    def to_dict(self) -> dict[str, Any]:
        """JSON-ready ``{"mean": float, "pmf": [float, ...]}`` (trailing zeros dropped)."""
        return {"mean": self.mean, "pmf": self.pmf[: self.maximum + 1].tolist()}

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, Distribution):
            return NotImplemented
        return bool(np.array_equal(self.pmf, other.pmf))


@dataclass(frozen=True)
class Step:
    """One step of an attack's resolution, for ``--explain``: which rule was applied and what it did.

    ``rule_key``: the canonical key of the rule (``pipeline.aliases``: the slug of its
    11th-edition name, such as ``benefit-of-cover``, ``lethal-hits``, ``save-rolls``;
    ``pipeline.engine.exact.RULE_KEYS`` lists the keys the exact engine emits), so the wording
    for the attack's edition (source, section) can be looked up in the database.
    ``summary``: what was applied to which weapon, with numbers, e.g.
    ``"Boltgun: BS3+ worsened to 4+ (benefit of cover, 11th edition)"``.

    >>> Step("stealth", "target: -1 to the hit roll").to_dict()
    {'rule_key': 'stealth', 'summary': 'target: -1 to the hit roll'}
    """

    rule_key: str
    summary: str

    def to_dict(self) -> dict[str, str]:
        """JSON-ready ``{"rule_key": str, "summary": str}``."""
        return {"rule_key": self.rule_key, "summary": self.summary}


@dataclass(frozen=True)
class AttackResult:
    """What one attacking unit's weapons do to one target unit, stage by stage.

    Each stage is a ``Distribution`` over the whole unit (all weapons), summed over weapons:

    - ``attacks``: attacks made (Attacks characteristics of every model, plus Rapid Fire and Blast);
    - ``hits``: successful hits, counting Critical Hits and the extra hits of Sustained Hits;
    - ``wounds``: successful wounds: normal and Critical Wounds plus Lethal Hits automatic wounds;
    - ``unsaved``: wounds that fail their saving throw (Devastating Wounds critical wounds are not
      counted here: they get no save and are counted in ``mortal_wounds``);
    - ``mortal_wounds``: mortal wounds inflicted by Devastating Wounds (points, after damage
      modifiers, before Feel No Pain);
    - ``damage``: total damage points after damage modifiers and Feel No Pain, summed over all
      events, before excess damage is lost (so it may exceed the wounds the target has left);
    - ``models_destroyed``: target models destroyed, with excess damage lost per model.

    ``target_destroyed``: probability that every target model is destroyed.
    ``hazardous_mortal_wounds``: the expected number of mortal wounds the ATTACKING unit suffers
    from its [HAZARDOUS] weapons, under the rule of the attack's edition (see
    ``pipeline.engine.exact``: 10th edition, one Hazardous test per Hazardous weapon per model
    firing it, failing on a 1, each failure 3 mortal wounds; 11th edition, one hazard roll per
    [HAZARDOUS] weapon selected, failing on a 1-2, each failure 1 mortal wound, 3 if every
    model of the unit is a MONSTER/VEHICLE). The expected failed tests are in ``notes``.
    ``hazardous_models_destroyed``: the expected attacking models destroyed outright by failed
    Hazardous tests (not through mortal wounds). Neither edition's current rule destroys a model
    outright, so the exact engine reports 0.0; the field is kept for the 10th edition's original
    wording (one model destroyed unless it is a CHARACTER, MONSTER or VEHICLE).
    ``notes``: the summary of each step, in order (``steps``' summaries; kept for callers that
    read plain text).
    ``steps``: each rule applied, in order, with its canonical rule key (for ``--explain``).
    ``choices``: decisions the engine took for the attacker (re-roll policies, and in the 11th
    edition the Lethal Hits choice and the Anti ability that applies), JSON-ready.
    """

    attacks: Distribution
    hits: Distribution
    wounds: Distribution
    unsaved: Distribution
    mortal_wounds: Distribution
    damage: Distribution
    models_destroyed: Distribution
    target_destroyed: float
    hazardous_mortal_wounds: float = 0.0
    notes: tuple[str, ...] = ()
    choices: dict[str, Any] = field(default_factory=dict)
    hazardous_models_destroyed: float = 0.0
    steps: tuple[Step, ...] = ()

    def stage(self, name: str) -> Distribution:
        """The distribution of one stage by name (one of ``STAGES``); ``KeyError`` otherwise."""
        if name not in STAGES:
            raise KeyError(f"unknown stage {name!r}; stages are {', '.join(STAGES)}")
        return getattr(self, name)

    def to_dict(self) -> dict[str, Any]:
        """JSON-ready form: ``{stage: {"mean": float, "pmf": [...]}, ..., "target_destroyed": p,
        "hazardous_mortal_wounds": x, "hazardous_models_destroyed": y, "notes": [...],
        "steps": [{"rule_key": ..., "summary": ...}, ...], "choices": {...}}``."""
        out: dict[str, Any] = {name: self.stage(name).to_dict() for name in STAGES}
        out["target_destroyed"] = float(self.target_destroyed)
        out["hazardous_mortal_wounds"] = float(self.hazardous_mortal_wounds)
        out["hazardous_models_destroyed"] = float(self.hazardous_models_destroyed)
        out["notes"] = list(self.notes)
        out["steps"] = [step.to_dict() for step in self.steps]
        out["choices"] = self.choices
        return out
