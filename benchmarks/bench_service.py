"""Benchmark of ``wh40k serve``: the time of one request over HTTP on 127.0.0.1, under a load
of sequential requests from one keep-alive client.

Run with ``python benchmarks/bench_service.py [DB]`` (``make bench``; DB default
``db/wh40k.duckdb``, or, when it does not exist, a database of the seed snapshots built into a
temporary folder). Prints figures, asserts nothing (STYLE.md 14). A real server is started as
``wh40k serve`` on a free port of 127.0.0.1 (twice: with its cache of answers, and with
``--cache 0``) and stopped at the end; every request goes to that address only.

(a) one unit (``GET /api/unit``) and one attack (``POST /api/attack``), the same request
    ``REPEATS`` times each after a warm-up: median and 95th percentile (the cache answers);
(b) the same with ``--cache 0``, ``COLD_REPEATS`` times each: every request read from the
    database and resolved by the engine (the wordings of the rules an attack's steps name are
    still looked up once per database: ``Database.wordings``);
(c) the reference, in this process with no HTTP: ``answers.unit_answer`` and
    ``engine.service.attack_with`` (with ``explain``) on an open connection, and the ratio
    (b)/(c), what HTTP and the server add.
"""

from __future__ import annotations

import statistics
import sys
import tempfile
import time
from pathlib import Path
from typing import Callable

import httpx

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from tests.service_server import served  # noqa: E402

REPEATS = 1000
COLD_REPEATS = 100
UNIT = "Battle Sisters Squad"
ATTACK = {"attacker": "Battle Sisters Squad", "target": "MEQ", "half_range": True}


def timings(call: Callable[[], object], repeats: int) -> list[float]:
    """Wall times of ``repeats`` calls of ``call`` (after one warm-up call), in milliseconds."""
    call()
    out = []
    for _ in range(repeats):
        start = time.perf_counter()
        call()
        out.append((time.perf_counter() - start) * 1000)
    return out


def summary(times: list[float]) -> str:
    """``median X ms, p95 Y ms (N requests)``."""
    p95 = statistics.quantiles(times, n=20)[-1]
    return f"median {statistics.median(times):7.2f} ms, p95 {p95:7.2f} ms ({len(times)} requests)"


def _database(argv: list[str]) -> Path:
    db = Path(argv[1]) if len(argv) > 1 else Path("db/wh40k.duckdb")
    if db.exists():
        return db
    from pipeline.build import build

    built = Path(tempfile.mkdtemp(prefix="bench-service-")) / "seeds.duckdb"
    print(f"{db} does not exist: building the seed snapshots (raw/) into {built}")
    build(Path("raw"), built)
    return built


def main(argv: list[str]) -> None:
    db = _database(argv)
    print(f"wh40k serve over {db}: sequential requests from one keep-alive client on 127.0.0.1")
    medians: dict[str, float] = {}
    for label, args in (("cached", []), ("--cache 0", ["--cache", "0"])):
        repeats = REPEATS if not args else COLD_REPEATS
        with served(db, extra=args) as base, httpx.Client(base_url=base, timeout=60) as client:
            def unit() -> None:
                client.get("/api/unit", params={"name": UNIT}).raise_for_status()

            def attack() -> None:
                client.post("/api/attack", json=ATTACK).raise_for_status()

            for what, call in (("one unit", unit), ("an attack", attack)):
                times = timings(call, repeats)
                medians[f"{what} {label}"] = statistics.median(times)
                print(f"  {what:10} ({label:9}): {summary(times)}")

    from pipeline import query
    from pipeline.engine.service import AttackRequest, attack_with
    from pipeline.engine.profiles import Context
    from pipeline.service.answers import unit_answer

    con = query.open_database(db)
    request = AttackRequest(attacker=ATTACK["attacker"], target=ATTACK["target"], context=Context(half_range=True))
    for what, call in (("one unit", lambda: unit_answer(con, UNIT)),
                       ("an attack", lambda: attack_with(con, request))):
        times = timings(call, COLD_REPEATS // 4)
        reference = statistics.median(times)
        print(f"  {what:10} (in process, no HTTP, no cache): median {reference:7.2f} ms; "
              f"over HTTP with --cache 0 it is x{medians[f'{what} --cache 0'] / reference:.2f}")
    con.close()


if __name__ == "__main__":
    main(sys.argv)
