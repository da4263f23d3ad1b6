"""The attack engine: exact distributions (``exact``), Monte Carlo check (``simulate``).

Public API::

    from pipeline.engine import Context, Target, Weapon, resolve, parse_target, STANDARD_PROFILES
    result = resolve([weapon], STANDARD_PROFILES["MEQ"], Context(half_range=True))
    result.models_destroyed.mean, result.target_destroyed, result.to_dict()
"""

from pipeline.engine import blas  # noqa: F401  (first: it reads the BLAS setting numpy starts with)
from pipeline.engine.exact import EngineInputError, resolve
from pipeline.engine.inputs import STANDARD_PROFILES, parse_target
from pipeline.engine.profiles import Anti, Context, Target, Weapon
from pipeline.engine.result import STAGES, AttackResult, Distribution

__all__ = [
    "STAGES",
    "STANDARD_PROFILES",
    "Anti",
    "AttackResult",
    "Context",
    "Distribution",
    "EngineInputError",
    "Target",
    "Weapon",
    "parse_target",
    "resolve",
]
