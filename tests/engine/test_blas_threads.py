"""The exact engine limits BLAS to one thread while it runs, whatever the program set."""

from unittest import mock

import pytest

from threadpoolctl import threadpool_info, threadpool_limits

from pipeline.engine import exact
from pipeline.engine.profiles import Context, Target, Weapon
from pipeline.normalise.characteristics import dice

DW = Weapon(name="dw", attacks=dice("2"), skill=3, strength=4, armour_penetration=-1, damage=dice("2"),
            models=5, devastating_wounds=True)
MEQ = Target(toughness=4, save=3, wounds=2, models=10)


def _blas_threads() -> set[int]:
    return {lib["num_threads"] for lib in threadpool_info() if lib["user_api"] == "blas"}


def test_blas_is_single_threaded_inside_resolve_and_restored_after():
    seen = []
    chain = exact._chain

    def spy(*args, **kwargs):
        seen.append(_blas_threads())
        return chain(*args, **kwargs)

    with threadpool_limits(limits=2, user_api="blas"):
        before = _blas_threads()
        with mock.patch.object(exact, "_chain", side_effect=spy):
            result = exact.resolve([DW], MEQ, Context())
        after = _blas_threads()
    assert seen == [{1}]
    assert after == before
    assert result.models_destroyed.pmf.sum() == pytest.approx(1.0, abs=1e-12)


def test_blas_limit_restored_when_resolve_raises():
    with threadpool_limits(limits=2, user_api="blas"):
        before = _blas_threads()
        try:
            exact.resolve([], MEQ, Context())
        except exact.EngineInputError:
            pass
        assert _blas_threads() == before


_ONE_THREAD_PROBE = """
import json, sys
from pipeline.engine import exact
from pipeline.engine.blas import one_thread_from_the_start
from pipeline.engine.profiles import Context, Target, Weapon
from pipeline.normalise.characteristics import dice
dw = Weapon(name="dw", attacks=dice("2"), skill=3, strength=4, armour_penetration=-1, damage=dice("2"), models=5,
            devastating_wounds=True)
pmf = exact.resolve([dw], Target(toughness=4, save=3, wounds=2, models=10), Context()).models_destroyed.pmf.tolist()
loaded = "threadpoolctl" in sys.modules
from threadpoolctl import threadpool_info
print(json.dumps([loaded, one_thread_from_the_start(), sorted({lib["num_threads"] for lib in threadpool_info()
                                                              if lib["user_api"] == "blas"}), pmf]))
"""


@pytest.mark.parametrize("threads", ["1", "2"])
def test_one_blas_thread_from_the_environment_needs_no_threadpoolctl(threads):
    import json
    import os
    import subprocess
    import sys

    env = {**os.environ, "OPENBLAS_NUM_THREADS": threads}
    out = subprocess.run([sys.executable, "-c", _ONE_THREAD_PROBE], capture_output=True, text=True, env=env,
                         check=True)
    loaded, from_the_start, blas_threads, pmf = json.loads(out.stdout)
    assert pmf == exact.resolve([DW], MEQ, Context()).models_destroyed.pmf.tolist()
    if threads == "1":  # OpenBLAS started with one thread: nothing limited, threadpoolctl not loaded
        assert (loaded, blas_threads) == (False, [1])
        assert from_the_start is False  # threadpoolctl is loaded now: the limit is checked again
    else:  # two threads: limited for the call by threadpoolctl, the two restored after it
        assert (loaded, from_the_start, blas_threads) == (True, False, [2])
