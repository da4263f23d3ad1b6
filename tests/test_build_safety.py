"""The build with hostile or broken files: manifest paths outside the raw folder, a --db that is not
this project's database, a source that suddenly loads nothing, temporary files of killed builds,
SIGTERM, and an interrupt after the new database was renamed into place.

Each refusal is one line that names the file or the manifest entry and says how to fix it, and
leaves the previous database (or the foreign file) as it was.
"""

from __future__ import annotations

import os
import shutil
import signal
import subprocess
import sys
import time
from pathlib import Path

import duckdb
import pytest

import pipeline.cli
import pipeline.load
from pipeline.build import build
from pipeline.errors import BuildError, ManifestError, RawFileError
from pipeline.fetch import FetchStatus, fetch_sources
from pipeline.manifest import MANIFEST_NAME, FetchSettings, read_fetch_settings, read_manifest
from tests.conftest import RAW
from tests.test_build_and_cli import wh40k

DESCRIPTIONS = "bsdata-10e-rule-descriptions-acts-of-faith-deadly-demise-leader.txt"
DESCRIPTIONS_SHA = 'sha256 = "a730cf5a43b755d87636337dda2c213ab1f3a2b6acba01302e1720f48edb25da"\n'


def seed_copy(tmp_path: Path) -> Path:
    raw = tmp_path / "raw"
    shutil.copytree(RAW, raw)
    return raw


def add_entry(raw: Path, file: str, *, extra: str = "", source_id: str = "extra") -> None:
    with (raw / MANIFEST_NAME).open("a", encoding="utf-8") as manifest:
        manifest.write(
            f'\n[[source]]\nid = "{source_id}"\nfile = "{file}"\nformat = "battlescribe-rule-descriptions"\n'
            f'title = "x"\npublisher = "BSData"\nedition = 10\nkind = "codex"\norigin = "test"\n{extra}'
        )


def dead_pid() -> int:
    """The pid of a process that has ended (a child, waited for)."""
    child = subprocess.Popen([sys.executable, "-c", "pass"])
    child.wait()
    return child.pid


def run_cli(monkeypatch, capsys, *args: str) -> tuple[int, str]:
    """``wh40k ARGS`` in this process (so that a test can inject a failure); (exit status, stderr)."""
    monkeypatch.setattr(sys, "argv", ["wh40k", *args])
    with pytest.raises(SystemExit) as stopped:
        pipeline.cli.main()
    return stopped.value.code, capsys.readouterr().err


# --- manifest paths outside the raw folder ---------------------------------------------------------


@pytest.mark.parametrize(("file", "reason"), [
    ("/etc/passwd", "an absolute path"),
    ("../../etc/passwd", "it climbs out with '..'"),
])
def test_an_absolute_or_climbing_path_is_refused_by_the_build(tmp_path, file, reason):
    raw = seed_copy(tmp_path)
    add_entry(raw, file)
    with pytest.raises(ManifestError) as err:
        build(raw, tmp_path / "wh40k.duckdb")
    assert str(err.value) == (
        f"{raw / MANIFEST_NAME}: [[source]] entry 20 (extra): file {file!r} is not a path inside the raw "
        f"folder {raw} ({reason}); give a path relative to {raw}, without '..'"
    )
    assert not (tmp_path / "wh40k.duckdb").exists()


def test_a_symbolic_link_out_of_the_raw_folder_is_refused_by_build_and_fetch_alike(tmp_path):
    raw = seed_copy(tmp_path)
    secret = tmp_path / "secret.txt"
    secret.write_text("not for the database\n", encoding="utf-8")
    (raw / "link.txt").symlink_to(secret)
    add_entry(raw, "link.txt", extra='url = "http://127.0.0.1:9/link.txt"\n')
    expected = (
        f"{raw / MANIFEST_NAME}: [[source]] entry 20 (extra): file 'link.txt' leads through a symbolic link "
        f"to {secret}, outside the raw folder {raw}; put the file itself into the raw folder instead of a link"
    )
    out = wh40k("build", "-q", "--raw", str(raw), "--db", str(tmp_path / "wh40k.duckdb"))
    assert (out.returncode, out.stderr) == (1, f"Error: {expected}\n")
    out = wh40k("fetch", "--raw", str(raw), "--only", "extra")
    assert (out.returncode, out.stderr) == (1, f"Error: {expected}\n")
    assert not (tmp_path / "wh40k.duckdb").exists()


def test_a_link_inside_the_raw_folder_is_accepted(tmp_path):
    raw = seed_copy(tmp_path)
    (raw / "again.txt").symlink_to(raw / DESCRIPTIONS)
    add_entry(raw, "again.txt")
    assert read_manifest(raw)[-1].file == "again.txt"


def test_a_folder_member_linked_out_of_the_raw_folder_is_refused(tmp_path):
    raw = seed_copy(tmp_path)
    secret = tmp_path / "Secret.csv"
    secret.write_text("id|name|\nx|y|\n", encoding="utf-8")
    (raw / "export").mkdir()
    (raw / "export" / "Factions.csv").write_text("id|name|link|\nSM|Space Marines|x|\n", encoding="utf-8")
    (raw / "export" / "Datasheets.csv").symlink_to(secret)
    with (raw / MANIFEST_NAME).open("a", encoding="utf-8") as manifest:
        manifest.write('\n[[source]]\nid = "mini-export"\nfile = "export/"\nformat = "wahapedia-csv"\n'
                       'title = "Export"\npublisher = "Wahapedia"\nedition = 10\nkind = "export"\norigin = "test"\n')
    with pytest.raises(RawFileError) as err:
        build(raw, tmp_path / "wh40k.duckdb")
    assert str(err.value) == (
        f"raw manifest entry 'mini-export': file 'export/Datasheets.csv' leads through a symbolic link to "
        f"{secret}, outside the raw folder {raw}; put the file itself into the raw folder instead of a link"
    )


def test_fetch_refuses_to_write_through_a_folder_linked_out_of_the_raw_folder(tmp_path):
    raw = tmp_path / "raw"
    raw.mkdir()
    outside = tmp_path / "outside"
    outside.mkdir()
    (raw / "export").symlink_to(outside)
    mirror = tmp_path / "mirror" / "export"
    mirror.mkdir(parents=True)
    (mirror / "Factions.csv").write_text("id|name|link|\n", encoding="utf-8")
    source = read_manifest(seed_copy(tmp_path / "seed"))[0].model_copy(
        update={"source_id": "export", "file": "export/", "url": "http://127.0.0.1:9/", "sha256": None})

    report = fetch_sources([source], raw, mirror=str(mirror.parent), folder_files={"export": ("Factions.csv",)},
                           delay_seconds=0)

    (result,) = report.results
    assert result.status is FetchStatus.failed
    assert result.note == (
        f"source 'export': file 'export/' leads through a symbolic link to {outside}, outside the raw folder "
        f"{raw}; put the file itself into the raw folder instead of a link (in the raw manifest)"
    )
    assert list(outside.iterdir()) == []


def test_the_fetch_keys_are_read_and_checked_with_the_manifest(tmp_path):
    raw = seed_copy(tmp_path)
    add_entry(raw, "x.txt", extra='allow_redirect_hosts = ["Objects.example.org"]\nmax_bytes = 1_000\n')
    assert read_fetch_settings(raw)["extra"] == FetchSettings((), ("objects.example.org",), 1000)
    assert read_manifest(raw)[-1].source_id == "extra"  # not columns of sources

    bad = seed_copy(tmp_path / "bad")
    add_entry(bad, "x.txt", extra="max_bytes = -1\n")
    with pytest.raises(ManifestError) as err:
        read_manifest(bad)
    assert str(err.value) == (f"{bad / MANIFEST_NAME}: [[source]] entry 20 (extra): max_bytes must be a whole "
                              "number of bytes above 0, e.g. max_bytes = 500_000_000")


# --- --db must be this project's database --------------------------------------------------------


def test_a_db_that_is_not_a_duckdb_database_is_never_overwritten(tmp_path):
    notes = tmp_path / "notes.txt"
    notes.write_text("my notes\n", encoding="utf-8")
    out = wh40k("build", "-q", "--raw", str(RAW), "--db", str(notes))
    assert (out.returncode, out.stderr) == (1, (
        f"Error: --db {notes} is not a DuckDB database, and the build would overwrite it; choose another "
        "--db, or delete the file if it is not needed\n"))
    assert notes.read_text(encoding="utf-8") == "my notes\n"
    empty = tmp_path / "empty.duckdb"
    empty.touch()
    with pytest.raises(BuildError, match="is not a DuckDB database"):
        build(RAW, empty)
    assert empty.read_bytes() == b""


def test_a_duckdb_database_of_another_project_is_never_overwritten(tmp_path):
    other = tmp_path / "other.duckdb"
    con = duckdb.connect(str(other))
    con.execute("CREATE TABLE sources (id INTEGER)")
    con.close()
    before = other.read_bytes()
    with pytest.raises(BuildError) as err:
        build(RAW, other)
    assert str(err.value) == (
        f"--db {other} is a DuckDB database that this project did not build (it has no table "
        "build_accounting), and the build would overwrite it; choose another --db, or delete the file if it "
        "is not needed"
    )
    assert other.read_bytes() == before
    assert sorted(p.name for p in tmp_path.iterdir()) == ["other.duckdb"]


# --- a source that loads nothing where it loaded rows ---------------------------------------------


def test_a_source_emptied_fails_the_build_and_keeps_the_database_unless_allowed(tmp_path):
    raw = seed_copy(tmp_path)
    db = tmp_path / "wh40k.duckdb"
    build(raw, db)
    before = db.read_bytes()
    (raw / DESCRIPTIONS).write_text("", encoding="utf-8")
    manifest = (raw / MANIFEST_NAME).read_text(encoding="utf-8")
    (raw / MANIFEST_NAME).write_text(manifest.replace(DESCRIPTIONS_SHA, ""), encoding="utf-8")
    lines: list[str] = []

    with pytest.raises(BuildError) as err:
        build(raw, db, lines.append)

    assert str(err.value) == (
        f"the new build would shrink {db}: source 'bsdata-10e-rule-descriptions' table rule_texts (parse): "
        "3 rows before, 0 now; and 1 more (listed above, unless --quiet); the previous database is kept. Check that "
        "source's raw files, or pass --allow-shrink if the shrink is intended"
    )
    assert [line for line in lines if line.startswith("shrink")] == [
        "shrink: source 'bsdata-10e-rule-descriptions' table rule_texts (parse): 3 rows before, 0 now",
        "shrink: source 'bsdata-10e-rule-descriptions' table rule_texts (validate): 3 rows before, 0 now",
    ]
    assert db.read_bytes() == before
    assert sorted(p.name for p in tmp_path.iterdir()) == ["raw", "wh40k.duckdb"]

    build(raw, db, allow_shrink=True)
    con = duckdb.connect(str(db), read_only=True)
    assert con.execute("SELECT count(*) FROM rule_texts WHERE source_id = 'bsdata-10e-rule-descriptions'"
                       ).fetchone() == (0,)
    con.close()


def test_the_same_build_twice_is_no_shrink(tmp_path):
    db = tmp_path / "wh40k.duckdb"
    first = build(RAW, db)
    second = build(RAW, db)
    assert second.rows == first.rows


# --- temporary files of killed builds -------------------------------------------------------------


def test_temporary_files_of_killed_builds_are_removed_by_the_next_build(tmp_path):
    db = tmp_path / "wh40k.duckdb"
    pid = dead_pid()
    killed = [tmp_path / f".wh40k.duckdb.{pid}.0a1b2c3d.build.tmp", tmp_path / f".wh40k.duckdb.{pid}.0a1b2c3d.build.tmp.wal",
              tmp_path / f".wh40k.duckdb.{pid}.99887766.tmp"]  # the name before .build was added
    reused = tmp_path / f".wh40k.duckdb.{os.getpid()}.01234567.build.tmp"  # this pid, but older than us
    running = tmp_path / f".wh40k.duckdb.{os.getpid()}.89abcdef.build.tmp"  # as if another thread wrote it now
    others = [tmp_path / "notes.tmp", tmp_path / f".other.duckdb.{pid}.0a1b2c3d.build.tmp"]
    for path in [*killed, reused, running, *others]:
        path.write_bytes(b"half a database")
    day_ago = time.time() - 86_400
    os.utime(reused, (day_ago, day_ago))
    lines: list[str] = []

    build(RAW, db, lines.append)

    assert sorted(p.name for p in tmp_path.iterdir()) == sorted(p.name for p in [db, running, *others])
    assert sorted(line for line in lines if line.startswith("removed")) == sorted(
        f"removed {p.name}: a temporary file of an earlier build that was killed" for p in [*killed, reused])


def test_temporary_files_of_a_killed_fetch_are_removed_by_the_next_fetch(tmp_path):
    raw = tmp_path / "raw"
    (raw / "export").mkdir(parents=True)
    pid = dead_pid()
    stale = [raw / f".Factions.csv.{pid}.0a1b2c3d.fetch.tmp", raw / "export" / f".Source.csv.{pid}.0a1b2c3d.fetch.tmp"]
    for path in stale:
        path.write_bytes(b"half a file")
    mirror = tmp_path / "mirror"
    (mirror / "export").mkdir(parents=True)
    (mirror / "export" / "Source.csv").write_text("id|name|\n", encoding="utf-8")
    source = read_manifest(RAW)[0].model_copy(
        update={"source_id": "export", "file": "export/", "url": "http://127.0.0.1:9/", "sha256": None})
    lines: list[str] = []

    fetch_sources([source], raw, mirror=str(mirror), folder_files={"export": ("Source.csv",)}, delay_seconds=0,
                  progress=lines.append)

    assert sorted(p.name for p in raw.rglob("*")) == ["Source.csv", "export"]
    assert sorted(line for line in lines if line.startswith("removed")) == sorted(
        f"removed {p}: a temporary file of an earlier fetch that was killed" for p in stale)


# --- SIGTERM, and the message after an interrupt --------------------------------------------------


def test_sigterm_stops_the_build_like_ctrl_c_with_exit_status_143(tmp_path, monkeypatch, capsys):
    db = tmp_path / "wh40k.duckdb"
    build(RAW, db)
    before = db.read_bytes()

    def terminated(records, tmp, links=(), later=None, writer=None):
        tmp.write_bytes(b"half a database")
        os.kill(os.getpid(), signal.SIGTERM)
        for _ in range(100):  # the handler raises at the next bytecode; bounded wait
            time.sleep(0.01)

    monkeypatch.setattr(pipeline.load, "_write", terminated)
    status, err = run_cli(monkeypatch, capsys, "build", "-q", "--raw", str(RAW), "--db", str(db))

    assert (status, err) == (143, f"Terminated (SIGTERM): {db} was not changed\n")
    assert db.read_bytes() == before
    assert sorted(p.name for p in tmp_path.iterdir()) == ["wh40k.duckdb"]
    assert signal.getsignal(signal.SIGTERM) is signal.SIG_DFL  # restored after the build


def test_a_signal_while_duckdb_inserts_is_an_interrupt_not_a_traceback(tmp_path, monkeypatch, capsys):
    db = tmp_path / "wh40k.duckdb"
    build(RAW, db)
    before = db.read_bytes()

    def interrupted_insert(records, tmp, links=(), later=None, writer=None):
        if writer is not None:  # the build's second process has the file open: it stops first
            writer.abort()
        con = duckdb.connect(str(tmp))
        con.close()
        # what DuckDB 2.0 raises when SIGINT or SIGTERM lands while it scans an Arrow batch
        raise RuntimeError("Query interrupted")

    monkeypatch.setattr(pipeline.load, "_write", interrupted_insert)
    status, err = run_cli(monkeypatch, capsys, "build", "-q", "--raw", str(RAW), "--db", str(db))

    assert (status, err) == (130, f"Interrupted: {db} was not changed\n")
    assert db.read_bytes() == before
    assert sorted(p.name for p in tmp_path.iterdir()) == ["wh40k.duckdb"]


def test_ctrl_c_just_after_the_rename_says_the_database_was_replaced(tmp_path, monkeypatch, capsys):
    db = tmp_path / "wh40k.duckdb"
    build(RAW, db)
    old_inode = db.stat().st_ino
    real_replace = os.replace

    def replace_then_interrupt(src, dst):
        real_replace(src, dst)
        if Path(dst) == db:
            raise KeyboardInterrupt

    monkeypatch.setattr(os, "replace", replace_then_interrupt)
    status, err = run_cli(monkeypatch, capsys, "build", "-q", "--raw", str(RAW), "--db", str(db))

    assert (status, err) == (130, f"Interrupted: {db} was replaced: the build had completed the new database "
                                  "before it stopped\n")
    assert db.stat().st_ino != old_inode
    con = duckdb.connect(str(db), read_only=True)  # the new database is whole
    assert con.execute("SELECT count(*) FROM sources").fetchone() == (3,)
    con.close()
    assert sorted(p.name for p in tmp_path.iterdir()) == ["wh40k.duckdb"]


def test_ctrl_c_just_before_the_rename_says_the_database_was_not_changed(tmp_path, monkeypatch, capsys):
    db = tmp_path / "wh40k.duckdb"
    build(RAW, db)
    before = db.read_bytes()

    def interrupt_instead(src, dst):
        raise KeyboardInterrupt

    monkeypatch.setattr(os, "replace", interrupt_instead)
    status, err = run_cli(monkeypatch, capsys, "build", "-q", "--raw", str(RAW), "--db", str(db))

    assert (status, err) == (130, f"Interrupted: {db} was not changed\n")
    assert db.read_bytes() == before
    assert sorted(p.name for p in tmp_path.iterdir()) == ["wh40k.duckdb"]



_INTERRUPTED_IMPORT = """
import os, signal, sys
sys.argv = ["wh40k", "build", "-q", "--raw", sys.argv[1], "--db", sys.argv[2]]
class Pressed:  # Ctrl-C, or SIGTERM, while the build's modules load
    def find_spec(self, name, path=None, target=None):
        if name == "pipeline.build":
            if os.environ["HOW"] == "TERM":
                signal.raise_signal(signal.SIGTERM)
            raise KeyboardInterrupt
        return None
sys.meta_path.insert(0, Pressed())
from pipeline.wh40k import console
console()
"""


@pytest.mark.parametrize("how, status, said", [("INT", 130, "Interrupted"), ("TERM", 143, "Terminated (SIGTERM)")])
def test_a_signal_while_the_build_loads_its_modules_says_nothing_was_changed(tmp_path, how, status, said):
    out = subprocess.run([sys.executable, "-c", _INTERRUPTED_IMPORT, str(RAW), str(tmp_path / "x.duckdb")],
                         capture_output=True, text=True, cwd=Path(__file__).resolve().parent.parent, timeout=120,
                         env={**os.environ, "HOW": how})
    assert (out.returncode, out.stderr) == (status, f"{said}: nothing was changed\n")
    assert list(tmp_path.iterdir()) == []
