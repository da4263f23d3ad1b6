"""Golden files of the parsers on small inputs committed beside them (``tests/golden/inputs/``).

``tests/golden/inputs/manifest.toml`` lists the inputs as a raw folder lists its snapshots: one
``[[source]]`` each, made up in the shape of the real source (a Wahapedia CSV export folder,
saved datasheet pages, BattleScribe XML and JSON files). Each is read as the build reads a raw
file (``pipeline.extract.read_snapshot``), parsed by the parser its format names in
``pipeline.extractors.EXTRACTORS``, and the result compared with ``tests/golden/<source id>.json``.
Nothing outside the checkout is read, so these run in any clone. ``UPDATE_GOLDEN=1`` rewrites
the expected files; review the diff before committing.

The real files are tested as wholes by the corpus tests (``test_parser_*``), which skip when
``../shared/corpus`` is not beside the checkout.
"""

from __future__ import annotations

from collections import Counter

import pytest

from pipeline.extract import read_snapshot
from pipeline.manifest import MANIFEST_NAME, read_manifest
from pipeline.extractors import ParseResult, get_extractor
from pipeline.extractors.wahapedia_csv import TABLES, accounting, check_accounting
from schemas.records import Source
from tests.conftest import GOLDEN, assert_golden, records_as_json

INPUTS = GOLDEN / "inputs"
SOURCES = read_manifest(INPUTS)
#: An input is a small document: a few rows, one datasheet or a unit or two.
MAX_INPUT_BYTES = 50_000


def result_as_json(result: ParseResult) -> dict:
    """A parse result as JSON-ready data: records and rejects in a stable order, and the counters."""
    counters: dict[str, Counter[str]] = {
        "duplicates": result.duplicates,
        "boilerplate": result.boilerplate,
        "input_rows": result.input_rows,
        "loaded": result.loaded,
    }
    return {
        "records": records_as_json(result.records),
        "rejects": records_as_json(result.rejects),  # type: ignore[arg-type]
        **{name: dict(sorted(counter.items())) for name, counter in counters.items()},
    }


def parsed(source: Source) -> ParseResult:
    """An input read as the build reads a raw file and parsed by its format's extractor."""
    snapshot = read_snapshot(INPUTS, source)
    content = snapshot.files if snapshot.files is not None else snapshot.text
    return get_extractor(source.format)(content, source)  # type: ignore[arg-type]


@pytest.mark.parametrize("source", SOURCES, ids=lambda s: s.source_id)
def test_golden(source):
    result = parsed(source)
    assert result.records, "an input that gives no records pins nothing"
    assert_golden(source.source_id, result_as_json(result))


EXPORTS = [s for s in SOURCES if s.format == "wahapedia-csv"]


@pytest.mark.parametrize("source", EXPORTS, ids=lambda s: s.source_id)
def test_every_row_of_an_export_is_loaded_counted_or_rejected(source):
    rows = accounting(parsed(source), source.source_id)
    check_accounting(rows)  # per table: input rows = loaded + duplicates + rejected
    # the input rows counted from the files themselves: every line but the header
    folder = INPUTS / source.file
    lines = {t: len((folder / f"{t}.csv").read_bytes().decode("utf-8").splitlines()) - 1 for t in TABLES}
    assert {a.table_name: a.input_rows for a in rows} == lines


def test_every_input_is_listed_and_small():
    """Each file under ``inputs/`` is read by a source of the manifest, and none is large."""
    read = set()
    for source in SOURCES:
        path = INPUTS / source.file
        read |= {p for p in path.iterdir() if p.is_file()} if path.is_dir() else {path}
    present = {p for p in INPUTS.rglob("*") if p.is_file() and p.name not in (MANIFEST_NAME, ".gitattributes")}
    assert sorted(present - read) == []
    assert {p.name: p.stat().st_size for p in present if p.stat().st_size > MAX_INPUT_BYTES} == {}


def test_the_inputs_folder_builds_as_a_raw_folder(tmp_path):
    # The whole pipeline (extract, assemble, merge, load) on the committed inputs alone: no corpus.
    import duckdb

    from pipeline.build import build

    report = build(INPUTS, tmp_path / "inputs.duckdb")
    assert report.inconsistent == []  # every table's input = loaded + duplicates + rejected
    con = duckdb.connect(str(tmp_path / "inputs.duckdb"), read_only=True)
    editions = dict(con.execute("SELECT edition, count(*) FROM datasheets GROUP BY ALL").fetchall())
    assert editions[10] >= 5 and report.rows["weapon_profiles"] > 0
    # each datasheet keeps its source's own id (export id, BattleScribe entry id, page path)
    assert con.execute("SELECT count(*) FROM external_ids").fetchone()[0] >= editions[10]


def test_the_build_records_each_file_read_with_its_checksum(tmp_path):
    # source_files: one row per file of a folder source (and per one-file source), with the sha256
    # and size of the bytes read, so that a database says which snapshot of each file it was built from.
    import hashlib

    import duckdb

    from pipeline.build import build
    from pipeline.extractors import FOLDER_FILES

    build(INPUTS, tmp_path / "inputs.duckdb")
    con = duckdb.connect(str(tmp_path / "inputs.duckdb"), read_only=True)
    stored = {(sid, f): (sha, n) for sid, f, sha, n in con.execute(
        "SELECT source_id, file, sha256, bytes FROM source_files").fetchall()}
    expected = {}
    for source in read_manifest(INPUTS):
        path = INPUTS / source.file
        endings = FOLDER_FILES.get(source.format, (".csv",))
        for p in (sorted(p for p in path.iterdir() if p.suffix in endings) if path.is_dir() else [path]):
            data = p.read_bytes()
            expected[(source.source_id, p.name)] = (hashlib.sha256(data).hexdigest(), len(data))
    assert stored == expected
    assert len([k for k in stored if k[0] == "wahapedia_csv_export_10e"]) == 20  # the export's 20 tables
