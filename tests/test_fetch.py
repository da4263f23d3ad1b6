"""Fetch over real HTTP: a local server (127.0.0.1) serving copies of export tables, no mocked client."""

from __future__ import annotations

import datetime as dt
import email.utils
import hashlib
import json
import os
import shutil
import stat
import subprocess
import sys
import threading
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from urllib.parse import unquote, urlsplit

import httpx
import pytest

from pipeline.errors import ManifestError
from pipeline.extract import read_snapshot
from pipeline.fetch import (
    STATE_NAME,
    USER_AGENT,
    FetchError,
    FetchStatus,
    fetch_sources,
    folder_sha256,
    read_folder_files,
)
from schemas.records import Source
from tests.conftest import GOLDEN, ROOT

TABLES = ("Factions.csv", "Source.csv", "Last_update.csv")
#: The tables served: three of the made-up export of the golden tests (committed, so the fetch tests
#: need no corpus; they compare what arrives with these bytes, whatever the bytes are).
EXPORT = GOLDEN / "inputs" / "wahapedia_csv_export_10e"


# --- the local server ---------------------------------------------------------------------------


class CorpusServer(ThreadingHTTPServer):
    """Serves ``root``; logs every request; can fail with 503, cut a body, or omit ETags."""

    daemon_threads = True

    def __init__(self, root: Path) -> None:
        super().__init__(("127.0.0.1", 0), CorpusHandler)
        self.root = root
        self.requests: list[tuple[str, dict[str, str]]] = []  # (path, headers with lower-case names)
        self.fail: dict[str, int] = {}  # path -> number of 503 answers still to give
        self.retry_after: str | None = None
        self.cut: set[str] = set()  # paths whose body stops half-way
        self.send_etag = True

    def url(self, path: str = "") -> str:
        return f"http://127.0.0.1:{self.server_address[1]}/{path}"

    def requests_for(self, path: str) -> list[dict[str, str]]:
        return [headers for p, headers in self.requests if p == path]


class CorpusHandler(BaseHTTPRequestHandler):
    server: CorpusServer

    def log_message(self, format: str, *args: object) -> None:  # quiet test output
        pass

    def do_GET(self) -> None:
        srv = self.server
        path = unquote(urlsplit(self.path).path)
        srv.requests.append((path, {k.lower(): v for k, v in self.headers.items()}))
        if srv.fail.get(path, 0) > 0:
            srv.fail[path] -= 1
            self.send_response(503)
            if srv.retry_after is not None:
                self.send_header("Retry-After", srv.retry_after)
            self.send_header("Content-Length", "0")
            self.end_headers()
            return
        file = srv.root / path.lstrip("/")
        if not file.is_file():
            self.send_error(404)
            return
        body = file.read_bytes()
        mtime = int(file.stat().st_mtime)
        validators = {"Last-Modified": email.utils.formatdate(mtime, usegmt=True)}
        if srv.send_etag:
            validators["ETag"] = '"' + hashlib.sha256(body).hexdigest()[:16] + '"'
        if path in srv.cut:
            self.send_response(200)
            self.send_header("Content-Length", str(len(body) + 1000))
            self.end_headers()
            self.wfile.write(body[: len(body) // 2])
            self.wfile.flush()
            self.close_connection = True
            return
        if self._not_modified(validators, mtime):
            self.send_response(304)
            for name, value in validators.items():
                self.send_header(name, value)
            self.end_headers()
            return
        self.send_response(200)
        for name, value in validators.items():
            self.send_header(name, value)
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def _not_modified(self, validators: dict[str, str], mtime: int) -> bool:
        if "If-None-Match" in self.headers and "ETag" in validators:
            return self.headers["If-None-Match"] == validators["ETag"]
        if "If-Modified-Since" in self.headers:
            since = email.utils.parsedate_to_datetime(self.headers["If-Modified-Since"])
            return dt.datetime.fromtimestamp(mtime, dt.timezone.utc) <= since
        return False


@pytest.fixture
def server(tmp_path: Path) -> Iterator[CorpusServer]:
    root = tmp_path / "served"
    (root / "wahapedia-11e").mkdir(parents=True)
    for name in TABLES:
        shutil.copyfile(EXPORT / name, root / "wahapedia-11e" / name)
    srv = CorpusServer(root)
    thread = threading.Thread(target=srv.serve_forever, kwargs={"poll_interval": 0.01}, daemon=True)
    thread.start()
    yield srv
    srv.shutdown()
    srv.server_close()
    thread.join()


@pytest.fixture
def client() -> Iterator[httpx.Client]:
    with httpx.Client(trust_env=False, timeout=5.0, follow_redirects=True) as c:  # no proxy for 127.0.0.1
        yield c


@pytest.fixture
def raw(tmp_path: Path) -> Path:
    path = tmp_path / "raw"
    path.mkdir()
    return path


def source(source_id: str, file: str, url: str | None = None, sha256: str | None = None) -> Source:
    return Source(
        source_id=source_id, title=source_id, file=file, format="wahapedia-csv", publisher="Wahapedia",
        edition=None, kind="export", game_mode=None, version=None, version_date=None,
        origin="test server", url=url, sha256=sha256,
    )


def factions(srv: CorpusServer, **fields) -> Source:
    return source("factions", "Factions.csv", srv.url("wahapedia-11e/Factions.csv"), **fields)


def fetch(sources, raw: Path, client: httpx.Client, **options):
    options = {"delay_seconds": 0, "backoff_seconds": 0, **options}
    return fetch_sources(sources, raw, client=client, **options)


def files_in(folder: Path) -> list[str]:
    return sorted(p.name for p in folder.iterdir())


# --- downloads and conditional requests -----------------------------------------------------------


def test_first_fetch_downloads_the_file_byte_for_byte(server, client, raw):
    report = fetch([factions(server)], raw, client)

    (result,) = report.results
    assert result.status is FetchStatus.downloaded
    assert result.bytes_written == (EXPORT / "Factions.csv").stat().st_size
    assert (raw / "Factions.csv").read_bytes() == (EXPORT / "Factions.csv").read_bytes()
    assert files_in(raw) == [STATE_NAME, "Factions.csv"]  # no temp file left over
    umask = os.umask(0)
    os.umask(umask)
    assert stat.S_IMODE((raw / "Factions.csv").stat().st_mode) == 0o666 & ~umask  # not mkstemp's 0600
    (headers,) = server.requests_for("/wahapedia-11e/Factions.csv")
    assert headers["user-agent"] == USER_AGENT and USER_AGENT.startswith("wh40k-rules-db/")
    assert "if-none-match" not in headers and "if-modified-since" not in headers


def test_second_fetch_sends_the_etag_and_a_304_leaves_the_file_untouched(server, client, raw):
    fetch([factions(server)], raw, client)
    state = json.loads((raw / STATE_NAME).read_text())
    etag = state["files"]["Factions.csv"]["etag"]
    os.utime(raw / "Factions.csv", ns=(1_000_000_000_000_000_000, 1_000_000_000_000_000_000))

    report = fetch([factions(server)], raw, client)

    assert report.results[0].status is FetchStatus.not_modified
    assert report.results[0].bytes_written == 0
    second = server.requests_for("/wahapedia-11e/Factions.csv")[1]
    assert second["if-none-match"] == etag
    assert (raw / "Factions.csv").stat().st_mtime_ns == 1_000_000_000_000_000_000
    assert (raw / "Factions.csv").read_bytes() == (EXPORT / "Factions.csv").read_bytes()


def test_without_etag_the_last_modified_date_is_sent(server, client, raw):
    server.send_etag = False
    fetch([factions(server)], raw, client)

    report = fetch([factions(server)], raw, client)

    assert report.results[0].status is FetchStatus.not_modified
    second = server.requests_for("/wahapedia-11e/Factions.csv")[1]
    assert "if-none-match" not in second
    assert second["if-modified-since"].endswith("GMT")


def test_a_changed_upstream_file_is_downloaded_again(server, client, raw):
    fetch([factions(server)], raw, client)
    (server.root / "wahapedia-11e" / "Factions.csv").write_bytes(b'"id|name|link|"\r\n')

    report = fetch([factions(server)], raw, client)

    assert report.results[0].status is FetchStatus.downloaded
    assert (raw / "Factions.csv").read_bytes() == b'"id|name|link|"\r\n'


def test_a_locally_edited_file_gets_no_validators_and_is_restored(server, client, raw):
    fetch([factions(server)], raw, client)
    (raw / "Factions.csv").write_bytes(b"edited by hand")

    report = fetch([factions(server)], raw, client)

    assert report.results[0].status is FetchStatus.downloaded
    second = server.requests_for("/wahapedia-11e/Factions.csv")[1]
    assert "if-none-match" not in second and "if-modified-since" not in second
    assert (raw / "Factions.csv").read_bytes() == (EXPORT / "Factions.csv").read_bytes()


def test_a_source_without_url_is_skipped_with_a_note_even_with_a_mirror(server, client, raw):
    report = fetch([source("local-seed", "seed.txt")], raw, client, mirror=server.url())

    (result,) = report.results
    assert result.status is FetchStatus.skipped
    assert "no url" in result.note
    assert server.requests == []
    report.raise_for_failures()  # a skip is not a failure


# --- retries, politeness, failures ----------------------------------------------------------------


def test_retries_with_exponential_backoff_succeed_after_two_503(server, client, raw):
    server.fail["/wahapedia-11e/Factions.csv"] = 2
    waits: list[float] = []

    report = fetch([factions(server)], raw, client, retries=3, backoff_seconds=0.25, sleep=waits.append)

    assert report.results[0].status is FetchStatus.downloaded
    assert len(server.requests_for("/wahapedia-11e/Factions.csv")) == 3
    assert waits == [0.25, 0.5]
    assert (raw / "Factions.csv").read_bytes() == (EXPORT / "Factions.csv").read_bytes()


def test_retry_after_is_honoured(server, client, raw):
    server.fail["/wahapedia-11e/Factions.csv"] = 1
    server.retry_after = "7"
    waits: list[float] = []

    report = fetch([factions(server)], raw, client, backoff_seconds=0.25, sleep=waits.append)

    assert report.results[0].status is FetchStatus.downloaded
    assert waits == [7.0]


def test_gives_up_after_the_retries_and_says_how_to_fix_it(server, client, raw):
    server.fail["/wahapedia-11e/Factions.csv"] = 99

    report = fetch([factions(server)], raw, client, retries=2)

    (result,) = report.results
    assert result.status is FetchStatus.failed
    assert len(server.requests) == 3
    assert "'factions'" in result.note and server.url("wahapedia-11e/Factions.csv") in result.note
    assert "failed after 3 attempts" in result.note and "503" in result.note and "--mirror" in result.note
    assert files_in(raw) == []
    with pytest.raises(FetchError, match=r"1 of 1 sources failed: source 'factions'"):
        report.raise_for_failures()


def test_a_missing_file_fails_at_once_naming_source_and_url(server, client, raw):
    missing = source("missing", "Missing.csv", server.url("wahapedia-11e/Missing.csv"))

    report = fetch([missing, factions(server)], raw, client)

    assert [r.status for r in report.results] == [FetchStatus.failed, FetchStatus.downloaded]
    assert len(server.requests_for("/wahapedia-11e/Missing.csv")) == 1  # a 404 is not retried
    assert "404" in report.results[0].note and server.url("wahapedia-11e/Missing.csv") in report.results[0].note


def test_a_polite_delay_separates_requests_to_one_host(server, client, raw):
    other = source("source-table", "Source.csv", server.url("wahapedia-11e/Source.csv"))
    waits: list[float] = []

    fetch([factions(server), other], raw, client, delay_seconds=1.0, sleep=waits.append)

    assert len(waits) == 1 and 0.5 < waits[0] <= 1.0


def test_an_interrupted_download_leaves_no_half_file_and_keeps_the_previous_one(server, client, raw):
    fetch([factions(server)], raw, client)
    (server.root / "wahapedia-11e" / "Factions.csv").write_bytes(b"new content " * 500)
    server.cut.add("/wahapedia-11e/Factions.csv")

    report = fetch([factions(server)], raw, client, retries=1)

    (result,) = report.results
    assert result.status is FetchStatus.failed
    assert "RemoteProtocolError" in result.note
    assert (raw / "Factions.csv").read_bytes() == (EXPORT / "Factions.csv").read_bytes()
    assert files_in(raw) == [STATE_NAME, "Factions.csv"]


def test_a_sha256_mismatch_is_refused_and_says_how_to_accept_it(server, client, raw):
    (raw / "Factions.csv").write_bytes(b"previous snapshot")
    actual = hashlib.sha256((EXPORT / "Factions.csv").read_bytes()).hexdigest()

    report = fetch([factions(server, sha256="0" * 64)], raw, client)

    (result,) = report.results
    assert result.status is FetchStatus.failed
    assert "upstream file changed" in result.note
    assert f'set sha256 = "{actual}"' in result.note
    assert (raw / "Factions.csv").read_bytes() == b"previous snapshot"
    assert files_in(raw) == ["Factions.csv"]


def test_a_matching_sha256_is_accepted(server, client, raw):
    actual = hashlib.sha256((EXPORT / "Factions.csv").read_bytes()).hexdigest()

    report = fetch([factions(server, sha256=actual)], raw, client)

    assert report.results[0].status is FetchStatus.downloaded


# --- folder sources (an export of several tables) -------------------------------------------------


def export_source(srv: CorpusServer, sha256: str | None = None) -> Source:
    return source("wahapedia-11e-export", "wahapedia-11e", srv.url("wahapedia-11e/"), sha256)


def export_sha256() -> str:
    return folder_sha256({name: hashlib.sha256((EXPORT / name).read_bytes()).digest() for name in TABLES})


def test_a_folder_source_fetches_every_table_and_the_build_can_read_it(server, client, raw):
    export = export_source(server, export_sha256())

    report = fetch([export], raw, client, folder_files={export.source_id: TABLES})

    (result,) = report.results
    assert result.status is FetchStatus.downloaded and result.note == "3 files: 3 downloaded"
    assert files_in(raw / "wahapedia-11e") == sorted(TABLES)
    snapshot = read_snapshot(raw, export)  # the build's reader accepts it, sha256 included
    assert set(snapshot.files) == {"Factions", "Source", "Last_update"}
    assert files_in(raw) == [STATE_NAME, "wahapedia-11e"]  # the state stays out of the export folder

    again = fetch([export], raw, client, folder_files={export.source_id: TABLES})
    assert again.results[0].status is FetchStatus.not_modified
    assert again.results[0].note == "3 files: 3 not modified"


def test_a_folder_is_replaced_all_together_or_not_at_all(server, client, raw):
    export = export_source(server)
    fetch([export], raw, client, folder_files={export.source_id: TABLES})
    (server.root / "wahapedia-11e" / "Factions.csv").write_bytes(b"changed")
    server.fail["/wahapedia-11e/Source.csv"] = 99

    report = fetch([export], raw, client, retries=0, folder_files={export.source_id: TABLES})

    assert report.results[0].status is FetchStatus.failed
    for name in TABLES:
        assert (raw / "wahapedia-11e" / name).read_bytes() == (EXPORT / name).read_bytes()
    assert files_in(raw / "wahapedia-11e") == sorted(TABLES)


def test_a_folder_source_without_its_table_list_fails_with_the_fix(server, client, raw):
    report = fetch([export_source(server)], raw, client)

    assert report.results[0].status is FetchStatus.failed
    assert 'files = ["Datasheets.csv", ...]' in report.results[0].note
    assert not (raw / "wahapedia-11e").exists()


def test_read_folder_files_reads_the_files_key(tmp_path):
    (tmp_path / "manifest.toml").write_text(
        '[[source]]\nid = "seed"\nfile = "seed.txt"\n\n'
        '[[source]]\nid = "export"\nfile = "wahapedia-11e"\nfiles = ["Factions.csv", "Source.csv"]\n',
        encoding="utf-8",
    )
    assert read_folder_files(tmp_path) == {"export": ("Factions.csv", "Source.csv")}

    (tmp_path / "manifest.toml").write_text('[[source]]\nid = "x"\nfiles = ["../secrets"]\n', encoding="utf-8")
    with pytest.raises(ManifestError, match=r"entry 1 \(x\): files: '../secrets' is not a plain file name"):
        read_folder_files(tmp_path)


# --- mirrors --------------------------------------------------------------------------------------


def test_mirror_dir_copies_by_relative_name_or_base_name(server, client, raw):
    nowhere = "http://127.0.0.1:9/"  # never asked: the mirror replaces the url
    export = source("wahapedia-11e-export", "wahapedia-11e", nowhere)
    flat = source("factions", "renamed/Factions.csv", nowhere + "Factions.csv")  # by base name
    shutil.copyfile(EXPORT / "Factions.csv", server.root / "Factions.csv")

    report = fetch([export, flat], raw, client, mirror=str(server.root), folder_files={export.source_id: TABLES})

    assert [r.status for r in report.results] == [FetchStatus.copied, FetchStatus.copied]
    for name in TABLES:
        assert (raw / "wahapedia-11e" / name).read_bytes() == (EXPORT / name).read_bytes()
    assert (raw / "renamed" / "Factions.csv").read_bytes() == (EXPORT / "Factions.csv").read_bytes()
    assert server.requests == []

    again = fetch([flat], raw, client, mirror=str(server.root))
    assert again.results[0].status is FetchStatus.not_modified


def test_mirror_dir_without_the_file_fails_naming_where_it_looked(server, client, raw):
    report = fetch([source("absent", "Absent.csv", "http://127.0.0.1:9/Absent.csv")], raw, client,
                   mirror=str(server.root))

    assert report.results[0].status is FetchStatus.failed
    assert str(server.root / "Absent.csv") in report.results[0].note


def test_mirror_url_replaces_each_source_url(server, client, raw):
    elsewhere = source("factions", "wahapedia-11e/Factions.csv", server.url("elsewhere/Factions.csv"))

    report = fetch([elsewhere], raw, client, mirror=server.url())

    assert report.results[0].status is FetchStatus.downloaded
    assert [path for path, _ in server.requests] == ["/wahapedia-11e/Factions.csv"]
    assert (raw / "wahapedia-11e" / "Factions.csv").read_bytes() == (EXPORT / "Factions.csv").read_bytes()


def test_a_mirror_that_is_neither_folder_nor_url_is_an_error(raw, client):
    with pytest.raises(FetchError, match="not a folder"):
        fetch([], raw, client, mirror=str(raw / "no-such-folder"))


# --- the command line -----------------------------------------------------------------------------


def wh40k(*args: str) -> subprocess.CompletedProcess:
    env = {k: v for k, v in os.environ.items() if "proxy" not in k.lower()}  # 127.0.0.1 only, directly
    return subprocess.run(
        [sys.executable, "-m", "pipeline.cli", *args], capture_output=True, text=True, cwd=ROOT, env=env
    )


def write_manifest(raw: Path, entries: list[tuple[str, str, str]]) -> None:
    text = "".join(
        f'[[source]]\nid = "{source_id}"\nfile = "{file}"\nurl = "{url}"\nformat = "wahapedia-csv"\n'
        f'title = "{source_id}"\npublisher = "Wahapedia"\nkind = "export"\norigin = "test server"\n\n'
        for source_id, file, url in entries
    )
    (raw / "manifest.toml").write_text(text, encoding="utf-8")


def test_cli_fetch_prints_a_summary(server, raw):
    write_manifest(raw, [("factions", "Factions.csv", server.url("wahapedia-11e/Factions.csv")),
                         ("source-table", "Source.csv", server.url("wahapedia-11e/Source.csv"))])

    out = wh40k("fetch", "--raw", str(raw), "--delay", "0", "--only", "factions", "--format", "json")

    assert out.returncode == 0, out.stderr
    rows = json.loads(out.stdout)
    assert [(r["source"], r["status"]) for r in rows] == [("factions", "downloaded")]
    assert "GET " + server.url("wahapedia-11e/Factions.csv") in out.stderr  # progress on stderr
    assert (raw / "Factions.csv").read_bytes() == (EXPORT / "Factions.csv").read_bytes()
    assert not (raw / "Source.csv").exists()


def test_cli_fetch_failure_is_one_error_line_and_exit_1(server, raw):
    missing = server.url("wahapedia-11e/Missing.csv")
    write_manifest(raw, [("missing", "Missing.csv", missing)])

    out = wh40k("fetch", "--raw", str(raw), "--delay", "0")

    assert out.returncode == 1
    assert "missing" in out.stdout and "failed" in out.stdout  # the summary is still printed
    last = out.stderr.strip().splitlines()[-1]
    assert last.startswith("Error: 1 of 1 sources failed: source 'missing'") and missing in last
    assert "Traceback" not in out.stderr

    out = wh40k("fetch", "--raw", str(raw), "--only", "nope")
    assert out.returncode == 1
    assert out.stderr.strip().splitlines()[-1] == (
        f"Error: --only nope: not a source id of {raw / 'manifest.toml'}; known ids: missing"
    )
