"""The allocation chain against the values of the engine before it was made linear.

``data/chain_reference.json`` holds 166 attacks (one to four weapons, most with Devastating
Wounds, Sustained Hits, Lethal Hits, Feel No Pain, both editions) and the results the engine
gave for them when Devastating Wounds still built the dense joint count matrices (commit
``a5286ef``). It was written by

    .venv/bin/python tests/engine/data/make_chain_reference.py

and the engine must still give the same distributions of models destroyed to 1e-12 (absolute,
per count), the same P(unit destroyed) and the same expected damage.
"""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest

from pipeline.engine.exact import resolve
from pipeline.engine.profiles import Context, Target
from tests.engine.data.make_chain_reference import weapon_from

CASES = json.loads((Path(__file__).resolve().parent / "data" / "chain_reference.json").read_text())
TOLERANCE = 1e-12


def test_the_file_covers_several_devastating_weapons():
    devastating = [sum(w.get("devastating_wounds", False) for w in case["weapons"]) for case in CASES]
    assert len(CASES) == 166
    assert devastating.count(0) >= 5 and devastating.count(2) >= 20 and devastating.count(3) >= 5


@pytest.mark.parametrize("index", range(len(CASES)))
def test_models_destroyed_equal_the_old_engine(index):
    case = CASES[index]
    result = resolve([weapon_from(w) for w in case["weapons"]], Target(**case["target"]), Context(**case["context"]))
    want = np.array(case["models_destroyed"])
    got = result.models_destroyed.pmf
    assert got.size == want.size
    assert np.max(np.abs(got - want)) <= TOLERANCE, (got - want).tolist()
    assert abs(result.target_destroyed - case["target_destroyed"]) <= TOLERANCE
    assert abs(result.damage.mean - case["damage_mean"]) <= TOLERANCE * max(1.0, case["damage_mean"])
