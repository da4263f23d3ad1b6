"""The DuckDB file of a build written by its second process (``pipeline.duckdb_file``): the same
database the calling process writes; an error met there raised here as DuckDB's; a second
process killed midway leaves the load to the calling process; one whose caller is gone removes
its file."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time

import duckdb
import pytest

import pipeline.build
from pipeline.build import build
from pipeline.duckdb_file import COMMIT_EVERY_ROWS, ForkedDuckdbFile
from pipeline.load import load_database
from pipeline.tempfiles import temp_path
from schemas.records import Faction, Source
from tests.conftest import GOLDEN, ROOT
from tests.test_link_columns import _tables

INPUTS = GOLDEN / "inputs"

pytestmark = pytest.mark.skipif(sys.platform != "linux", reason="the second process is forked on Linux only")


def _records(factions: int) -> list:
    source = Source(source_id="s", title="t", file="f.txt", format="x", publisher="p", edition=10,
                    kind="index", game_mode=None, version=None, version_date=None, origin="o")
    return [source, *(Faction(source_id="s", locator=f"Factions.csv line {i + 2}", faction_id=f"f{i}",
                              name=f"Faction {i}") for i in range(factions))]


def _writer(db) -> ForkedDuckdbFile:
    writer = ForkedDuckdbFile.start()
    assert writer is not None  # two CPUs or more, WH40K_JOBS unset
    writer.open(temp_path(db, "build"))
    return writer


def test_a_build_through_the_second_process_writes_the_database_the_build_writes_itself(tmp_path, monkeypatch):
    finished = []
    real_finish = ForkedDuckdbFile.finish

    def spy(self):
        finished.append(self.pid)
        return real_finish(self)

    monkeypatch.setattr(ForkedDuckdbFile, "finish", spy)
    monkeypatch.setattr(pipeline.build, "WRITER_MIN_RAW_BYTES", 0)  # the golden inputs are small
    build(INPUTS, tmp_path / "forked.duckdb")
    assert len(finished) == 1
    monkeypatch.setenv("WH40K_JOBS", "1")  # no second process: the build writes the file itself
    build(INPUTS, tmp_path / "here.duckdb")
    assert len(finished) == 1
    forked, here = _tables(tmp_path / "forked.duckdb"), _tables(tmp_path / "here.duckdb")
    assert len(forked["datasheets"]) > 0 and forked.keys() == here.keys()
    assert [t for t in forked if forked[t] != here[t]] == []  # row for row, in the same order
    assert sorted(p.name for p in tmp_path.iterdir()) == ["forked.duckdb", "here.duckdb"]


def test_rows_over_several_commits_and_rows_made_later_all_go_in_with_the_keys(tmp_path):
    db = tmp_path / "x.duckdb"
    records = _records(2 * COMMIT_EVERY_ROWS + 7)
    late = [Faction(source_id="s", locator="later", faction_id="zz", name="Later")]
    rows = load_database(records, db, later=lambda: late, writer=_writer(db))
    assert rows["factions"] == 2 * COMMIT_EVERY_ROWS + 8 and rows["sources"] == 1
    con = duckdb.connect(str(db), read_only=True)
    try:
        assert con.execute("SELECT count(*), count(DISTINCT faction_id) FROM factions").fetchone() == (
            2 * COMMIT_EVERY_ROWS + 8, 2 * COMMIT_EVERY_ROWS + 8)
        assert con.execute("SELECT constraint_column_names FROM duckdb_constraints() "
                           "WHERE table_name = 'factions' AND constraint_type = 'PRIMARY KEY'").fetchall() == [
            (["faction_id"],)]
    finally:
        con.close()
    assert sorted(p.name for p in tmp_path.iterdir()) == ["x.duckdb"]


def test_a_key_broken_in_the_second_process_raises_duckdbs_error_here_and_leaves_no_file(tmp_path):
    db = tmp_path / "x.duckdb"
    twice = [*_records(3), Faction(source_id="s", locator="again", faction_id="f1", name="Other")]
    with pytest.raises(duckdb.TransactionException, match='duplicate key "f1"') as there:
        load_database(twice, db, writer=_writer(db))
    assert list(tmp_path.iterdir()) == []
    with pytest.raises(duckdb.Error) as here:
        load_database(twice, db)
    assert (type(there.value), str(there.value)) == (type(here.value), str(here.value))


def test_a_second_process_killed_midway_leaves_the_load_to_this_process(tmp_path):
    db, here = tmp_path / "x.duckdb", tmp_path / "here.duckdb"
    writer = _writer(db)
    os.kill(writer.pid, signal.SIGKILL)
    rows = load_database(_records(50), db, writer=writer)
    assert rows == load_database(_records(50), here)
    assert _tables(db) == _tables(here)
    assert sorted(p.name for p in tmp_path.iterdir()) == ["here.duckdb", "x.duckdb"]


def test_abort_stops_the_second_process_and_removes_its_file(tmp_path):
    writer = _writer(tmp_path / "x.duckdb")
    writer.rows("sources", {"source_id": ["s"]})  # not a whole table's columns: an error kept for finish
    writer.abort()
    assert list(tmp_path.iterdir()) == []
    with pytest.raises(ProcessLookupError):
        os.kill(writer.pid, 0)


_CALLER_GONE = """
import os, sys, time
from pathlib import Path
from pipeline.duckdb_file import ForkedDuckdbFile
writer = ForkedDuckdbFile.start()
writer.open(Path(sys.argv[1]))
writer.rows("factions", {"source_id": ["s"], "locator": ["l"], "faction_id": ["f"], "name": ["F"]})
time.sleep(1.0)  # the file is there
print(writer.pid, flush=True)
os._exit(0)  # killed, in effect: no finish, no abort
"""


def test_a_second_process_whose_caller_is_gone_removes_its_file_and_ends(tmp_path):
    path = tmp_path / ".x.duckdb.1.00000000.build.tmp"
    out = subprocess.run([sys.executable, "-c", _CALLER_GONE, str(path)], capture_output=True, text=True,
                         cwd=ROOT, check=True, timeout=60)
    pid = int(out.stdout.strip())
    for _ in range(100):  # it notices at once (its pipe closes) or within a second (its parent changes)
        if not path.exists():
            break
        time.sleep(0.05)
    assert not path.exists() and not path.with_name(path.name + ".wal").exists()
    for _ in range(100):
        if not _runs(pid):
            break
        time.sleep(0.05)
    else:
        pytest.fail(f"the second process {pid} still runs")


def _runs(pid: int) -> bool:
    """Whether process ``pid`` runs (an ended one not yet reaped by its new parent does not)."""
    try:
        with open(f"/proc/{pid}/stat", encoding="ascii") as stat:
            return stat.read().rsplit(")", 1)[1].split()[0] not in ("Z", "X")
    except FileNotFoundError:
        return False


def test_no_second_process_with_one_job(monkeypatch):
    monkeypatch.setenv("WH40K_JOBS", "1")
    assert ForkedDuckdbFile.start() is None


_FIRST_BUILD = """
import sys
from pathlib import Path
import pipeline.build
from pipeline.build import build
pipeline.build.WRITER_MIN_RAW_BYTES = 0
build(Path(sys.argv[1]), Path(sys.argv[2]))
print(sorted(m for m in ("duckdb", "pyarrow", "numpy") if m in sys.modules))
"""


def test_a_first_build_through_the_second_process_never_imports_duckdb_here(tmp_path):
    db = tmp_path / "x.duckdb"
    out = subprocess.run([sys.executable, "-c", _FIRST_BUILD, str(INPUTS), str(db)], capture_output=True,
                         text=True, cwd=ROOT, timeout=300)
    assert out.returncode == 0, out.stderr
    assert out.stdout.strip() == "[]" and db.is_file()
    again = subprocess.run([sys.executable, "-c", _FIRST_BUILD, str(INPUTS), str(db)], capture_output=True,
                           text=True, cwd=ROOT, timeout=300)  # a rebuild reads the previous counts
    assert again.returncode == 0, again.stderr
    assert again.stdout.strip() == "['duckdb']"  # (not Arrow: the rows go in there)


def _link_columns(rows: list[tuple[str, str]]):
    from pipeline.extractors import LinkColumns
    from schemas.records import DatasheetStratagem

    return LinkColumns(DatasheetStratagem, ["s"] * len(rows), [f"line {i + 2}" for i in range(len(rows))],
                       [d for d, _ in rows], [t for _, t in rows])


@pytest.mark.parametrize("merged", [[("a", "s1"), ("a", "s2"), ("b", "s1")], [("a", "s1"), ("b", "s1")], []])
def test_rows_sent_ahead_are_the_tables_rows_whatever_the_merge_made_of_them(tmp_path, monkeypatch, merged):
    # pipeline.load.load_ahead: a link table's parsed rows go in during the merge; the load
    # sends the table again (replace) only when the merged rows are not those
    from pipeline.load import load_ahead

    replaced = []
    real_replace = ForkedDuckdbFile.replace
    monkeypatch.setattr(ForkedDuckdbFile, "replace",
                        lambda self, name, columns: (replaced.append(name), real_replace(self, name, columns))[1])
    parsed = _link_columns([("a", "s1"), ("a", "s2"), ("b", "s1")])
    db = tmp_path / "x.duckdb"
    writer = _writer(db)
    load_ahead(writer, [parsed])
    final = parsed if len(merged) == 3 else _link_columns(merged)
    rows = load_database(_records(1), db, links=[final] if merged else [], writer=writer)
    assert rows["datasheet_stratagems"] == len(merged)
    assert replaced == ([] if len(merged) == 3 else ["datasheet_stratagems"])
    con = duckdb.connect(str(db), read_only=True)
    try:
        got = con.execute("SELECT datasheet_id, stratagem_id, locator FROM datasheet_stratagems").fetchall()
    finally:
        con.close()
    assert got == list(zip(final.datasheet_ids, final.targets, final.locators)) if merged else got == []


def _session(sid: int) -> list[int]:
    """The processes of session ``sid`` that still run (not ended and waiting to be reaped)."""
    found = []
    for entry in os.listdir("/proc"):
        if entry.isdigit():
            try:
                with open(f"/proc/{entry}/stat", encoding="ascii") as stat:
                    fields = stat.read().rsplit(")", 1)[1].split()
            except OSError:
                continue
            if int(fields[3]) == sid and fields[0] not in ("Z", "X"):
                found.append(int(entry))
    return found


@pytest.mark.parametrize("after", [0.3, 1.2])
def test_a_build_killed_midway_leaves_no_process_and_no_file(tmp_path, after):
    # the second processes (the DuckDB file's, the HTML worker, the wordings' readers) end by
    # themselves once the build is gone, blocked or not (pipeline.forked.end_with_caller)
    export = ROOT.parent / "shared" / "corpus" / "wahapedia-10e"
    if not export.is_dir():
        pytest.skip("the shared corpus is not beside the checkout")
    raw = tmp_path / "raw"
    (raw / "export").mkdir(parents=True)
    for table in export.glob("*.csv"):
        (raw / "export" / table.name).write_bytes(table.read_bytes())
    (raw / "manifest.toml").write_text(
        '[[source]]\nid = "export"\nfile = "export/"\nformat = "wahapedia-csv"\ntitle = "t"\npublisher = "p"\n'
        'edition = 10\nkind = "export"\norigin = "test"\n', encoding="utf-8")
    out = tmp_path / "out"
    out.mkdir()
    build = subprocess.Popen([sys.executable, "-m", "pipeline.cli", "build", "-q", "--raw", str(raw), "--db",
                              str(out / "x.duckdb")], cwd=ROOT, start_new_session=True)
    time.sleep(after)
    os.kill(build.pid, signal.SIGKILL)
    build.wait()
    for _ in range(100):
        if not _session(build.pid) and not list(out.iterdir()):
            break
        time.sleep(0.05)
    assert _session(build.pid) == [] and list(out.iterdir()) == []


def test_a_bad_jobs_setting_is_left_to_the_build_that_reads_it(tmp_path, monkeypatch):
    # wh40k build forks its second process before the command line runs: a WH40K_JOBS it cannot
    # read forks none, and the build says what is wrong where it needs the setting (one line)
    import pipeline.duckdb_file as duckdb_file

    monkeypatch.setenv("WH40K_JOBS", "0")
    ForkedDuckdbFile.start_early()
    assert duckdb_file._EARLY is None
    out = subprocess.run([sys.executable, "-m", "pipeline.cli", "build", "-q", "--raw", str(INPUTS), "--db",
                          str(tmp_path / "x.duckdb")], cwd=ROOT, capture_output=True, text=True,
                         env={**os.environ, "WH40K_JOBS": "0"}, timeout=120)
    assert "Traceback" not in out.stderr
    assert out.returncode == 0  # the golden inputs are small: nothing runs in a second process
