"""Fetch against a hostile or broken server: a body cut short (with and without Content-Length),
a wrong Content-Length, a redirect to another host, an oversize body, a body slower than the
deadline, a file outside the raw folder, temporary files of a killed fetch.

Every server is started by the test on a loopback address (127.0.0.1, 127.0.0.2); every loop of a
handler is bounded. In each failure the previous file is kept and no temporary file is left.
"""

from __future__ import annotations

import hashlib
import threading
import time
from collections.abc import Iterator
from dataclasses import dataclass
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

import httpx
import pytest

from pipeline.fetch import FetchStatus, fetch_sources
from pipeline.manifest import FetchSettings
from schemas.records import Source

BODY = b"id|name|link|\r\nAS|Adepta Sororitas|x|\r\n" * 40  # 1,560 bytes
OLD = b"the previous snapshot"


@dataclass
class Route:
    """How the server answers one path.

    ``mode``: ``whole`` (Content-Length), ``chunked``, ``close`` (neither: the body ends when the
    connection closes), ``cut-chunked`` / ``cut-close`` (half the body, then the connection
    closes), ``long-length`` (a Content-Length 1000 bytes more than is sent), ``slow`` (chunked, one
    byte every 0.05 s, at most 400), ``redirect`` (302 to ``location``), ``busy`` (503).
    """

    mode: str
    body: bytes = BODY
    location: str = ""


class Server(ThreadingHTTPServer):
    daemon_threads = True
    block_on_close = False  # a slow handler ends on its own when the client has gone

    def __init__(self, host: str) -> None:
        super().__init__((host, 0), Handler)
        self.routes: dict[str, Route] = {}
        self.requests: list[str] = []

    def url(self, path: str, host: str | None = None) -> str:
        return f"http://{host or self.server_address[0]}:{self.server_address[1]}{path}"


class Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"
    server: Server

    def log_message(self, format: str, *args: object) -> None:
        pass

    def do_GET(self) -> None:
        self.server.requests.append(self.path)
        route = self.server.routes.get(self.path)
        if route is None:
            self.send_error(404)
            return
        body, mode = route.body, route.mode
        if mode == "busy":
            self.send_response(503)
            self.send_header("Content-Length", "0")
            self.end_headers()
            return
        if mode == "redirect":
            self.send_response(302)
            self.send_header("Location", route.location)
            self.send_header("Content-Length", "0")
            self.end_headers()
            return
        self.send_response(200)
        if mode in ("whole", "long-length"):
            self.send_header("Content-Length", str(len(body) + (1000 if mode == "long-length" else 0)))
        elif mode in ("chunked", "cut-chunked", "slow"):
            self.send_header("Transfer-Encoding", "chunked")
        self.send_header("Connection", "close")
        self.end_headers()
        self.close_connection = True
        try:
            if mode in ("whole", "close"):
                self.wfile.write(body)
            elif mode in ("cut-close", "long-length"):
                self.wfile.write(body[: len(body) // 2])
            elif mode == "chunked":
                self._chunk(body)
                self.wfile.write(b"0\r\n\r\n")
            elif mode == "cut-chunked":
                self._chunk(body[: len(body) // 2])  # and no last chunk
            elif mode == "slow":
                for byte in body[:400]:
                    self._chunk(bytes([byte]))
                    time.sleep(0.05)
                self.wfile.write(b"0\r\n\r\n")
        except (BrokenPipeError, ConnectionResetError):
            pass

    def _chunk(self, data: bytes) -> None:
        self.wfile.write(f"{len(data):x}\r\n".encode() + data + b"\r\n")
        self.wfile.flush()


def start(host: str) -> Server:
    srv = Server(host)
    threading.Thread(target=srv.serve_forever, kwargs={"poll_interval": 0.01}, daemon=True).start()
    return srv


@pytest.fixture
def server() -> Iterator[Server]:
    srv = start("127.0.0.2")
    yield srv
    srv.shutdown()
    srv.server_close()


@pytest.fixture
def other() -> Iterator[Server]:
    """A second server, reached as ``localhost`` (another host name than 127.0.0.2)."""
    srv = start("127.0.0.1")
    yield srv
    srv.shutdown()
    srv.server_close()


@pytest.fixture
def client() -> Iterator[httpx.Client]:
    with httpx.Client(trust_env=False, timeout=5.0) as c:  # no proxy for loopback
        yield c


@pytest.fixture
def raw(tmp_path: Path) -> Path:
    path = tmp_path / "raw"
    path.mkdir()
    (path / "Factions.csv").write_bytes(OLD)
    return path


def source(url: str, file: str = "Factions.csv", sha256: str | None = None) -> Source:
    return Source(
        source_id="factions", title="factions", file=file, format="wahapedia-csv", publisher="Wahapedia",
        edition=None, kind="export", game_mode=None, version=None, version_date=None, origin="test server",
        url=url, sha256=sha256,
    )


def fetch(sources: list[Source], raw: Path, client: httpx.Client, **options):
    return fetch_sources(sources, raw, client=client, **{"delay_seconds": 0, "backoff_seconds": 0, **options})


def failed_note(report) -> str:
    (result,) = report.results
    assert result.status is FetchStatus.failed
    return result.note


def assert_old_file_kept(raw: Path) -> None:
    assert (raw / "Factions.csv").read_bytes() == OLD
    assert sorted(p.name for p in raw.iterdir()) == ["Factions.csv"]  # no temporary file, no state


# --- a body is whole, or the old file stays --------------------------------------------------------


def test_a_whole_chunked_body_replaces_the_file(server, client, raw):
    server.routes["/f"] = Route("chunked")
    report = fetch([source(server.url("/f"))], raw, client)
    assert report.results[0].status is FetchStatus.downloaded
    assert (raw / "Factions.csv").read_bytes() == BODY


def test_a_chunked_body_cut_short_without_content_length_is_an_error(server, client, raw):
    server.routes["/f"] = Route("cut-chunked")
    note = failed_note(fetch([source(server.url("/f"))], raw, client, retries=1))
    assert "failed after 2 attempts" in note and "RemoteProtocolError" in note and "incomplete chunked read" in note
    assert server.requests == ["/f", "/f"]
    assert_old_file_kept(raw)


def test_a_body_whose_end_is_the_connection_closing_is_refused_without_sha256(server, client, raw):
    server.routes["/f"] = Route("cut-close")
    note = failed_note(fetch([source(server.url("/f"))], raw, client))
    assert note == (
        f"source 'factions': GET {server.url('/f')}: the server states neither the body's length "
        "(Content-Length) nor sends it chunked, so a body cut short could not be told from a whole one; "
        "nothing was written. Add the file's sha256 to its [[source]] entry to accept it from this server"
    )
    assert_old_file_kept(raw)


def test_with_sha256_such_a_body_is_accepted_whole_and_refused_cut_short(server, client, raw):
    sha = hashlib.sha256(BODY).hexdigest()
    server.routes["/cut"] = Route("cut-close")
    note = failed_note(fetch([source(server.url("/cut"), sha256=sha)], raw, client))
    assert note.startswith(f"source 'factions': the content from {server.url('/cut')} has sha256 "
                           f"{hashlib.sha256(BODY[:len(BODY) // 2]).hexdigest()} but")
    assert_old_file_kept(raw)

    server.routes["/whole"] = Route("close")
    report = fetch([source(server.url("/whole"), sha256=sha)], raw, client)
    assert report.results[0].status is FetchStatus.downloaded
    assert (raw / "Factions.csv").read_bytes() == BODY


def test_a_content_length_longer_than_the_body_is_an_error(server, client, raw):
    server.routes["/f"] = Route("long-length")
    note = failed_note(fetch([source(server.url("/f"))], raw, client, retries=0))
    assert "failed after 1 attempts" in note and "RemoteProtocolError" in note
    assert_old_file_kept(raw)


# --- redirects ---------------------------------------------------------------------------------------


def test_a_redirect_on_the_same_host_is_followed(server, client, raw):
    server.routes["/old"] = Route("redirect", location="/new")
    server.routes["/new"] = Route("whole")
    report = fetch([source(server.url("/old"))], raw, client)
    assert report.results[0].status is FetchStatus.downloaded
    assert server.requests == ["/old", "/new"]
    assert (raw / "Factions.csv").read_bytes() == BODY


def test_a_redirect_to_another_host_is_refused_unless_the_manifest_allows_it(server, other, client, raw):
    elsewhere = other.url("/f", host="localhost")
    server.routes["/f"] = Route("redirect", location=elsewhere)
    other.routes["/f"] = Route("whole")

    note = failed_note(fetch([source(server.url("/f"))], raw, client))
    assert note == (
        f"source 'factions': GET {server.url('/f')} redirects to {elsewhere}, on another host (localhost); "
        "nothing was fetched from there. If that host is to be trusted, add allow_redirect_hosts = "
        '["localhost"] to the source\'s [[source]] entry of the raw manifest, or put the final URL there'
    )
    assert other.requests == []
    assert_old_file_kept(raw)

    allowed = {"factions": FetchSettings(allow_redirect_hosts=("localhost",))}
    report = fetch([source(server.url("/f"))], raw, client, settings=allowed)
    assert report.results[0].status is FetchStatus.downloaded
    assert other.requests == ["/f"] and (raw / "Factions.csv").read_bytes() == BODY


def test_a_redirect_loop_stops_after_five_hops(server, client, raw):
    server.routes["/a"] = Route("redirect", location="/b")
    server.routes["/b"] = Route("redirect", location="/a")
    note = failed_note(fetch([source(server.url("/a"))], raw, client))
    assert note.startswith(f"source 'factions': GET {server.url('/a')} redirects more than 5 times")
    assert len(server.requests) == 6
    assert_old_file_kept(raw)


# --- size cap ------------------------------------------------------------------------------------


def test_an_oversize_body_is_refused_before_it_is_read_when_its_length_is_given(server, client, raw):
    server.routes["/f"] = Route("whole")
    capped = {"factions": FetchSettings(max_bytes=1000)}
    note = failed_note(fetch([source(server.url("/f"))], raw, client, settings=capped))
    assert note == (
        f"source 'factions': GET {server.url('/f')}: the source's files are larger than its max_bytes = 1000 "
        f"({len(BODY)} bytes announced); nothing was written, the previous files are kept. If the file is really that "
        "large, set max_bytes = <bytes> in its [[source]] entry of the raw manifest"
    )
    assert_old_file_kept(raw)


def test_an_oversize_chunked_body_is_cut_off_at_the_cap(server, client, raw):
    server.routes["/f"] = Route("chunked")
    capped = {"factions": FetchSettings(max_bytes=len(BODY) - 1)}
    note = failed_note(fetch([source(server.url("/f"))], raw, client, settings=capped))
    assert f"larger than its max_bytes = {len(BODY) - 1}; nothing was written" in note
    assert_old_file_kept(raw)

    exact = {"factions": FetchSettings(max_bytes=len(BODY))}
    assert fetch([source(server.url("/f"))], raw, client, settings=exact).results[0].status is FetchStatus.downloaded


# --- deadline ------------------------------------------------------------------------------------


def test_a_body_slower_than_the_deadline_fails_and_keeps_the_old_file(server, client, raw):
    server.routes["/f"] = Route("slow")
    note = failed_note(fetch([source(server.url("/f"))], raw, client, deadline_seconds=0.3))
    assert note == (
        f"source 'factions': GET {server.url('/f')}: the fetch passed its deadline of 0.3 s; the previous files "
        "are kept. Fetch again (--only this source), or allow more time with --deadline SECONDS"
    )
    assert_old_file_kept(raw)


def test_a_retry_wait_past_the_deadline_is_not_waited_for(server, client, raw):
    server.routes["/f"] = Route("busy")
    waits: list[float] = []
    note = failed_note(fetch([source(server.url("/f"))], raw, client, sleep=waits.append, backoff_seconds=10.0,
                             deadline_seconds=5.0))
    assert note.startswith(f"source 'factions': GET {server.url('/f')}: the fetch passed its deadline of 5 s")
    assert waits == [] and server.requests == ["/f"]  # a 10 s backoff would pass the deadline: not waited
    assert_old_file_kept(raw)
