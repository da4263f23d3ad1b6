"""One function run ahead in a forked process while the caller goes on (the build's second core).

``ForkedCall.start(work)`` forks a process that runs ``work()`` on its copy of the caller's memory
(nothing is sent to it) and sends the value back through a pipe; ``result()`` waits for it. Only
a matter of speed: when the work cannot run there (no fork, ``WH40K_JOBS=1``: see
``pipeline.normalise.text.background_jobs``) or the process dies, ``result()`` is None and the
caller does the work itself.
"""

from __future__ import annotations

import os
import signal
import sys
import threading
import time
from typing import Any, Callable, Generic, TypeVar

from pipeline.normalise.text import background_jobs

T = TypeVar("T")


def can_fork() -> bool:
    """Whether the build may run work in a second process: ``background_jobs()`` is 2 or more,
    and fork is available and safe (Linux only)."""
    import multiprocessing

    return background_jobs() >= 2 and sys.platform == "linux" and "fork" in multiprocessing.get_all_start_methods()


def end_with_caller(caller: int, cleanup: Callable[[], None] = lambda: None, every: float = 0.25) -> None:
    """In a forked process: end it (``cleanup()``, then ``os._exit(0)``) once its caller, process
    ``caller`` (its id taken before the fork), is gone (killed: the process's parent changes),
    checked every ``every`` seconds by a thread of its own, whatever the process is doing then
    (blocked on a pipe another process holds open, on a lock the caller held, importing)."""
    def watch() -> None:
        while os.getppid() == caller:
            time.sleep(every)
        try:
            cleanup()
        finally:
            os._exit(0)

    threading.Thread(target=watch, name="end-with-caller", daemon=True).start()


def _run(work: Callable[[], Any], sender: Any, receiver: Any, caller: int) -> None:
    """The forked process: run ``work`` and send its value. Ctrl-C is the caller's to handle; a
    caller that is gone (killed) closes the pipe and the send fails, or the process ends as it
    notices (``end_with_caller``): then exit quietly."""
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    end_with_caller(caller)
    receiver.close()  # this process's copy: when the caller dies, nobody holds the reading end
    try:
        sender.send(work())
    except OSError:
        pass
    finally:
        sender.close()


class ForkedCall(Generic[T]):
    """``work()`` running in a forked process: ``result()`` is its value (None when the process
    died before sending it), ``abort()`` stops it. Use ``start``, which returns None where
    there is no second process to run it."""

    def __init__(self, work: Callable[[], T]) -> None:
        import multiprocessing  # the build's alone: readers of the database never load it

        context = multiprocessing.get_context("fork")
        self._receiver, sender = context.Pipe(duplex=False)
        self._process = context.Process(target=_run, args=(work, sender, self._receiver, os.getpid()), daemon=True)
        self._process.start()
        sender.close()  # the process holds the sending end: at its end, the pipe ends

    @classmethod
    def start(cls, work: Callable[[], T]) -> ForkedCall[T] | None:
        """Fork a process running ``work``; None where ``can_fork()`` is false or the fork fails."""
        if not can_fork():
            return None
        try:
            return cls(work)
        except OSError:
            return None

    def result(self) -> T | None:
        """The value of ``work()``, waiting for it; None when the process ended without sending it."""
        try:
            while not self._receiver.poll(1.0):
                if not self._process.is_alive() and not self._receiver.poll(0):
                    return None
            return self._receiver.recv()  # type: ignore[no-any-return]
        except (EOFError, OSError):
            return None
        finally:
            self._finish()

    def abort(self) -> None:
        """Stop the process at once (after an error or Ctrl-C): nothing more is read from it."""
        if self._process.is_alive():
            self._process.kill()
        self._finish()

    def _finish(self) -> None:
        self._receiver.close()
        self._process.join(timeout=5)
        if self._process.is_alive():
            self._process.kill()
            self._process.join(timeout=5)

