"""What a build stopped by a signal leaves behind, in each phase: prints a Markdown table.

Usage: python benchmarks/kill_build.py [RAW] [WORKDIR]   (RAW: default raw; a full raw folder,
after `wh40k fetch --mirror ../shared/corpus`, gives phases long enough to land in)

For each phase (parse, load, rename) and signal (SIGINT, SIGTERM, SIGKILL) it builds over a copy
of a good database, sends the signal to the build's process when the phase is under way, and
reports the exit status, the last line on stderr, whether the database file is the old one, the
new one or gone, the temporary files left beside it, processes of the build still running, and
what the next build said about the leftovers. The phases are told by the build's progress lines
on stderr: 1 s after "read manifest" (parse), 0.3 s after "loading" (load); for "rename" the child wraps os.replace so
that it pauses just after renaming the new database into place (the window is otherwise a few
microseconds wide). A measurement, not a test: nothing is asserted.
"""

from __future__ import annotations

import os
import shutil
import signal
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
PHASES = {"parse": "read manifest", "load": "loading ", "rename": "renamed into place"}
DELAY_SECONDS = {"parse": 1.0, "load": 0.3, "rename": 0.0}
SIGNALS = (signal.SIGINT, signal.SIGTERM, signal.SIGKILL)


def child(raw: str, db: str) -> None:
    """The build, with a pause right after the rename of the new database (phase "rename")."""
    real_replace = os.replace

    def replace_then_pause(src, dst):  # type: ignore[no-untyped-def]
        real_replace(src, dst)
        if str(dst) == db:
            print("renamed into place", file=sys.stderr, flush=True)
            time.sleep(30)

    os.replace = replace_then_pause  # type: ignore[assignment]
    sys.argv = ["wh40k", "build", "--raw", raw, "--db", db]
    from pipeline.cli import main

    main()


def identity(path: Path) -> tuple[int, int] | None:
    try:
        st = path.stat()
    except FileNotFoundError:
        return None
    return st.st_ino, st.st_mtime_ns


def run(raw: Path, work: Path, good: Path, phase: str, sig: signal.Signals) -> dict[str, str]:
    db = work / "wh40k.duckdb"
    for p in work.iterdir():
        p.unlink()
    shutil.copy2(good, db)
    before = identity(db)
    command = [sys.executable, __file__, "--child", str(raw), str(db)] if phase == "rename" else [
        sys.executable, "-m", "pipeline.cli", "build", "--raw", str(raw), "--db", str(db)]
    log_path = work.parent / f"{work.name}-stderr.log"
    with log_path.open("w") as log:  # a file, not a pipe: a process left behind must not hold us
        # SIGINT at its default even when this script runs in the background (which ignores it)
        proc = subprocess.Popen(command, cwd=ROOT, stderr=log, text=True, start_new_session=True,
                                preexec_fn=lambda: signal.signal(signal.SIGINT, signal.SIG_DFL))
    for _ in range(6000):  # at most 10 minutes
        if PHASES[phase] in log_path.read_text() or proc.poll() is not None:
            break
        time.sleep(0.1)
    if proc.poll() is None:
        time.sleep(DELAY_SECONDS[phase])
        os.kill(proc.pid, sig)
    status = proc.wait()
    lines = log_path.read_text().splitlines()
    log_path.unlink()
    time.sleep(5.0)  # time for a worker to end on its own
    try:
        os.killpg(proc.pid, 0)
        alive = "yes, 5 s later"
        os.killpg(proc.pid, signal.SIGKILL)
    except ProcessLookupError:
        alive = "no"
    after = identity(db)
    state = "old" if after == before else "gone" if after is None else "new"
    left = sorted(p.name for p in work.iterdir() if p.name != db.name)
    shown_left = ", ".join(n.replace(str(proc.pid), "PID") for n in left) or "none"
    again = subprocess.run([sys.executable, "-m", "pipeline.cli", "build", "--raw", str(raw), "--db", str(db),
                            "--allow-shrink"], cwd=ROOT, capture_output=True, text=True)
    removed = [line for line in again.stderr.splitlines() if line.startswith("removed ")]
    still = sorted(p.name for p in work.iterdir() if p.name != db.name)
    return {
        "phase": phase, "signal": sig.name, "exit": str(-status if status < 0 else status),
        "message": (lines[-1] if lines else "").replace(str(db), "DB"), "database": state,
        "temporary files left": shown_left, "processes left": alive,
        "next build": f"removed {len(removed)}, {len(still)} left" if left else "-",
    }


def main() -> None:
    if sys.argv[1:2] == ["--child"]:
        child(sys.argv[2], sys.argv[3])
        return
    raw = Path(sys.argv[1] if len(sys.argv) > 1 else ROOT / "raw").resolve()
    work = Path(sys.argv[2] if len(sys.argv) > 2 else tempfile.mkdtemp(prefix="kill-build-")).resolve()
    work.mkdir(parents=True, exist_ok=True)
    good = work.parent / f"{work.name}-good.duckdb"
    subprocess.run([sys.executable, "-m", "pipeline.cli", "build", "-q", "--raw", str(raw), "--db", str(good)],
                   cwd=ROOT, check=True)
    rows = [run(raw, work, good, phase, sig) for phase in PHASES for sig in SIGNALS]
    columns = list(rows[0])
    print("| " + " | ".join(columns) + " |")
    print("|" + "---|" * len(columns))
    for row in rows:
        print("| " + " | ".join(row[c] for c in columns) + " |")
    good.unlink()
    shutil.rmtree(work)


if __name__ == "__main__":
    main()
