"""Fetch: download the sources of the raw manifest into ``raw/``. The only code that touches the network.

Each ``[[source]]`` with a ``url`` is downloaded to ``raw/<file>``:

- a single file: ``url`` points at the file itself;
- a folder of tables (a Wahapedia CSV export, ``file = "wahapedia-10e/"``): ``url`` is the base URL
  of the folder and the entry lists its tables, ``files = ["Datasheets.csv", ...]`` (read by
  ``read_folder_files``); each table is fetched from ``<url>/<table>``. A source is a folder when it
  has ``files``, its ``file`` or ``url`` ends with ``/``, or ``raw/<file>`` is a folder.

A source without ``url`` is a local snapshot (a saved page, say): it is skipped with a note, also
when a mirror is given.

Guarantees:

- **Never a half file.** A body is written to a temporary file in the target's folder
  (``.<name>.<pid>.<random>.fetch.tmp``, ignored by git), flushed to disk, and moved over the
  target with ``os.replace`` only after the whole body arrived and, when the manifest gives
  ``sha256``, only if it matches (for a folder: the folder checksum of ``pipeline.extract``, over
  every table). A body is whole when its ``Content-Length`` bytes arrived, or its chunked encoding
  ended properly; a server that gives neither (the end of the body is just the connection
  closing) is refused unless the manifest gives ``sha256``. In a folder, no table is replaced
  until every table has arrived: if one fails, none is replaced. Temporary files that a killed
  fetch left are removed by the next one (``pipeline.tempfiles``).
- **Inside the raw folder.** A ``file`` outside it (absolute, ``..``, or through a symbolic link)
  is refused, with the check the build makes (``pipeline.manifest.path_problem``).
- **Bounded.** A redirect to another host is refused unless the source's entry lists that host
  in ``allow_redirect_hosts`` (and one from https to http always); at most ``MAX_REDIRECTS`` hops.
  A source's files may have ``DEFAULT_MAX_BYTES`` together (``max_bytes`` in its entry changes
  that); the whole fetch stops at its deadline (``deadline_seconds``): a source not done by then
  fails, keeping its previous files.
- **Conditional requests.** The validators of each downloaded file (``ETag``, ``Last-Modified``)
  and the sha256 of what was written are kept in ``raw/.fetch-state.json``. The next fetch sends
  ``If-None-Match`` / ``If-Modified-Since`` when the file on disk still has that sha256 (and the
  manifest's, for a single file); a ``304`` leaves the file untouched. The state file sits at the
  top of ``raw/``, outside every source's file or folder, so the build never reads it; delete it to
  force a full download.
- **Politeness.** A ``User-Agent`` naming the project, and ``delay_seconds`` between two requests
  to the same host.
- **Retries** with exponential backoff (``backoff_seconds * 2**n``) on connect errors, timeouts,
  interrupted bodies, ``429`` and ``5xx``; a ``Retry-After`` header (seconds or a date) is honoured,
  up to ``MAX_RETRY_AFTER_SECONDS``.

A mirror replaces each source's ``url``: ``mirror="DIR"`` copies ``DIR/<file>`` (or
``DIR/<basename of file>``); ``mirror="http://host/path/"`` downloads ``<mirror>/<file>``.
"""

from __future__ import annotations

import dataclasses
import datetime as dt
import email.utils
import hashlib
import json
import os
import time
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass
from enum import Enum
from importlib import metadata
from pathlib import Path, PurePosixPath
from urllib.parse import quote, urlsplit

import httpx

from pipeline.errors import Wh40kError
from pipeline.manifest import FetchSettings, path_problem
from pipeline.manifest import read_fetch_settings, read_folder_files  # noqa: F401  (re-exported: part of fetch's API)
from pipeline.tempfiles import remove_stale, temp_path
from schemas.records import Source

STATE_NAME = ".fetch-state.json"
STATE_FORMAT = 1
MAX_RETRY_AFTER_SECONDS = 300.0
TIMEOUT = httpx.Timeout(60.0, connect=15.0)
#: The most bytes a fetch may write for one source (its files together), unless its entry says ``max_bytes``.
DEFAULT_MAX_BYTES = 200 * 1024 * 1024
#: The whole fetch's time, unless ``deadline_seconds`` (``--deadline``) says otherwise.
DEFAULT_DEADLINE_SECONDS = 300.0
#: Redirects followed for one request.
MAX_REDIRECTS = 5
_CHUNK_BYTES = 1 << 16


def _project_version() -> str:
    try:
        return metadata.version("wh40k-rules-db")
    except metadata.PackageNotFoundError:
        return "0+unknown"


USER_AGENT = f"wh40k-rules-db/{_project_version()} (+project README)"


class FetchError(Wh40kError):
    """A source could not be fetched, or its content was refused; names the source, the URL and the fix."""


class FetchStatus(str, Enum):
    downloaded = "downloaded"
    not_modified = "not modified"
    copied = "copied from mirror"
    skipped = "skipped"
    failed = "failed"


@dataclass(frozen=True)
class FetchResult:
    """What happened to one source.

    ``file`` is relative to the raw folder; ``origin`` the URL (for a folder: its base URL) or
    mirror path it came from, None when skipped; ``bytes_written`` the bytes written into the raw
    folder (0 when nothing changed); ``note`` a reason (skipped, failed) or a detail.
    """

    source_id: str
    file: str
    status: FetchStatus
    origin: str | None
    bytes_written: int = 0
    note: str | None = None


@dataclass(frozen=True)
class FetchReport:
    """The outcome of ``fetch_sources``: one result per source, in manifest order."""

    results: tuple[FetchResult, ...]
    state_file: Path

    @property
    def failures(self) -> tuple[FetchResult, ...]:
        return tuple(r for r in self.results if r.status is FetchStatus.failed)

    def counts(self) -> dict[str, int]:
        """Number of sources per status, e.g. ``{"downloaded": 2, "skipped": 1}`` (zeros left out)."""
        counts: dict[str, int] = {}
        for r in self.results:
            counts[r.status.value] = counts.get(r.status.value, 0) + 1
        return counts

    def rows(self) -> list[dict[str, object]]:
        """One plain row per source (source, file, status, bytes, origin, note) for rendering."""
        return [
            {"source": r.source_id, "file": r.file, "status": r.status.value, "bytes": r.bytes_written,
             "origin": r.origin, "note": r.note}
            for r in self.results
        ]

    def raise_for_failures(self) -> None:
        """Raise ``FetchError`` when a source failed: how many, and the first one's reason."""
        failed = self.failures
        if not failed:
            return
        message = f"{len(failed)} of {len(self.results)} sources failed: {failed[0].note}"
        if len(failed) > 1:
            message += f"; and {len(failed) - 1} more, listed in the summary"
        raise FetchError(message + " (a failed source keeps its previous files)")


def folder_sha256(file_digests: Mapping[str, bytes]) -> str:
    """The checksum of a folder source, from the sha256 digest of each file by name.

    The same as ``pipeline.extract`` computes for a folder: files in name order, each contributing
    its name and its sha256 digest.

    >>> folder_sha256({"b.csv": hashlib.sha256(b"b").digest(), "a.csv": hashlib.sha256(b"a").digest()})[:12]
    'bcefc64d0231'
    """
    digest = hashlib.sha256()
    for name in sorted(file_digests):
        digest.update(name.encode())
        digest.update(file_digests[name])
    return digest.hexdigest()


def fetch_sources(
    sources: Sequence[Source],
    raw_dir: Path,
    *,
    mirror: str | None = None,
    folder_files: Mapping[str, Sequence[str]] | None = None,
    client: httpx.Client | None = None,
    delay_seconds: float = 1.0,
    retries: int = 3,
    backoff_seconds: float = 0.5,
    settings: Mapping[str, FetchSettings] | None = None,
    deadline_seconds: float = DEFAULT_DEADLINE_SECONDS,
    progress: Callable[[str], None] = lambda _message: None,
    sleep: Callable[[float], None] = time.sleep,
) -> FetchReport:
    """Download (or copy from ``mirror``) each source's file or folder into ``raw_dir``.

    ``folder_files`` maps a folder source's id to its table names (``read_folder_files``; when
    None, taken from ``settings``); ``settings`` maps a source's id to its fetch-only keys
    (``read_fetch_settings``: its tables, the hosts it may be redirected to, its size cap);
    ``mirror`` is a folder or an ``http(s)://`` base URL used instead of each source's ``url``;
    ``client`` an httpx client to use (one is made and closed when None; redirects are followed
    by this module, one hop at a time, whatever the client's setting); ``delay_seconds`` the pause
    between requests to one host; ``retries`` the number of retries after a first failed attempt,
    waiting ``backoff_seconds * 2**n`` (or ``Retry-After``); ``deadline_seconds`` the time the
    whole fetch may take (a source not done by then fails; the time-outs of each request are cut
    to what is left, so a fetch ends at most one read time-out, 60 s, past it);
    ``progress`` receives one line per step; ``sleep`` is how waiting is done (tests pass a recorder).

    Returns a ``FetchReport`` with one result per source; a source that fails is reported (status
    ``failed`` with the reason) and the others still run: call ``report.raise_for_failures()``.
    Raises ``FetchError`` only when the mirror is neither a folder nor an http(s) URL, or the state
    file cannot be written.
    """
    mirror_dir, mirror_url = _read_mirror(mirror)
    deadline = time.monotonic() + deadline_seconds
    shown_raw_dir = raw_dir
    raw_dir = raw_dir.resolve()  # temp files are absolute paths: compare like with like
    settings = dict(settings or {})
    if folder_files is None:
        folder_files = {sid: s.files for sid, s in settings.items() if s.files}
    state = _FetchState.load(raw_dir / STATE_NAME, progress)
    own_client = client is None
    if client is None:
        client = httpx.Client(timeout=TIMEOUT)
    run = _Run(
        raw_dir=raw_dir,
        shown_raw_dir=shown_raw_dir,
        mirror_dir=mirror_dir,
        mirror_url=mirror_url,
        folder_files={k: tuple(v) for k, v in folder_files.items()},
        settings=settings,
        state=state,
        http=_Http(client, delay_seconds, retries, backoff_seconds, progress, sleep, deadline, deadline_seconds),
        progress=progress,
    )
    run.remove_stale_temps(raw_dir)
    try:
        results = tuple(run.fetch(source) for source in sources)
    finally:
        if own_client:
            client.close()
        state.save()
    return FetchReport(results, state.path)


# --- the run over the sources -------------------------------------------------------------------


@dataclass
class _Staged:
    """One file ready to be committed: new content in ``temp`` (None: the file is unchanged)."""

    rel: str
    target: Path
    status: FetchStatus
    temp: Path | None
    digest: bytes
    size: int
    url: str | None = None  # http only: recorded in the state with ``headers``
    headers: httpx.Headers | None = None
    detail: str | None = None


@dataclass
class _Run:
    raw_dir: Path
    shown_raw_dir: Path  # as the caller gave it, for messages
    mirror_dir: Path | None
    mirror_url: str | None
    folder_files: dict[str, tuple[str, ...]]
    settings: dict[str, FetchSettings]
    state: _FetchState
    http: _Http
    progress: Callable[[str], None]
    cleaned: set[Path] = dataclasses.field(default_factory=set)

    def remove_stale_temps(self, folder: Path) -> None:
        """Remove, once per run and folder, the temporary files of fetches that were killed."""
        if folder in self.cleaned:
            return
        self.cleaned.add(folder)
        for stale in remove_stale(folder, "fetch"):
            self.progress(f"removed {stale}: a temporary file of an earlier fetch that was killed")

    def fetch(self, source: Source) -> FetchResult:
        origin = str(self.mirror_dir) if self.mirror_dir else self.mirror_url or source.url
        try:
            return self._fetch(source)
        except FetchError as exc:
            self.progress(f"{source.source_id}: failed: {exc}")
            return FetchResult(source.source_id, source.file, FetchStatus.failed, origin, 0, str(exc))

    def _fetch(self, source: Source) -> FetchResult:
        if not source.url:
            self.progress(f"{source.source_id}: skipped (no url)")
            return FetchResult(
                source.source_id, source.file, FetchStatus.skipped, None, 0,
                "no url in the raw manifest: a local snapshot, left as it is (add url = \"...\" to its "
                "entry to fetch it)",
            )
        rel = _relative_file(source, self.shown_raw_dir)
        is_folder = (
            source.source_id in self.folder_files
            or source.file.endswith("/")
            or source.url.endswith("/")
            or (self.raw_dir / rel).is_dir()
        )
        plan, origin = self._plan(source, rel, is_folder)
        folder = self.raw_dir / rel if is_folder else None
        parent = folder if folder is not None else (self.raw_dir / rel).parent
        created = not parent.exists()  # removed again if the fetch fails and leaves it empty
        staged: list[_Staged] = []
        settings = self.settings.get(source.source_id, FetchSettings())
        cap = settings.max_bytes or DEFAULT_MAX_BYTES
        try:
            for member_rel, member_origin in plan:
                problem = path_problem(self.shown_raw_dir, member_rel)
                if problem:
                    raise FetchError(f"source {source.source_id!r}: {problem}")
                budget = _Budget(cap, cap - sum(item.size for item in staged), settings.max_bytes is not None)
                staged.append(self._stage(source, member_rel, member_origin, check_manifest=not is_folder,
                                          budget=budget, allowed_hosts=settings.allow_redirect_hosts))
            self._check_sha256(source, origin, staged, folder)
            written = 0
            for item in staged:
                if item.temp is not None:
                    os.replace(item.temp, item.target)
                    item.temp = None
                    written += item.size
                if item.url is not None and item.headers is not None:
                    self.state.record(item.rel, item.url, item.digest, item.headers)
        finally:
            for item in staged:
                if item.temp is not None:
                    item.temp.unlink(missing_ok=True)
            if created and parent.is_dir() and not any(parent.iterdir()):
                parent.rmdir()
        statuses = [item.status for item in staged]
        status = next(
            (s for s in (FetchStatus.downloaded, FetchStatus.copied) if s in statuses), FetchStatus.not_modified
        )
        note = None
        if is_folder:
            parts = [f"{statuses.count(s)} {s.value}" for s in FetchStatus if statuses.count(s)]
            note = f"{len(staged)} files: " + ", ".join(parts)
        else:
            note = staged[0].detail
        return FetchResult(source.source_id, source.file, status, origin, written, note)

    def _plan(self, source: Source, rel: str, is_folder: bool) -> tuple[list[tuple[str, str | Path]], str]:
        """The files to fetch as (path relative to raw, URL or mirror path), and the origin to report."""
        if self.mirror_dir is not None:
            return self._plan_from_mirror_dir(source, rel, is_folder)
        base = self.mirror_url + quote(rel) if self.mirror_url else source.url
        assert base is not None  # a source without url is skipped before
        if not is_folder:
            return [(rel, base)], base
        members = self.folder_files.get(source.source_id)
        if not members:
            raise FetchError(
                f"source {source.source_id!r}: {source.file!r} is a folder of tables but its raw-manifest "
                f"entry lists none; add files = [\"Datasheets.csv\", ...] to it (fetched from {base}/<name>)"
            )
        base = base if base.endswith("/") else base + "/"
        return [(f"{rel}/{m}", base + quote(m)) for m in members], base

    def _plan_from_mirror_dir(self, source: Source, rel: str, is_folder: bool) -> tuple[list[tuple[str, str | Path]], str]:
        assert self.mirror_dir is not None
        candidates = list(dict.fromkeys([self.mirror_dir / rel, self.mirror_dir / PurePosixPath(rel).name]))
        looked = " and ".join(str(p) for p in candidates)
        if not is_folder:
            for path in candidates:
                if path.is_file():
                    return [(rel, path)], str(path)
            raise FetchError(
                f"source {source.source_id!r}: not in the mirror (looked for {looked}); "
                "add the file to the mirror or fetch without --mirror"
            )
        for folder in candidates:
            if folder.is_dir():
                members = self.folder_files.get(source.source_id) or tuple(
                    sorted(p.name for p in folder.iterdir() if p.is_file() and not p.name.startswith("."))
                )
                missing = [m for m in members if not (folder / m).is_file()]
                if missing:
                    raise FetchError(
                        f"source {source.source_id!r}: the mirror folder {folder} lacks {', '.join(missing)}; "
                        "complete the mirror or fetch without --mirror"
                    )
                if not members:
                    raise FetchError(f"source {source.source_id!r}: the mirror folder {folder} is empty")
                return [(f"{rel}/{m}", folder / m) for m in members], str(folder)
        raise FetchError(
            f"source {source.source_id!r}: not in the mirror (looked for the folder {looked}); "
            "add it to the mirror or fetch without --mirror"
        )

    def _stage(self, source: Source, rel: str, origin: str | Path, *, check_manifest: bool, budget: _Budget,
               allowed_hosts: tuple[str, ...]) -> _Staged:
        target = self.raw_dir / rel
        target.parent.mkdir(parents=True, exist_ok=True)
        self.remove_stale_temps(target.parent)
        local = _file_digest(target)
        if isinstance(origin, Path):
            self.progress(f"{source.source_id}: copy {origin}")
            try:
                with origin.open("rb") as f:
                    chunks = budget.capped(iter(lambda: f.read(_CHUNK_BYTES), b""), source.source_id, str(origin))
                    temp, digest, size = _write_temp(target, chunks)
            except OSError as exc:
                raise FetchError(
                    f"source {source.source_id!r}: cannot copy {origin} from the mirror ({exc.strerror}); "
                    "check the mirror folder"
                ) from None
            if digest == local:
                temp.unlink()
                return _Staged(rel, target, FetchStatus.not_modified, None, digest, 0, detail="same content")
            return _Staged(rel, target, FetchStatus.copied, temp, digest, size)
        manifest_ok = not check_manifest or not source.sha256 or (local is not None and local.hex() == source.sha256)
        conditional = self.state.conditional_headers(rel, origin, local) if manifest_ok else {}
        download = self.http.download(
            source.source_id, origin, conditional, target, budget=budget, allowed_hosts=allowed_hosts,
            verified_by_sha256=bool(source.sha256),
        )
        if download.temp is None:
            assert local is not None
            return _Staged(rel, target, FetchStatus.not_modified, None, local, 0, origin, download.headers)
        if download.digest == local:
            download.temp.unlink()
            return _Staged(rel, target, FetchStatus.not_modified, None, local, 0, origin, download.headers,
                           detail="downloaded again: same content")
        return _Staged(rel, target, FetchStatus.downloaded, download.temp, download.digest, download.size,
                       origin, download.headers)

    def _check_sha256(self, source: Source, origin: str, staged: list[_Staged], folder: Path | None) -> None:
        if not source.sha256:
            return
        if folder is None:
            actual = staged[0].digest.hex()
        else:
            temps = {item.temp for item in staged if item.temp is not None}
            temps = {t.resolve() for t in temps}
            digests = {
                p.name: _file_digest(p)
                for p in folder.resolve().iterdir()
                if p.is_file() and p not in temps and not p.name.endswith(".tmp")
            }
            digests.update({PurePosixPath(item.rel).name: item.digest for item in staged})
            actual = folder_sha256({k: v for k, v in digests.items() if v is not None})
        if actual != source.sha256:
            raise FetchError(
                f"source {source.source_id!r}: the content from {origin} has sha256 {actual} but "
                f"{self.raw_dir / 'manifest.toml'} expects {source.sha256}: the upstream file changed since "
                "the manifest was written. Nothing was written; the previous snapshot is kept. To accept the "
                f"new version, set sha256 = \"{actual}\" in its [[source]] entry (or remove the sha256 line) "
                "and fetch again"
            )


# --- HTTP ------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class _Download:
    temp: Path | None  # None: 304 Not Modified
    digest: bytes
    size: int
    headers: httpx.Headers


@dataclass(frozen=True)
class _Budget:
    """The bytes one file may still have: what the source's cap (``cap``) leaves (``left``)."""

    cap: int
    left: int
    from_manifest: bool  # the cap is the entry's max_bytes (else the default)

    def refusal(self, source_id: str, where: str, size: int | None = None) -> FetchError:
        got = f" ({size} bytes announced)" if size is not None else ""
        cap = (f"its max_bytes = {self.cap}" if self.from_manifest
               else f"the default cap of {self.cap} bytes (DEFAULT_MAX_BYTES)")
        return FetchError(
            f"source {source_id!r}: {where}: the source's files are larger than {cap}{got}; "
            "nothing was written, the previous files are kept. If the file is really that large, "
            "set max_bytes = <bytes> in its [[source]] entry of the raw manifest"
        )

    def capped(self, chunks: Iterable[bytes], source_id: str, where: str) -> Iterator[bytes]:
        """``chunks`` as they come, raising ``FetchError`` once they pass the budget."""
        size = 0
        for chunk in chunks:
            size += len(chunk)
            if size > self.left:
                raise self.refusal(source_id, where)
            yield chunk


class _Retry(Exception):
    """One attempt failed in a way worth retrying: ``problem``, and a ``Retry-After`` wait if any."""

    def __init__(self, problem: str, retry_after: float | None = None) -> None:
        super().__init__(problem)
        self.problem = problem
        self.retry_after = retry_after


class _Http:
    """GET with a polite per-host delay, retries with backoff, redirects checked hop by hop,
    bodies streamed to a temp file within a size budget and the fetch's deadline."""

    def __init__(self, client: httpx.Client, delay_seconds: float, retries: int, backoff_seconds: float,
                 progress: Callable[[str], None], sleep: Callable[[float], None], deadline: float,
                 deadline_seconds: float) -> None:
        self.client = client
        self.delay_seconds = delay_seconds
        self.retries = retries
        self.backoff_seconds = backoff_seconds
        self.progress = progress
        self.sleep = sleep
        self.deadline = deadline  # time.monotonic() at which the whole fetch stops
        self.deadline_seconds = deadline_seconds
        self._last_request: dict[str, float] = {}

    def _past_deadline(self, source_id: str, url: str) -> FetchError:
        return FetchError(
            f"source {source_id!r}: GET {url}: the fetch passed its deadline of {self.deadline_seconds:g} s; "
            "the previous files are kept. Fetch again (--only this source), or allow more time with "
            "--deadline SECONDS"
        )

    def _left(self, source_id: str, url: str) -> float:
        """Seconds left before the deadline; raises ``FetchError`` when none are."""
        left = self.deadline - time.monotonic()
        if left <= 0:
            raise self._past_deadline(source_id, url)
        return left

    def _wait(self, seconds: float, source_id: str, url: str) -> None:
        if seconds <= 0:
            return
        if seconds >= self._left(source_id, url):
            raise self._past_deadline(source_id, url)
        self.sleep(seconds)

    def _timeout(self, left: float) -> httpx.Timeout:
        """The client's time-outs, each cut to the ``left`` seconds before the deadline."""
        t = self.client.timeout
        return httpx.Timeout(connect=min(t.connect or left, left), read=min(t.read or left, left),
                             write=min(t.write or left, left), pool=min(t.pool or left, left))

    def _wait_for_host(self, host: str, source_id: str, url: str) -> None:
        last = self._last_request.get(host)
        if last is not None and self.delay_seconds > 0:
            self._wait(self.delay_seconds - (time.monotonic() - last), source_id, url)

    def download(self, source_id: str, url: str, conditional: dict[str, str], target: Path, *,
                 budget: _Budget, allowed_hosts: tuple[str, ...] = (), verified_by_sha256: bool = False) -> _Download:
        """GET ``url`` into a temp file beside ``target`` (``temp`` None on 304); raises ``FetchError``.

        ``budget``: the bytes the body may have; ``allowed_hosts``: hosts other than the url's that a
        redirect may lead to; ``verified_by_sha256``: the caller checks the body's sha256, so a body
        whose length the server does not state is accepted.
        """
        parts = urlsplit(url)
        if parts.scheme not in ("http", "https") or not parts.netloc:
            raise FetchError(
                f"source {source_id!r}: url {url!r} is not an http(s) URL; fix it in the raw manifest"
            )
        attempts = self.retries + 1
        problem = ""
        for attempt in range(1, attempts + 1):
            try:
                return self._attempt(source_id, url, conditional, target, budget, allowed_hosts,
                                     verified_by_sha256, f" (attempt {attempt}/{attempts})" if attempt > 1 else "")
            except _Retry as retry:
                problem = retry.problem
                if attempt == attempts:
                    break
                wait = retry.retry_after if retry.retry_after is not None else self.backoff_seconds * 2 ** (attempt - 1)
                self.progress(f"{source_id}: {problem}; retry {attempt}/{self.retries} in {wait:g} s")
                self._wait(wait, source_id, url)
        raise FetchError(
            f"source {source_id!r}: GET {url} failed after {attempts} attempts (last: {problem}); "
            "check the network and the url in the raw manifest, try again later, or fetch from a mirror "
            "with --mirror DIR-or-URL"
        )

    def _attempt(self, source_id: str, url: str, conditional: dict[str, str], target: Path, budget: _Budget,
                 allowed_hosts: tuple[str, ...], verified_by_sha256: bool, attempt_note: str) -> _Download:
        """One GET of ``url``, following at most ``MAX_REDIRECTS`` allowed redirects; raises ``_Retry``."""
        current = url
        for _hop in range(MAX_REDIRECTS + 1):
            host = urlsplit(current).netloc
            self._wait_for_host(host, source_id, url)
            self.progress(f"{source_id}: GET {current}" + (" (conditional)" if conditional else "") + attempt_note)
            try:
                with self.client.stream("GET", current, headers={"User-Agent": USER_AGENT, **conditional},
                                        follow_redirects=False,
                                        timeout=self._timeout(self._left(source_id, url))) as response:
                    if response.has_redirect_location and response.next_request is not None:
                        following = str(response.next_request.url)
                        _check_redirect(source_id, url, current, following, allowed_hosts)
                        self.progress(f"{source_id}: {response.status_code} redirect to {following}")
                        current = following
                        continue
                    return self._read(source_id, current, conditional, target, budget, verified_by_sha256, response)
            except (httpx.TimeoutException, httpx.NetworkError, httpx.RemoteProtocolError) as exc:
                if time.monotonic() >= self.deadline:
                    raise self._past_deadline(source_id, url) from None
                raise _Retry(f"{type(exc).__name__}: {exc}") from None
            except (httpx.HTTPError, httpx.InvalidURL) as exc:  # not worth retrying: bad URL, unsupported protocol
                raise FetchError(
                    f"source {source_id!r}: GET {current} failed ({type(exc).__name__}: {exc}); check the url"
                ) from None
            finally:
                self._last_request[host] = time.monotonic()
        raise FetchError(
            f"source {source_id!r}: GET {url} redirects more than {MAX_REDIRECTS} times (last to {current}); "
            "put the final URL in the raw manifest"
        )

    def _read(self, source_id: str, url: str, conditional: dict[str, str], target: Path, budget: _Budget,
              verified_by_sha256: bool, response: httpx.Response) -> _Download:
        status = response.status_code
        if status == 304:
            if not conditional:
                raise FetchError(
                    f"source {source_id!r}: GET {url} answered 304 Not Modified to a request "
                    "without validators; the server is misbehaving, try again later or use --mirror"
                )
            self.progress(f"{source_id}: 304 not modified")
            return _Download(None, b"", 0, response.headers)
        problem = f"{status} {response.reason_phrase}".strip()
        if status == 429 or status >= 500:
            raise _Retry(problem, _retry_after_seconds(response.headers.get("Retry-After")))
        if status != 200:
            raise FetchError(_http_error_message(source_id, url, status, problem, response))
        length = _content_length(response.headers)
        chunked = "chunked" in response.headers.get("Transfer-Encoding", "").lower()
        if length is not None and length > budget.left:
            raise budget.refusal(source_id, f"GET {url}", length)
        if length is None and not chunked and not verified_by_sha256:
            raise FetchError(
                f"source {source_id!r}: GET {url}: the server states neither the body's length (Content-Length) "
                "nor sends it chunked, so a body cut short could not be told from a whole one; nothing was "
                "written. Add the file's sha256 to its [[source]] entry to accept it from this server"
            )
        # pieces as they arrive (no chunk size: a buffer would hide a trickling body from the checks)
        temp, digest, size = _write_temp(target, self._within_deadline(
            budget.capped(response.iter_bytes(), source_id, f"GET {url}"), source_id, url))
        if length is not None and not chunked and response.num_bytes_downloaded != length:
            temp.unlink(missing_ok=True)
            raise _Retry(f"the body has {response.num_bytes_downloaded} bytes, its Content-Length says {length}")
        return _Download(temp, digest, size, response.headers)

    def _within_deadline(self, chunks: Iterable[bytes], source_id: str, url: str) -> Iterator[bytes]:
        for chunk in chunks:
            if time.monotonic() >= self.deadline:
                raise self._past_deadline(source_id, url)
            yield chunk


def _content_length(headers: httpx.Headers) -> int | None:
    """The ``Content-Length`` header as a number, None when absent or not a number.

    >>> _content_length(httpx.Headers({"Content-Length": "120"})), _content_length(httpx.Headers({}))
    (120, None)
    """
    value = headers.get("Content-Length", "").strip()
    return int(value) if value.isdigit() else None


def _check_redirect(source_id: str, url: str, current: str, following: str, allowed_hosts: tuple[str, ...]) -> None:
    """Raise ``FetchError`` when a redirect from ``current`` to ``following`` leaves the url's host
    (and that host is not in ``allowed_hosts``) or goes from https to http.

    >>> _check_redirect("s", "http://a.org/x", "http://a.org/x", "https://a.org:8443/y", ())
    >>> _check_redirect("s", "http://a.org/x", "http://a.org/x", "http://cdn.org/y", ("cdn.org",))
    >>> _check_redirect("s", "http://a.org/x", "http://a.org/x", "http://b.org/y", ())
    Traceback (most recent call last):
    pipeline.fetch.FetchError: source 's': GET http://a.org/x redirects to http://b.org/y, on another host (b.org); nothing was fetched from there. If that host is to be trusted, add allow_redirect_hosts = ["b.org"] to the source's [[source]] entry of the raw manifest, or put the final URL there
    """
    old, new = urlsplit(current), urlsplit(following)
    if old.scheme == "https" and new.scheme != "https":
        raise FetchError(
            f"source {source_id!r}: GET {url} redirects from https to {following}; refused (not encrypted). "
            "Put an https URL in the raw manifest"
        )
    host = (new.hostname or "").lower()
    if host == (urlsplit(url).hostname or "").lower() or host in allowed_hosts:
        return
    raise FetchError(
        f"source {source_id!r}: GET {url} redirects to {following}, on another host ({host}); nothing was "
        f"fetched from there. If that host is to be trusted, add allow_redirect_hosts = [\"{host}\"] to the "
        "source's [[source]] entry of the raw manifest, or put the final URL there"
    )


def _http_error_message(source_id: str, url: str, status: int, problem: str, response: httpx.Response) -> str:
    if 300 <= status < 400:
        where = response.headers.get("Location", "an unknown location")
        return f"source {source_id!r}: GET {url} redirects ({problem}) to {where}; update the url in the raw manifest"
    return (
        f"source {source_id!r}: GET {url} answered {problem}; check the url in the raw manifest "
        "(or the mirror), or fetch from a mirror with --mirror DIR-or-URL"
    )


def _retry_after_seconds(value: str | None, now: dt.datetime | None = None) -> float | None:
    """Seconds to wait from a ``Retry-After`` header (seconds or an HTTP date), capped; None if absent or bad.

    >>> _retry_after_seconds("3")
    3.0
    >>> _retry_after_seconds("Wed, 21 Oct 2015 07:28:10 GMT", dt.datetime(2015, 10, 21, 7, 28, tzinfo=dt.timezone.utc))
    10.0
    >>> _retry_after_seconds("100000"), _retry_after_seconds("soon")
    (300.0, None)
    """
    if value is None:
        return None
    value = value.strip()
    if value.isdigit():
        seconds = float(value)
    else:
        try:
            when = email.utils.parsedate_to_datetime(value)
        except (TypeError, ValueError):
            return None
        if when.tzinfo is None:
            when = when.replace(tzinfo=dt.timezone.utc)
        seconds = max(0.0, (when - (now or dt.datetime.now(dt.timezone.utc))).total_seconds())
    return min(seconds, MAX_RETRY_AFTER_SECONDS)


# --- files -----------------------------------------------------------------------------------------


def _write_temp(target: Path, chunks: Iterable[bytes]) -> tuple[Path, bytes, int]:
    """Write ``chunks`` to a new temp file beside ``target``: (temp path, sha256 digest, size in bytes).

    The temp file (``pipeline.tempfiles``: ``.<name>.<pid>.<random>.fetch.tmp``) is removed if
    anything goes wrong (including an interrupted body, a size or time limit, or Ctrl-C). It gets
    the permissions of a newly created file (those the umask leaves of 0o666).
    """
    temp = temp_path(target, "fetch")
    fd = os.open(temp, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o666)
    digest = hashlib.sha256()
    size = 0
    try:
        with os.fdopen(fd, "wb") as out:
            for chunk in chunks:
                out.write(chunk)
                digest.update(chunk)
                size += len(chunk)
            out.flush()
            os.fsync(out.fileno())
    except BaseException:
        temp.unlink(missing_ok=True)
        raise
    return temp, digest.digest(), size


def _file_digest(path: Path) -> bytes | None:
    """The sha256 digest of a file, or None when it does not exist (or is not a file)."""
    if not path.is_file():
        return None
    digest = hashlib.sha256()
    with path.open("rb") as f:
        for chunk in iter(lambda: f.read(_CHUNK_BYTES), b""):
            digest.update(chunk)
    return digest.digest()


def _relative_file(source: Source, raw_dir: Path) -> str:
    """The source's ``file`` as a clean relative path inside ``raw_dir``; raises ``FetchError`` otherwise
    (``pipeline.manifest.path_problem``, the build's check)."""
    problem = path_problem(raw_dir, source.file)
    if problem:
        raise FetchError(f"source {source.source_id!r}: {problem} (in the raw manifest)")
    return str(PurePosixPath(source.file.replace("\\", "/")))


def _read_mirror(mirror: str | None) -> tuple[Path | None, str | None]:
    if mirror is None:
        return None, None
    scheme = urlsplit(mirror).scheme
    if scheme in ("http", "https"):
        return None, mirror if mirror.endswith("/") else mirror + "/"
    if "://" in mirror:
        raise FetchError(f"mirror {mirror!r}: only a folder or an http(s):// URL can be a mirror")
    path = Path(mirror)
    if not path.is_dir():
        raise FetchError(f"mirror {mirror!r} is not a folder (nor an http(s):// URL); give an existing folder")
    return path, None


# --- state: validators of the downloaded files ----------------------------------------------------


class _FetchState:
    """``raw/.fetch-state.json``: per file (path relative to raw) its url, ETag, Last-Modified, sha256."""

    def __init__(self, path: Path, files: dict[str, dict[str, str]]) -> None:
        self.path = path
        self.files = files
        self.changed = False

    @classmethod
    def load(cls, path: Path, progress: Callable[[str], None]) -> _FetchState:
        try:
            data = json.loads(path.read_text(encoding="utf-8"))
        except FileNotFoundError:
            return cls(path, {})
        except (OSError, ValueError) as exc:
            progress(f"ignoring unreadable {path} ({exc}): files will be downloaded in full")
            return cls(path, {})
        if not isinstance(data, dict) or data.get("format") != STATE_FORMAT or not isinstance(data.get("files"), dict):
            progress(f"ignoring {path}: not format {STATE_FORMAT}; files will be downloaded in full")
            return cls(path, {})
        return cls(path, data["files"])

    def conditional_headers(self, rel: str, url: str, local: bytes | None) -> dict[str, str]:
        """``If-None-Match`` / ``If-Modified-Since`` for ``rel`` when the file on disk is the one they describe."""
        entry = self.files.get(rel)
        if local is None or not isinstance(entry, dict) or entry.get("url") != url or entry.get("sha256") != local.hex():
            return {}
        headers = {}
        if entry.get("etag"):
            headers["If-None-Match"] = entry["etag"]
        if entry.get("last_modified"):
            headers["If-Modified-Since"] = entry["last_modified"]
        return headers

    def record(self, rel: str, url: str, digest: bytes, headers: httpx.Headers) -> None:
        previous = self.files.get(rel) if isinstance(self.files.get(rel), dict) else {}
        entry = {
            "url": url,
            "sha256": digest.hex(),
            # a 304 may omit validators: keep the ones the content was downloaded with
            "etag": headers.get("ETag") or (previous or {}).get("etag"),
            "last_modified": headers.get("Last-Modified") or (previous or {}).get("last_modified"),
            "checked_at": dt.datetime.now(dt.timezone.utc).isoformat(timespec="seconds"),
        }
        self.files[rel] = {k: v for k, v in entry.items() if v}
        self.changed = True

    def save(self) -> None:
        if not self.changed:
            return
        text = json.dumps({"format": STATE_FORMAT, "files": self.files}, indent=1, sort_keys=True) + "\n"
        try:
            self.path.parent.mkdir(parents=True, exist_ok=True)
            temp, _, _ = _write_temp(self.path, [text.encode("utf-8")])
            os.replace(temp, self.path)
        except OSError as exc:
            raise FetchError(
                f"{self.path}: cannot write the fetch state ({exc.strerror}); the files were fetched, "
                "but the next fetch will download them in full; check the folder's permissions"
            ) from None
        self.changed = False

