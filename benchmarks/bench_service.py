"""Benchmark of ``wh40k serve``: the time of one request over HTTP on 127.0.0.1, under a load
of sequential requests from one keep-alive client.

Run with ``python benchmarks/bench_service.py [DB]`` (``make bench``; DB default
``db/wh40k.duckdb``, or, when it does not exist, a database of the seed snapshots built into a
temporary folder). Prints figures, asserts nothing (STYLE.md 14). A real server is started as
``wh40k serve`` on a free port of 127.0.0.1 and stopped at the end; every request goes to that
address only. The machine's load average is printed with the figures (the machines are shared).

(a) uncached: ``REQUESTS`` distinct units (``GET /api/unit``, each datasheet name once, cycling
    when the database has fewer) and ``REQUESTS`` distinct attacks (``POST /api/attack``:
    attacker x target profile x options, each combination once), every one read from the
    database and resolved by the engine for the first time: median and 95th percentile;
(b) cached: one unit and one attack, the same request ``REQUESTS`` times each (the cache answers);
Each line also gives the server's CPU time per request (from ``/proc``, on Linux): on a
shared machine the wall time stretches with the load, the CPU time much less.

(c) the server's start (the SQLite copy of a DuckDB file: ``pipeline.service.reader``), and
    (a) for ``COLD_DIRECT`` requests with ``--no-copy`` (the DuckDB file read directly);
(d) the reference, in this process with no HTTP: ``answers.unit_answer`` and
    ``engine.service.attack_with`` over the same distinct requests, and the ratio (a)/(d),
    what HTTP and the server add.
"""

from __future__ import annotations

import itertools
import os
import statistics
import sys
import tempfile
import time
from pathlib import Path
from typing import Callable, Iterable

import httpx

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from tests.service_server import served  # noqa: E402

REQUESTS = 1000
COLD_DIRECT = 100
REFERENCE = 100
UNIT = "Battle Sisters Squad"
ATTACK = {"attacker": "Battle Sisters Squad", "target": "MEQ", "half_range": True}
TARGETS = ("GEQ", "MEQ", "TEQ", "VEHICLE", "MONSTER", "T5 Sv4+ W3 x3 inv5+ INFANTRY")
OPTIONS = ({}, {"half_range": True}, {"cover": True}, {"stationary": True}, {"reroll_hits": "ones"},
           {"damaged": True})


def timings(calls: Iterable[Callable[[], int]]) -> tuple[list[float], dict[int, int]]:
    """Wall times of each call, in milliseconds, and the count of each HTTP status returned."""
    out, statuses = [], {}
    for call in calls:
        start = time.perf_counter()
        status = call()
        out.append((time.perf_counter() - start) * 1000)
        statuses[status] = statuses.get(status, 0) + 1
    return out, statuses


def summary(times: list[float], statuses: dict[int, int] | None = None) -> str:
    """``median X ms, p95 Y ms (N requests: status counts)``."""
    p95 = statistics.quantiles(times, n=20)[-1]
    shown = ", ".join(f"{n} x {s}" for s, n in sorted((statuses or {}).items()))
    return f"median {statistics.median(times):7.2f} ms, p95 {p95:7.2f} ms ({len(times)} requests{': ' if shown else ''}{shown})"


def _database(argv: list[str]) -> Path:
    db = Path(argv[1]) if len(argv) > 1 else Path("db/wh40k.duckdb")
    if db.exists():
        return db
    from pipeline.build import build

    built = Path(tempfile.mkdtemp(prefix="bench-service-")) / "seeds.duckdb"
    print(f"{db} does not exist: building the seed snapshots (raw/) into {built}")
    build(Path("raw"), built)
    return built


def distinct_requests(db: Path, n: int) -> tuple[list[str], list[dict]]:
    """``n`` unit names (each distinct datasheet name once, cycling when there are fewer) and
    ``n`` distinct attacks (attackers with a ranged weapon x ``TARGETS`` x ``OPTIONS``)."""
    from pipeline import query

    con = query.open_database(db)
    try:
        names = [r[0] for r in con.execute("SELECT DISTINCT name FROM datasheets ORDER BY name").fetchall()]
        shooters = [r[0] for r in con.execute(
            "SELECT DISTINCT d.name FROM datasheets d JOIN weapon_profiles w USING (datasheet_id) "
            "WHERE NOT w.is_melee ORDER BY d.name").fetchall()]
    finally:
        con.close()
    units = list(itertools.islice(itertools.cycle(names), n))
    combos = itertools.product(OPTIONS, TARGETS, shooters)  # every attacker first, then every target ...
    attacks = [{"attacker": a, "target": t, **o} for o, t, a in itertools.islice(combos, n)]
    return units, attacks


def server_cpu_seconds(base: str) -> Callable[[], float | None]:
    """A function giving the CPU time (user + system, seconds) the server at ``base`` has used:
    read from ``/proc`` (Linux) for the process whose command line has its ``--port``; None
    elsewhere."""
    port = base.rsplit(":", 1)[1]
    pid = None
    for entry in Path("/proc").glob("[0-9]*"):
        try:
            args = (entry / "cmdline").read_bytes().split(b"\0")
        except OSError:
            continue
        if b"serve" in args and b"--port" in args and args[args.index(b"--port") + 1] == port.encode():
            pid = entry.name
    tick = os.sysconf("SC_CLK_TCK") if hasattr(os, "sysconf") else 100

    def used() -> float | None:
        if pid is None:
            return None
        fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
        return (int(fields[11]) + int(fields[12])) / tick
    return used


def _load() -> str:
    one, five, _ = os.getloadavg()
    return f"load average {one:.1f} (1 min), {five:.1f} (5 min) on {os.cpu_count()} cores"


def main(argv: list[str]) -> None:
    db = _database(argv)
    units, attacks = distinct_requests(db, REQUESTS)
    print(f"wh40k serve over {db}: sequential requests from one keep-alive client on 127.0.0.1; {_load()}")
    medians: dict[str, float] = {}
    for label, args, count in (("SQLite copy", [], REQUESTS), ("--no-copy", ["--no-copy"], COLD_DIRECT)):
        start = time.perf_counter()
        with served(db, extra=args, timeout=600) as base, httpx.Client(base_url=base, timeout=60) as client:
            print(f"  server ({label}) answering after {time.perf_counter() - start:.1f} s")
            cpu = server_cpu_seconds(base)

            def unit(name: str) -> Callable[[], int]:
                return lambda: client.get("/api/unit", params={"name": name}).status_code

            def attack(body: dict) -> Callable[[], int]:
                return lambda: client.post("/api/attack", json=body).status_code

            for what, calls in (("one unit", [unit(u) for u in units[:count]]),
                                ("an attack", [attack(a) for a in attacks[:count]])):
                before = cpu()
                times, statuses = timings(calls)
                medians[f"{what} {label}"] = statistics.median(times)
                print(f"  {what:10} (uncached, {label:11}): {summary(times, statuses)}{_cpu(cpu, before, len(calls))}")
            if args:
                continue
            for what, call in (("one unit", unit(UNIT)), ("an attack", attack(ATTACK))):
                call()
                before = cpu()
                times, statuses = timings([call] * REQUESTS)
                print(f"  {what:10} (cached,   {label:11}): {summary(times, statuses)}{_cpu(cpu, before, REQUESTS)}")
    print(f"  {_load()}")
    _reference(db, units, attacks, medians)


def _cpu(cpu: Callable[[], float | None], before: float | None, requests: int) -> str:
    """``; server CPU X ms per request`` (what the load of the machine does not stretch)."""
    after = cpu()
    if before is None or after is None:
        return ""
    return f"; server CPU {1000 * (after - before) / requests:.2f} ms per request"


def _reference(db: Path, units: list[str], attacks: list[dict], medians: dict[str, float]) -> None:
    """(d): the answers in this process, without HTTP, over the DuckDB file and its SQLite copy."""
    from pipeline.engine.service import attack_with
    from pipeline.errors import Wh40kError
    from pipeline.service.answers import unit_answer
    from pipeline.service.app import AttackBody
    from pipeline.service.reader import Database

    def ok(call: Callable[[], object]) -> Callable[[], int]:
        def run() -> int:
            try:
                call()
            except Wh40kError:
                return 4
            return 2
        return run

    for label, copy in (("SQLite copy", True), ("--no-copy", False)):
        database = Database(db, cache_size=0, copy=copy)
        with database.reading() as con:
            for what, calls in (
                    ("one unit", [ok(lambda u=u: unit_answer(con, u)) for u in units[:REFERENCE]]),
                    ("an attack", [ok(lambda a=a: attack_with(con, AttackBody(**a).request(), explain=False))
                                   for a in attacks[:REFERENCE]])):
                times, _ = timings(calls)
                reference = statistics.median(times)
                print(f"  {what:10} (in process, no HTTP, {label:11}): median {reference:7.2f} ms; over HTTP "
                      f"x{medians[f'{what} {label}'] / reference:.2f}")
        database.close()


if __name__ == "__main__":
    main(sys.argv)
