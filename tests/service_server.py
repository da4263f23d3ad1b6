"""A real ``wh40k serve`` for the tests: started on 127.0.0.1 on a free port in a subprocess,
waited for, stopped at the end (``served``)."""

from __future__ import annotations

import socket
import subprocess
import sys
import time
from contextlib import contextmanager
from pathlib import Path
from typing import Iterator

import httpx

ROOT = Path(__file__).resolve().parent.parent


def free_port() -> int:
    """A port on 127.0.0.1 that nothing listens on now."""
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


@contextmanager
def served(db: Path, timeout: float = 60.0, extra: list[str] | None = None) -> Iterator[str]:
    """Run ``wh40k serve --db DB`` on a free port of 127.0.0.1 and yield its base URL
    (``http://127.0.0.1:PORT``) once ``/api/info`` answers; stop the server afterwards.
    ``extra``: more options of ``wh40k serve`` (``["--cache", "0"]``)."""
    port = free_port()
    process = subprocess.Popen(
        [sys.executable, "-m", "pipeline.cli", "serve", "--host", "127.0.0.1", "--port", str(port), "--db", str(db), *(extra or [])],
        cwd=ROOT, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    base = f"http://127.0.0.1:{port}"
    try:
        deadline = time.monotonic() + timeout
        while True:
            if process.poll() is not None:
                raise RuntimeError(f"wh40k serve exited with {process.returncode}: {process.stderr.read()}")
            try:
                if httpx.get(f"{base}/api/info", timeout=5).status_code == 200:
                    break
            except httpx.TransportError:
                pass
            if time.monotonic() > deadline:
                raise RuntimeError(f"wh40k serve did not answer on {base} within {timeout} s")
            time.sleep(0.1)
        yield base
    finally:
        process.terminate()
        try:
            process.wait(timeout=10)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait()
        process.stdout.close()
        process.stderr.close()
