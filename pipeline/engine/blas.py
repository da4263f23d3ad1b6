"""The BLAS thread limit of the exact engine, set by the library itself.

The engine's matrix products are small (a few hundred states at most): one BLAS thread runs them
fastest, and several threads on a busy machine stall them (3 x 40 Devastating Wounds attacks: 304
ms with OpenBLAS's default threads, 109 ms with one). The command line sets
``OPENBLAS_NUM_THREADS=1`` before numpy loads; a program that imports ``pipeline.engine`` gets the
same speed from ``single_blas_thread``, which limits BLAS to one thread for the duration of an
engine call only (threadpoolctl) and restores the program's own setting afterwards.
"""

from __future__ import annotations

import functools
from typing import Callable, TypeVar

from threadpoolctl import ThreadpoolController

F = TypeVar("F", bound=Callable)

_BLAS = None  # the loaded BLAS libraries (a threadpoolctl selection), found on first use


def _blas():
    global _BLAS
    if _BLAS is None:
        _BLAS = ThreadpoolController().select(user_api="blas")
    return _BLAS


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
        blas = _blas()
        if all(lib.num_threads == 1 for lib in blas.lib_controllers):  # already one thread: ~1 us
            return function(*args, **kwargs)
        with blas.limit(limits=1):
            return function(*args, **kwargs)

    return limited  # type: ignore[return-value]
