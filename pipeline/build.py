"""The build: extract -> parse -> validate -> load, composed in ``build``.

Nothing is lost: every parsed record is loaded, collapsed into an identical one (a counted
duplicate), or rejected with its reason; the accounting is stored in ``build_accounting`` and
printed at the end.
"""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path
from typing import Callable

from pipeline.aliases import load_aliases
from pipeline.extract import RawSnapshot, is_present, read_snapshot
from pipeline.load import load_database
from pipeline.manifest import read_manifest
from pipeline.parsers import ParseResult, get_parser
from pipeline.merge import (
    conflicts_between,
    content,
    fill_combat_patrol_characteristics,
    source_order,
)
from schemas.records import Accounting, Conflict, Record, Reject, Source

Progress = Callable[[str], None]

#: Tables whose rows point to a datasheet, and the field that holds it.
_DATASHEET_REFS: dict[str, tuple[str, ...]] = {
    "unit_composition": ("datasheet_id",),
    "wargear_loadouts": ("datasheet_id",),
    "model_profiles": ("datasheet_id",),
    "weapon_profiles": ("datasheet_id",),
    "weapon_abilities": ("datasheet_id",),
    "abilities": ("datasheet_id",),
    "keywords": ("datasheet_id",),
    "leader_links": ("leader_datasheet_id", "bodyguard_datasheet_id"),
    "datasheet_stratagems": ("datasheet_id",),
}


@dataclass
class BuildReport:
    """What a build did: rows per table and, per source and table, the accounting."""

    db_path: Path
    rows: dict[str, int]
    accounting: list[Accounting]
    boilerplate: Counter[str] = field(default_factory=Counter)
    skipped: list[str] = field(default_factory=list)

    @property
    def rejected(self) -> int:
        return sum(a.rejected for a in self.accounting)

    @property
    def duplicates(self) -> int:
        return sum(a.duplicates for a in self.accounting)


def parse_snapshot(snapshot: RawSnapshot) -> ParseResult:
    """Run the source's registered parser on its text (or its folder of tables)."""
    parser = get_parser(snapshot.source.format)
    content = snapshot.files if snapshot.files is not None else snapshot.text
    return parser(content, snapshot.source)  # type: ignore[arg-type]


def validate(
    sources: list[Source], results: dict[str, ParseResult]
) -> tuple[list[Record], list[Reject], Counter, list[Conflict], list[Record]]:
    """Merge sources, collapse identical records, reject key collisions and orphans.

    Records are taken source by source in precedence order (``merge.source_order``). A record
    whose key is already taken by an identical one (provenance aside) is a counted duplicate; by
    a different one from another source, it is merged (counted as a duplicate of its source) and
    each differing field is recorded as a ``Conflict``; by a different one from the same source,
    it is rejected with both values named. Combat Patrol datasheets get the characteristics their
    source lost from a twin (``merge.fill_combat_patrol_characteristics``). A row that points to
    a datasheet that no source defines is rejected as an orphan.

    Returns (records to load, all rejects, duplicates per (source_id, table), conflicts, rows
    filled from twins). Filled rows are not input rows of any source, so they stay out of the
    per-source accounting.
    """
    by_id = {s.source_id: s for s in sources}
    duplicates: Counter[tuple[str, str]] = Counter()
    rejects: list[Reject] = []
    conflicts: list[Conflict] = []
    seen: dict[tuple[str, tuple], Record] = {}
    for source in source_order(sources):
        source_id = source.source_id
        result = results[source_id]
        rejects.extend(result.rejects)
        for table, n in result.duplicates.items():
            duplicates[(source_id, table)] += n
        for record in result.records:
            ident = (record.__table__, record.key())
            first = seen.get(ident)
            if first is None:
                seen[ident] = record
                continue
            record_source = getattr(record, "source_id", source_id)
            if first == record or content(first) == content(record):
                duplicates[(record_source, record.__table__)] += 1
            elif getattr(first, "source_id", None) != record_source:
                conflicts.extend(conflicts_between(first, record, by_id))
                duplicates[(record_source, record.__table__)] += 1
            else:
                rejects.append(
                    Reject(
                        source_id=record_source,
                        locator=getattr(record, "locator", "?"),
                        table_name=record.__table__,
                        raw_text=record.model_dump_json(),
                        reason=(
                            f"key {record.key()} already loaded from "
                            f"{getattr(first, 'source_id', '?')} {getattr(first, 'locator', '')} "
                            "with different values"
                        ),
                    )
                )
    filled = [
        extra for extra in fill_combat_patrol_characteristics(list(seen.values()))
        if (extra.__table__, extra.key()) not in seen
    ]
    datasheets = {key[0] for (table, key) in seen if table == "datasheets"}
    records: list[Record] = []
    for (table, _), record in seen.items():
        refs = _DATASHEET_REFS.get(table, ())
        missing = [getattr(record, f) for f in refs if getattr(record, f) not in datasheets]
        if missing:
            rejects.append(
                Reject(
                    source_id=record.source_id,  # type: ignore[attr-defined]
                    locator=record.locator,  # type: ignore[attr-defined]
                    table_name=table,
                    raw_text=record.model_dump_json(),
                    reason=f"orphan: datasheet {missing[0]} is not defined by any source",
                )
            )
            continue
        records.append(record)
    return records, rejects, duplicates, conflicts, filled


def account(
    sources: list[Source],
    results: dict[str, ParseResult],
    records: list[Record],
    rejects: list[Reject],
    duplicates: Counter,
) -> list[Accounting]:
    """Per source and table: input rows = loaded + duplicates + rejected."""
    loaded: Counter[tuple[str, str]] = Counter(
        (r.source_id, r.__table__) for r in records if hasattr(r, "source_id")
    )
    rejected: Counter[tuple[str, str]] = Counter((r.source_id, r.table_name) for r in rejects)
    rows: list[Accounting] = []
    for source in sources:
        sid = source.source_id
        tables = {t for (s, t) in [*loaded, *rejected, *duplicates] if s == sid}
        tables |= set(results[sid].input_rows)
        for table in sorted(tables):
            n_loaded, n_dup, n_rej = loaded[(sid, table)], duplicates[(sid, table)], rejected[(sid, table)]
            declared = results[sid].input_rows.get(table)
            rows.append(
                Accounting(
                    source_id=sid,
                    table_name=table,
                    input_rows=declared if declared is not None else n_loaded + n_dup + n_rej,
                    loaded=n_loaded,
                    duplicates=n_dup,
                    rejected=n_rej,
                )
            )
    return rows


def build(raw_dir: Path, db_path: Path, progress: Progress = lambda _msg: None) -> BuildReport:
    """Build the database at ``db_path`` from the snapshots listed in ``raw_dir/manifest.toml``.

    Sources marked ``fetch_only`` whose file has not been fetched are skipped and listed in the
    report. Raises ``ManifestError`` or ``RawFileError`` (naming the file) before anything is
    written; the previous database is replaced only by a complete new one.
    """
    listed = read_manifest(raw_dir)
    progress(f"read manifest: {len(listed)} sources in {raw_dir}")
    skipped = [s.source_id for s in listed if s.fetch_only and not is_present(raw_dir, s)]
    for sid in skipped:
        progress(f"skipped {sid}: not fetched (run `wh40k fetch --only {sid}`, or with --mirror DIR)")
    sources = [s for s in listed if s.source_id not in skipped]
    snapshots = [read_snapshot(raw_dir, source) for source in sources]
    results: dict[str, ParseResult] = {}
    for snapshot in snapshots:
        result = parse_snapshot(snapshot)
        results[snapshot.source.source_id] = result
        progress(
            f"parsed {snapshot.source.source_id}: {len(result.records)} records, "
            f"{len(result.rejects)} rejects"
        )
    records, rejects, duplicates, conflicts, filled = validate(sources, results)
    accounting = account(sources, results, records, rejects, duplicates)
    boilerplate: Counter[str] = Counter()
    for result in results.values():
        boilerplate.update(result.boilerplate)
    progress(f"loading {len(records)} rows into {db_path}")
    aliases = load_aliases()
    rows = load_database(
        [*sources, *records, *filled, *aliases, *conflicts, *rejects, *accounting], db_path
    )
    return BuildReport(
        db_path=db_path, rows=rows, accounting=accounting, boilerplate=boilerplate, skipped=skipped
    )
