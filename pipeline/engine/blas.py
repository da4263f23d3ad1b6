"""The BLAS thread limit of the exact engine, set by the library itself.

The engine's matrix products are small (a few hundred states at most): one BLAS thread runs them
fastest, and several threads on a busy machine stall them (3 x 40 Devastating Wounds attacks: 304
ms with OpenBLAS's default threads, 109 ms with one). The command line sets
``OPENBLAS_NUM_THREADS=1`` before numpy loads; a program that imports ``pipeline.engine`` gets the
same speed from ``single_blas_thread``, which limits BLAS to one thread for the duration of an
engine call only (threadpoolctl) and restores the program's own setting afterwards.

When the environment gave OpenBLAS one thread before numpy loaded (``OPENBLAS_NUM_THREADS=1``
when this module is imported, numpy not yet: ``pipeline.engine`` imports it first) and numpy's
BLAS is OpenBLAS, BLAS runs one thread from its start, and as long as no program has loaded
threadpoolctl (the one way to change it at run time) there is nothing to limit: an engine
call then loads no threadpoolctl (its import and its search of the loaded libraries, some 10
ms of a command's start).
"""

from __future__ import annotations

import functools
import os
import sys
from typing import Callable, TypeVar

F = TypeVar("F", bound=Callable)

_BLAS = None  # the loaded BLAS libraries (a threadpoolctl selection), found on first use

#: Whether OpenBLAS was told to run one thread before numpy (and so OpenBLAS) was loaded.
_ONE_THREAD_BEFORE_NUMPY = "numpy" not in sys.modules and os.environ.get("OPENBLAS_NUM_THREADS") == "1"


def _blas():
    global _BLAS
    if _BLAS is None:
        from threadpoolctl import ThreadpoolController

        _BLAS = ThreadpoolController().select(user_api="blas")
    return _BLAS


@functools.lru_cache(maxsize=1)
def _numpy_blas_is_openblas() -> bool:
    """Whether numpy was built with OpenBLAS (its build configuration: ``openblas`` or
    ``scipy-openblas``), the BLAS that ``OPENBLAS_NUM_THREADS`` sets."""
    import numpy

    try:
        name = numpy.__config__.CONFIG["Build Dependencies"]["blas"]["name"]
    except (AttributeError, KeyError, TypeError):
        return False
    return "openblas" in str(name).lower()


def one_thread_from_the_start() -> bool:
    """Whether BLAS runs one thread without being limited: OpenBLAS started with
    ``OPENBLAS_NUM_THREADS=1`` (set before numpy loaded) and threadpoolctl, the one way to
    change that while the program runs, not loaded."""
    return _ONE_THREAD_BEFORE_NUMPY and "threadpoolctl" not in sys.modules and _numpy_blas_is_openblas()


def single_blas_thread(function: F) -> F:
    """``function`` run with BLAS limited to one thread (the previous limits restored after it,
    also when it raises). Nested calls keep the limit; about 0.05 ms per call, or about 1 us when
    BLAS already runs one thread (``OPENBLAS_NUM_THREADS=1``, the command line, a nested call).

    >>> from threadpoolctl import threadpool_info
    >>> @single_blas_thread
    ... def threads():
    ...     return {lib["num_threads"] for lib in threadpool_info() if lib["user_api"] == "blas"}
    >>> threads() <= {1}
    True
    """

    @functools.wraps(function)
    def limited(*args, **kwargs):
        if one_thread_from_the_start():  # no threadpoolctl: ~1 us
            return function(*args, **kwargs)
        blas = _blas()
        if all(lib.num_threads == 1 for lib in blas.lib_controllers):  # already one thread: ~1 us
            return function(*args, **kwargs)
        with blas.limit(limits=1):
            return function(*args, **kwargs)

    return limited  # type: ignore[return-value]
