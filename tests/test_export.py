"""``wh40k export`` and ``wh40k schema``: every table written out, with the data dictionary."""

from __future__ import annotations

import csv
import json
from pathlib import Path

import pyarrow.parquet as pq
import pytest

from pipeline.cli import run
from pipeline.export import DICTIONARY_FILES, data_dictionary, rows_checksum, table_checksums
from pipeline.query import open_database
from schemas.catalog import declared_tables
from tests.editions_db import editions_db


@pytest.fixture(scope="module")
def checksums() -> dict[str, tuple[int, str]]:
    con = open_database(editions_db())
    try:
        return table_checksums(con)
    finally:
        con.close()


def _export(tmp_path: Path, fmt: str, capsys: pytest.CaptureFixture[str]) -> Path:
    folder = tmp_path / fmt
    status = run(["export", str(folder), "--format", fmt, "--db", str(editions_db())])
    out, err = capsys.readouterr()
    assert (status, out) == (0, "")
    assert err == f"wrote {len(declared_tables())} tables ({sum(n for n, _ in table_checksums(open_database(editions_db())).values())} rows) " \
                  f"as {fmt} into {folder}, with data_dictionary.json and data_dictionary.md\n"
    assert sorted(p.name for p in folder.iterdir()) == sorted(
        [f"{t}.{fmt}" for t in declared_tables()] + list(DICTIONARY_FILES))
    return folder


def test_parquet_holds_every_row_with_its_types(tmp_path: Path, checksums: dict,
                                                 capsys: pytest.CaptureFixture[str]) -> None:
    folder = _export(tmp_path, "parquet", capsys)
    for table, columns in declared_tables().items():
        read = pq.read_table(folder / f"{table}.parquet")
        assert read.column_names == [c.name for c in columns]
        assert rows_checksum(zip(*(read.column(c).to_pylist() for c in read.column_names))) == checksums[table]


def test_csv_and_jsonl_hold_every_row(tmp_path: Path, checksums: dict, capsys: pytest.CaptureFixture[str]) -> None:
    folder = _export(tmp_path, "csv", capsys)
    lines = _export(tmp_path, "jsonl", capsys)
    for table, columns in declared_tables().items():
        with (folder / f"{table}.csv").open(encoding="utf-8", newline="") as file:
            rows = list(csv.reader(file))
        assert rows[0] == [c.name for c in columns] and len(rows) - 1 == checksums[table][0]
        objects = [json.loads(line) for line in (lines / f"{table}.jsonl").read_text(encoding="utf-8").splitlines()]
        assert len(objects) == checksums[table][0] and all(list(o) == rows[0] for o in objects)
    sisters = [o for o in map(json.loads, (lines / "datasheets.jsonl").read_text(encoding="utf-8").splitlines())
               if o["datasheet_id"] == "10e/adepta-sororitas/battle-sisters-squad"]
    assert [(o["name"], o["starting_strength"], o["edition"]) for o in sisters] == [("Battle Sisters Squad", 10, 10)]


def test_the_dictionary_beside_the_export_is_the_schema_command(tmp_path: Path,
                                                                capsys: pytest.CaptureFixture[str]) -> None:
    folder = _export(tmp_path, "csv", capsys)
    assert run(["schema", "--format", "json"]) == 0
    printed = json.loads(capsys.readouterr().out)
    assert printed == json.loads((folder / "data_dictionary.json").read_text(encoding="utf-8")) == data_dictionary()
    assert run(["schema"]) == 0
    markdown = capsys.readouterr().out
    assert markdown == (folder / "data_dictionary.md").read_text(encoding="utf-8")
    assert [t["table"] for t in printed] == list(declared_tables())
    for table in printed:
        assert f"## `{table['table']}`" in markdown
        assert [c["name"] for c in table["columns"]] == [c.name for c in declared_tables()[table["table"]]]
        assert all(c["description"] for c in table["columns"]), table["table"]  # every column has a meaning
    columns = {(t["table"], c["name"]): c for t in printed for c in t["columns"]}
    assert columns[("sources", "file")]["description"] == "path relative to the raw directory"
    assert columns[("weapon_profiles", "attacks_dice_count")]["described_by"] == "dice"
    assert columns[("datasheets", "starting_strength")]["description"].startswith("`starting_strength` is the model count")


def test_export_into_a_file_is_one_line(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    file = tmp_path / "taken"
    file.write_text("x")
    assert run(["export", str(file), "--db", str(editions_db())]) == 1
    out, err = capsys.readouterr()
    assert out == "" and err == f"Error: {file} is a file; give the export a folder (it is created)\n"
    assert run(["export", str(tmp_path / "x"), "--format", "xml", "--db", str(editions_db())]) == 2
    assert capsys.readouterr().err.startswith("Error: --format / -f: ")
