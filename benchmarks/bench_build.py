"""Benchmark of the build: the full Wahapedia 10th-edition export against a bare DuckDB load,
then the full build of every source.

Run with ``python benchmarks/bench_build.py [EXPORT_DIR]`` (``make bench``; default: the corpus
beside the checkout, ``../shared/corpus/wahapedia-10e``). Prints figures, asserts nothing:

- reference: DuckDB ``read_csv`` of the same 20 files into tables (all columns as text), in a
  subprocess, wall time and peak memory (each figure the median of ``RUNS`` runs, the
  reference and the build taken in turns);
- the project's build of a raw folder holding only that export (parse, validate, merge, load),
  in a subprocess, wall time and peak memory;
- the ratio of the two times;
- the same build with the compiled modules kept (``PYTHONPYCACHEPREFIX``, a temporary folder,
  filled by one run first), as on a user's machine, where Python writes bytecode: the figures
  above are with bytecode written or not as this environment says (``PYTHONDONTWRITEBYTECODE``
  set: Python writes none, and uses what ``make venv`` compiled, ``compileall``, for the modules
  not changed since), and the bench says which, with the modules whose bytecode is current;
- the full build: a copy of ``raw/`` with every source brought by ``wh40k fetch --mirror`` of the
  corpus folder (the export's parent), once: wall time, peak memory, and the time of each source's
  parse, slowest first, with the merge and the load.
"""

from __future__ import annotations

import importlib.util
import json
import os
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
#: Runs of the reference and of the build, taken in turns; the medians are printed.
RUNS = 5

_BARE_LOAD = """
import sys, duckdb, pathlib
con = duckdb.connect(sys.argv[2])
for path in sorted(pathlib.Path(sys.argv[1]).glob("*.csv")):
    con.execute(
        f"CREATE TABLE \\"{path.stem}\\" AS SELECT * FROM read_csv(?, delim='|', header=true, "
        "all_varchar=true, quote='', escape='', null_padding=true, strict_mode=false)",
        [str(path)],
    )
con.close()
"""


_MEASURE = (
    "import resource, subprocess, sys; subprocess.run(sys.argv[1:], check=True, stdout=subprocess.DEVNULL);"
    "print(resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss)"
)


def run_measured(args: list[str], env: dict[str, str] | None = None) -> tuple[float, float]:
    """Run a command in a fresh subprocess; return (wall seconds, its peak resident memory in MiB)."""
    start = time.perf_counter()
    out = subprocess.run([sys.executable, "-c", _MEASURE, *args], check=True, capture_output=True,
                         text=True, cwd=ROOT, env=env)
    elapsed = time.perf_counter() - start
    return elapsed, int(out.stdout.strip().splitlines()[-1]) / 1024


def main() -> None:
    export = Path(sys.argv[1]) if len(sys.argv) > 1 else ROOT.parent / "shared" / "corpus" / "wahapedia-10e"
    if not export.exists():
        print(f"{export} not found: pass the folder of the Wahapedia export")
        return
    with tempfile.TemporaryDirectory() as tmp:
        tmp_path = Path(tmp)
        raw = tmp_path / "raw"
        shutil.copytree(export, raw / "wahapedia-10e", ignore=shutil.ignore_patterns("*.xlsx"))
        (raw / "manifest.toml").write_text(
            '[[source]]\nid = "wahapedia-10e-export"\nfile = "wahapedia-10e/"\nformat = "wahapedia-csv"\n'
            'title = "Wahapedia export"\npublisher = "Wahapedia"\nedition = 10\nkind = "export"\n'
            'origin = "benchmark copy"\n',
            encoding="utf-8",
        )
        bare, build = [], []
        for i in range(RUNS):
            bare.append(run_measured([sys.executable, "-c", _BARE_LOAD, str(raw / "wahapedia-10e"),
                                      str(tmp_path / f"bare{i}.duckdb")]))
            build.append(run_measured([sys.executable, "-m", "pipeline.cli", "build", "-q",
                                       "--raw", str(raw), "--db", str(tmp_path / f"build{i}.duckdb")]))
        bare_s, bare_mb = sorted(bare)[RUNS // 2]
        build_s, build_mb = sorted(build)[RUNS // 2]
        cached_env = {k: v for k, v in os.environ.items() if k != "PYTHONDONTWRITEBYTECODE"}
        cached_env["PYTHONPYCACHEPREFIX"] = str(tmp_path / "pycache")
        cached = [run_measured([sys.executable, "-m", "pipeline.cli", "build", "-q", "--raw", str(raw),
                                "--db", str(tmp_path / f"cached{i}.duckdb")], cached_env) for i in range(RUNS + 1)][1:]
        cached_s, cached_mb = sorted(cached)[RUNS // 2]
        current, total = compiled_modules()
        bytecode = (f"not written by Python (PYTHONDONTWRITEBYTECODE is set): {current} of the project's {total} "
                    "modules compiled beforehand (make venv), the others compiled again by each run"
                    if os.environ.get("PYTHONDONTWRITEBYTECODE") else "written and kept as Python does by default")
        print(f"Full Wahapedia 10th-edition export (20 tables), median of {RUNS} runs, each in a fresh process")
        print(f"  reference: DuckDB read_csv of the 20 files   {bare_s:6.2f} s   peak {bare_mb:6.0f} MiB")
        print(f"  wh40k build (parse, validate, load)         {build_s:6.2f} s   peak {build_mb:6.0f} MiB")
        print(f"  ratio build / reference                     {build_s / bare_s:6.1f} x   (bytecode {bytecode})")
        print(f"  the same build, compiled modules kept       {cached_s:6.2f} s   peak {cached_mb:6.0f} MiB   "
              f"ratio {cached_s / bare_s:4.1f} x")
        print(json.dumps({"reference_s": round(bare_s, 3), "build_s": round(build_s, 3),
                          "ratio": round(build_s / bare_s, 2), "build_peak_mib": round(build_mb),
                          "reference_peak_mib": round(bare_mb), "build_bytecode_kept_s": round(cached_s, 3),
                          "ratio_bytecode_kept": round(cached_s / bare_s, 2),
                          "bytecode_written": not os.environ.get("PYTHONDONTWRITEBYTECODE"),
                          "modules_compiled": [current, total]}))

    print(f"  objects left in reference cycles by the export's parse (cyclic collector paused, as in a build): "
          f"{cycles_after_parse(export)}")
    full_build(export.parent)


def compiled_modules() -> tuple[int, int]:
    """(modules with current bytecode, modules) of the project's packages ``pipeline`` and
    ``schemas``: a module's bytecode is current when its ``__pycache__`` file records the
    source's modification time and size (how Python checks it before using it)."""
    current = total = 0
    for source in sorted([*(ROOT / "pipeline").rglob("*.py"), *(ROOT / "schemas").rglob("*.py")]):
        total += 1
        try:
            header = Path(importlib.util.cache_from_source(str(source))).read_bytes()[:16]
        except OSError:
            continue
        stat = source.stat()
        if (header[:4] == importlib.util.MAGIC_NUMBER and int.from_bytes(header[4:8], "little") == 0
                and int.from_bytes(header[8:12], "little") == int(stat.st_mtime) & 0xFFFFFFFF
                and int.from_bytes(header[12:16], "little") == stat.st_size & 0xFFFFFFFF):
            current += 1
    return current, total


_CYCLES = """
import gc, pathlib, sys
from pipeline.extractors.wahapedia_csv import parse_export
from schemas.records import Source
files = {p.stem: p.read_text(encoding="utf-8-sig") for p in pathlib.Path(sys.argv[1]).glob("*.csv")}
source = Source(source_id="bench", format="wahapedia-csv", title="t", publisher="p", edition=10, kind="export",
                game_mode=None, version=None, origin="o", file="f", version_date=None)
gc.collect(); gc.disable()
parse_export(files, source)
print(gc.collect())
"""


def cycles_after_parse(export: Path) -> int:
    """Objects a parse of the export leaves in reference cycles (what only the cyclic collector
    frees; the build pauses it), counted by one collection right after the parse."""
    out = subprocess.run([sys.executable, "-c", _CYCLES, str(export)], check=True, capture_output=True,
                         text=True, cwd=ROOT)
    return int(out.stdout.strip().splitlines()[-1])


def full_build(corpus: Path) -> None:
    """Build every source of the manifest, mirrored from ``corpus``, once; print its figures."""
    with tempfile.TemporaryDirectory() as tmp:
        raw = Path(tmp) / "raw"
        shutil.copytree(ROOT / "raw", raw)
        subprocess.run([sys.executable, "-m", "pipeline.cli", "fetch", "--raw", str(raw), "--mirror", str(corpus),
                        "--delay", "0"], check=True, cwd=ROOT, capture_output=True)
        log = Path(tmp) / "build.log"
        measure = (
            "import resource, subprocess, sys; "
            "subprocess.run(sys.argv[2:], check=True, stdout=subprocess.DEVNULL, stderr=open(sys.argv[1], 'w'));"
            "print(resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss)"
        )
        start = time.perf_counter()
        out = subprocess.run([sys.executable, "-c", measure, str(log), sys.executable, "-m", "pipeline.cli", "build",
                              "--raw", str(raw), "--db", str(Path(tmp) / "full.duckdb")],
                             check=True, capture_output=True, text=True, cwd=ROOT)
        elapsed = time.perf_counter() - start
        peak = int(out.stdout.strip().splitlines()[-1]) / 1024
        stages = stage_times(log.read_text(encoding="utf-8"))
    print(f"Full build of every source (raw/ with `wh40k fetch --mirror {corpus.name}`), one run")
    print(f"  wh40k build                                 {elapsed:6.2f} s   peak {peak:6.0f} MiB")
    for name, seconds in stages:
        print(f"    {name:<46}{seconds:6.2f} s")
    print(json.dumps({"full_build_s": round(elapsed, 3), "full_build_peak_mib": round(peak),
                      "stages_s": {name: round(s, 3) for name, s in stages}}))


def stage_times(progress: str) -> list[tuple[str, float]]:
    """The build's progress lines as (stage, seconds): each source's parse, slowest first, then
    the merge and the load.

    >>> stage_times("parsed a: 3 records, 0 rejects in 0.50 s\\nparsed b: 1 records, 0 rejects in 2.00 s\\n"
    ...             "validated and merged in 1.00 s\\nloaded in 0.25 s\\n")
    [('parse b', 2.0), ('parse a', 0.5), ('validate and merge', 1.0), ('load', 0.25)]
    """
    parses, rest = [], []
    for line in progress.splitlines():
        if line.startswith("parsed ") and line.endswith(" s") and " in " in line:
            parses.append((f"parse {line[7:].split(':', 1)[0]}", float(line.rsplit(" in ", 1)[1][:-2])))
        elif line.startswith("validated and merged in "):
            rest.append(("validate and merge", float(line.split(" in ")[1][:-2])))
        elif line.startswith("read the rules' effects in "):
            rest.append(("effects", float(line.split(" in ")[1].split(" s")[0])))
        elif line.startswith("loaded in "):
            rest.append(("load", float(line.split(" in ")[1][:-2])))
    return sorted(parses, key=lambda p: -p[1]) + rest


if __name__ == "__main__":
    main()
