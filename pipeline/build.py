"""The build: extract -> parse -> validate -> load, composed in ``build``.

Nothing is lost: every parsed record is loaded, collapsed into an identical one (a counted
duplicate), or rejected with its reason; the accounting is stored in ``build_accounting`` and
printed at the end.
"""

from __future__ import annotations

import dataclasses
import time
import gc
import os
from collections import Counter, defaultdict
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Callable, Iterable, Iterator

from pipeline import errata
from pipeline.aliases import load_aliases
from pipeline.assemble.protection import feel_no_pain_rows
from pipeline.duckdb_file import ForkedDuckdbFile
from pipeline.editions import detect_edition
from pipeline.effects.rules import effect_rows, read_wordings
from pipeline.errors import BuildError
from pipeline.extract import RawSnapshot, is_present, read_snapshot
from pipeline.forked import ForkedCall
from pipeline.manifest import read_folder_files
from pipeline.manifest import read_manifest
from pipeline.targets import Target, parse_target
from pipeline.tempfiles import remove_stale, temp_path
from pipeline.extractors import (
    LINK_COLUMN_FORMATS, RULES_PARSED_FORMATS, LinkColumns, ParseResult, get_extractor, get_preparer,
)
from pipeline.merge import (
    AgreementTally,
    align_names,
    align_with_earlier,
    compare_fields,
    conflicts_between,
    content,
    fill_combat_patrol_characteristics,
    filled_gaps,
    keep_first_whole,
    source_order,
    unify_datasheet_ids,
)
from pipeline.normalise.composition import unit_size
from schemas.records import (
    RECORD_OF_TABLE, Ability, Accounting, Conflict, DataFlag, DataGap, Datasheet, DetachmentAbility, Enhancement,
    ExternalId, Record, Reject, RuleText, Source, SourceAgreement, Stratagem, UnitComposition, UnitCost, key_getter,
)

Progress = Callable[[str], None]

#: Tables that every database this project builds has: a DuckDB file without them is another's.
OWN_TABLES = ("build_accounting", "sources")
#: The first bytes of a DuckDB database file: 8 bytes of checksum, then this magic.
_DUCKDB_MAGIC_OFFSET, _DUCKDB_MAGIC = 8, b"DUCK"
_SQLITE_MAGIC = b"SQLite format 3\x00"
#: A table of a source whose rows fall below this share of the previous build's is a shrink.
SHRINK_KEEPS_AT_LEAST = 0.5
#: A build whose sources parse into at least this many records reads its rules' wordings ahead,
#: in a second process, while it merges (``read_ahead``); a small one reads them as it goes.
READ_AHEAD_MIN_RECORDS = 20_000
#: A build into a DuckDB file whose raw files hold at least this many bytes writes the file in a
#: second process (``pipeline.duckdb_file.ForkedDuckdbFile``); a smaller one writes it itself.
WRITER_MIN_RAW_BYTES = 2_000_000
#: Tables of notes about the data, not the data: a parser that improves makes fewer of them.
_NOT_SHRINK_CHECKED = frozenset({"data_flags", "data_gaps"})

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
    "unit_costs": ("datasheet_id",),
    "wargear_options": ("datasheet_id",),
    "datasheet_enhancements": ("datasheet_id",),
    "datasheet_detachment_abilities": ("datasheet_id",),
}


@dataclass
class BuildReport:
    """What a build did: rows per table and, per source and table, the accounting."""

    db_path: Path
    rows: dict[str, int]
    accounting: list[Accounting]
    boilerplate: Counter[str] = field(default_factory=Counter)
    skipped: list[str] = field(default_factory=list)
    seconds: dict[str, float] = field(default_factory=dict)  # wall time per stage: "parse SOURCE", "validate", "load"

    @property
    def rejected(self) -> int:
        return sum(a.rejected for a in self.accounting)

    @property
    def duplicates(self) -> int:
        return sum(a.duplicates for a in self.accounting)

    @property
    def inconsistent(self) -> list[Accounting]:
        """Accounting rows whose counts do not add up (a bug: should be empty)."""
        return [a for a in self.accounting if a.input_rows != a.loaded + a.duplicates + a.rejected]


def with_detected_edition(snapshot: RawSnapshot, progress: Progress) -> RawSnapshot:
    """A text snapshot whose manifest entry states no edition gets the detected one.

    The detection and its evidence are kept as a ``DataFlag`` on the source (``edition_detected``,
    and ``edition_markers_mixed`` when markers of both editions occur). When no marker is found
    the edition stays unknown.
    """
    source = snapshot.source
    if source.edition is not None or snapshot.text is None:
        return snapshot
    found = detect_edition(snapshot.text)
    evidence = "; ".join(f"{e.marker} x{e.count} (line {e.first_line})" for e in found.evidence)
    if found.edition is None:
        progress(f"{source.source_id}: no edition stated and none detected ({evidence or 'no markers'})")
        return snapshot
    progress(f"{source.source_id}: edition {found.edition} detected ({evidence})")
    flags = [DataFlag(source_id=source.source_id, locator="whole file", table_name="sources",
                      entity_key=source.source_id, flag="edition_detected",
                      detail=f"edition {found.edition}, scores {found.scores}: {evidence}")]
    if found.mixed:
        flags.append(DataFlag(source_id=source.source_id, locator="whole file", table_name="sources",
                              entity_key=source.source_id, flag="edition_markers_mixed",
                              detail=f"markers of both editions, scores {found.scores}"))
    return dataclasses.replace(
        snapshot, source=source.model_copy(update={"edition": found.edition}), flags=tuple(flags)
    )


def prepare_snapshot(snapshot: RawSnapshot) -> object | None:
    """Start the work its parser can do ahead (``PREPARERS``), or None: see ``parse_snapshot``."""
    prepare = get_preparer(snapshot.source.format)
    if prepare is None:
        return None
    return prepare(_content(snapshot), snapshot.source)


def parse_snapshot(snapshot: RawSnapshot, prepared: object | None = None,
                   readings: Readings | None = None) -> ParseResult:
    """Run the source's registered parser on its text (or its folder of tables).

    ``prepared`` is what ``prepare_snapshot`` returned for it (the parser takes it over). A
    parser of ``LINK_COLUMN_FORMATS`` gives its link tables as columns (``ParseResult.links``).
    ``readings``: where a parser of ``RULES_PARSED_FORMATS`` starts reading the wordings of its
    rules once it has read them (``Readings.rules_parsed``).
    """
    parser = get_extractor(snapshot.source.format)
    options: dict[str, object] = {"link_columns": True} if snapshot.source.format in LINK_COLUMN_FORMATS else {}
    if prepared is not None:
        options["prepared"] = prepared
    if readings is not None and snapshot.source.format in RULES_PARSED_FORMATS:
        options["rules_parsed"] = readings.rules_parsed(snapshot.source)
    return parser(_content(snapshot), snapshot.source, **options)  # type: ignore[call-arg]


def _content(snapshot: RawSnapshot) -> str | dict[str, str]:
    return snapshot.files if snapshot.files is not None else snapshot.text  # type: ignore[return-value]


@dataclass
class Validated:
    """What ``validate`` returns.

    ``records``: the rows to load (with one ``ExternalId`` per datasheet and source that gives
    its own id, derived from the datasheets, outside the per-source accounting). ``rejects``:
    the build's own rejects (key collisions within a source, orphans), the parsers' rejects are
    in the parse results. ``duplicates``: per
    (source_id, record table), records collapsed into an identical or merged row. ``conflicts``:
    fields on which sources disagree; ``agreement``: per pair of sources, table and field, how
    many rows both gave and on how many they agree (``merge.AgreementTally``). ``filled``: rows filled from a twin datasheet, and rows
    derived from the merged ones (``feel_no_pain``; the ``effects`` of every rule, ``pipeline.effects``; a ``DataGap`` for each datasheet with no model
    count, ``unit_size_gaps``; not input rows of any source, so outside the per-source accounting).
    """

    records: list[Record]
    rejects: list[Reject]
    duplicates: Counter
    conflicts: list[Conflict]
    filled: list[Record]
    agreement: list[SourceAgreement] = field(default_factory=list)
    #: The rows to load of each link table that a source gave as columns (``ParseResult.links``),
    #: every source's rows of that table in one ``LinkColumns`` (none of them in ``records``).
    links: list[LinkColumns] = field(default_factory=list)
    #: With ``validate(..., effects_later=True)``: the ``effects`` rows (not in ``filled``), made
    #: when called (after waiting for the wordings read ahead); None otherwise.
    effects: Callable[[], list[Record]] | None = None


def validate(
    sources: list[Source], results: dict[str, ParseResult],
    readings: Readings | None = None, effects_later: bool = False,
) -> Validated:
    """Merge sources, collapse identical records, reject key collisions and orphans.

    Records are taken source by source in precedence order (``merge.source_order``). A record
    whose key is already taken by an identical one (provenance aside) is a counted duplicate; by
    a different one from another source, it is merged (counted as a duplicate of its source) and
    each differing field is recorded as a ``Conflict``; by a different one from the same source,
    it is rejected with both values named. First, a later source's records are lined up with the
    earlier sources': a datasheet printed under another spelling takes the earlier one's id
    (``merge.unify_datasheet_ids``); weapon, ability and keyword names printed another way take
    the earlier printed name (``merge.align_names``); model lines and weapon-ability positions
    take the earlier line and position (``merge.align_with_earlier``). Each source's own id of a
    datasheet (``Datasheet.external_id``) becomes an ``ExternalId`` row, never a conflict. Combat
    Patrol datasheets get the characteristics their source lost from a twin
    (``merge.fill_combat_patrol_characteristics``). A row that points to a datasheet that no
    source defines is rejected as an orphan. A unit's composition and loadout are taken whole
    from the first source that gives them (``merge.keep_first_whole``); a datasheet with no
    model count gets a ``DataGap`` (``unit_size_gaps``). Each mechanical erratum gives the
    wording before it and the one in force as rule texts (``errata.derive``). A source's data gap that another source
    fills (rows of that table for that datasheet: the Combat Patrol page lost its characteristics,
    the Game Datacards file gives them) is dropped, counted as a duplicate (``merge.filled_gaps``).
    ``readings``: the rules' wordings read ahead (``read_ahead``); the result is the same without.
    ``effects_later``: the ``effects`` rows are left out of ``filled``, and ``Validated.effects``
    makes them when called (the build calls it once the other rows are in the database, so that
    the wordings read ahead have come meanwhile).
    Rows of link tables that a parser gave as columns (``ParseResult.links``) are merged as their
    records would be (by key, in precedence order: a key seen is a duplicate, the values of a
    link row being its key) without a record per row; every row of such a table comes back in
    ``Validated.links`` (none in ``Validated.records``), in the order the records would have had.
    """
    by_id = {s.source_id: s for s in sources}
    duplicates: Counter[tuple[str, str]] = Counter()
    rejects: list[Reject] = []
    conflicts: list[Conflict] = []
    seen: dict[tuple[str, tuple], Record] = {}
    external_ids: dict[tuple[str, str], ExternalId] = {}
    ordered = source_order(sources)
    batches = [results[s.source_id].records for s in ordered]
    moves: list[dict[str, str]] = []
    batches = align_with_earlier(align_names(unify_datasheet_ids(batches, _DATASHEET_REFS, moves)))
    link_batches = [[links.moved(moved) for links in results[s.source_id].links] for s, moved in zip(ordered, moves)]
    columnar = {links.table for batch in link_batches for links in batch}  # tables loaded as columns
    link_batches, alone = _links_alone(batches, link_batches)
    tally = AgreementTally(by_id)
    batches, set_aside, whole = keep_first_whole(batches, by_id, tally)
    duplicates.update(set_aside)
    conflicts.extend(whole)
    key_of: dict[type, Callable[[Record], tuple]] = {}
    for source, batch, link_batch in zip(ordered, batches, link_batches):
        for record in batch:
            kind = type(record)
            get_key = key_of.get(kind)
            if get_key is None:
                get_key = key_of[kind] = key_getter(kind)
            ident = (record.__table__, get_key(record))
            first = seen.get(ident)
            if first is None:
                seen[ident] = record
                if kind is Datasheet and record.external_id is not None:
                    external_ids.setdefault((record.datasheet_id, record.source_id), _external_id(record))
                continue
            if type(first) is tuple:  # a link row kept as columns: (its LinkColumns, its index)
                first = first[0].record(first[1])
            other_source = getattr(first, "source_id", None) != getattr(record, "source_id", source.source_id)
            if first == record or content(first) == content(record):
                duplicates[(getattr(record, "source_id", source.source_id), record.__table__)] += 1
                if other_source:
                    tally.add(first, record)
            elif other_source:
                comparison = compare_fields(first, record)
                tally.add(first, record, comparison)
                conflicts.extend(conflicts_between(first, record, by_id, comparison))
                duplicates[(getattr(record, "source_id", source.source_id), record.__table__)] += 1
            else:
                rejects.append(_reject(
                    record,
                    f"key {record.key()} already loaded from {getattr(first, 'source_id', '?')} "
                    f"{getattr(first, 'locator', '')} with different values",
                ))
                continue
            if type(record) is Datasheet and record.external_id is not None:
                external_ids.setdefault((record.datasheet_id, record.source_id), _external_id(record))
        for links in link_batch:  # a link row's values are its key: a key seen is a duplicate
            table = links.table
            for i, key in enumerate(zip(links.datasheet_ids, links.targets)):
                ident = (table, key)
                first = seen.get(ident)
                if first is None:
                    seen[ident] = (links, i)  # type: ignore[assignment]  (a link row: no record made)
                    continue
                duplicates[(links.source_ids[i], table)] += 1
                if type(first) is tuple:
                    first = first[0].record(first[1])
                if first.source_id != links.source_ids[i]:  # type: ignore[attr-defined]
                    tally.add(first, links.record(i))
    kept = [r for r in seen.values() if type(r) is not tuple]
    filled = [
        extra for extra in fill_combat_patrol_characteristics(kept)
        if (extra.__table__, extra.key()) not in seen
    ]
    filled += feel_no_pain_rows(kept)
    datasheets = {key[0] for (table, key) in seen if table == "datasheets"}
    records: list[Record] = []
    link_rows: dict[str, tuple[list[str], list[str], list[str], list[str]]] = {
        table: ([], [], [], []) for table in sorted(columnar)}
    for (table, key), record in seen.items():
        refs = _DATASHEET_REFS.get(table)
        if table in columnar:  # one of the rows of a table loaded as columns, a record or a link row
            if key[0] not in datasheets:
                record = record[0].record(record[1]) if type(record) is tuple else record
                rejects.append(_reject(record, f"orphan: datasheet {key[0]} is not defined by any source"))
                continue
            sids, locators, sheets, targets = link_rows[table]
            if type(record) is tuple:
                sids.append(record[0].source_ids[record[1]])
                locators.append(record[0].locators[record[1]])
            else:
                sids.append(record.source_id)  # type: ignore[attr-defined]
                locators.append(record.locator)  # type: ignore[attr-defined]
            sheets.append(key[0])
            targets.append(key[1])
            continue
        if refs:
            missing = [getattr(record, f) for f in refs if getattr(record, f) not in datasheets]
            if missing:
                rejects.append(_reject(record, f"orphan: datasheet {missing[0]} is not defined by any source"))
                continue
        records.append(record)
    for links in alone:  # after every other row, where the merge would have put them
        sids, locators, sheets, targets = link_rows[links.table]
        if all(map(datasheets.__contains__, links.datasheet_ids)):
            sids += links.source_ids
            locators += links.locators
            sheets += links.datasheet_ids
            targets += links.targets
            continue
        for i, sheet in enumerate(links.datasheet_ids):
            if sheet not in datasheets:
                rejects.append(_reject(links.record(i), f"orphan: datasheet {sheet} is not defined by any source"))
                continue
            sids.append(links.source_ids[i])
            locators.append(links.locators[i])
            sheets.append(sheet)
            targets.append(links.targets[i])
    links = [LinkColumns(RECORD_OF_TABLE[table], *columns) for table, columns in link_rows.items()]
    filled_elsewhere = filled_gaps(records, _DATASHEET_REFS, links)
    if filled_elsewhere:
        for record in records:
            if id(record) in filled_elsewhere:
                duplicates[(record.source_id, record.__table__)] += 1  # type: ignore[attr-defined]
        records = [r for r in records if id(r) not in filled_elsewhere]
    records.extend(external_ids.values())
    filled += [g for g in unit_size_gaps(records) if (g.__table__, g.key()) not in seen]
    records, wordings = errata.derive(records, by_id)  # the wording before each mechanical erratum
    filled += wordings
    rules = [*records, *wordings]

    def effects() -> list[Record]:  # what each rule does to an attack
        read = readings.result() if readings is not None else None
        return list(effect_rows(rules, by_id, read, links))

    if effects_later:
        return Validated(records, rejects, duplicates, conflicts, filled, tally.records(), links, effects)
    filled += effects()
    return Validated(records, rejects, duplicates, conflicts, filled, tally.records(), links)


#: The records whose rules have a wording the reader reads (``effects.rules.rules_of``).
_WORDED = (Ability, DetachmentAbility, Enhancement, RuleText, Stratagem)


class Readings:
    """The wordings of the parsed rules read in second processes (``effects.rules.read_wordings``):
    one started by a parser once it has read its rules (``rules_parsed``: the export's, while it
    reads its link tables), one for the rest after the parse (``read_ahead``). ``result()`` is
    every wording they read, by text (None when none read any); ``abort()`` stops them."""

    def __init__(self, sources: list[Source]) -> None:
        self._by_id = {s.source_id: s for s in sources}
        self._calls: list[ForkedCall[dict[str, tuple]]] = []
        #: Per source id: how many of its parsed records the reading started by its parser took.
        self.early: dict[str, int] = {}

    def rules_parsed(self, source: Source) -> Callable[[list[Record]], None]:
        """The ``rules_parsed`` of ``source``'s parser: start reading the wordings of its records
        so far (as they are when it is called: the second process has its own copy), for a
        parse of at least ``READ_AHEAD_MIN_RECORDS`` records by then."""
        def started(records: list[Record]) -> None:
            if len(records) < READ_AHEAD_MIN_RECORDS or source.source_id in self.early:
                return
            by_id = self._by_id
            if self.start(lambda: read_wordings(records, by_id)):
                self.early[source.source_id] = len(records)
        return started

    def start(self, work: Callable[[], dict[str, tuple]]) -> bool:
        """Start one more reading: ``work()`` in a second process; False where none runs."""
        call = ForkedCall.start(work)
        if call is not None:
            self._calls.append(call)
        return call is not None

    def result(self) -> dict[str, tuple] | None:
        """Every wording read, waiting for them."""
        merged: dict[str, tuple] = {}
        for call in self._calls:
            merged.update(call.result() or {})
        return merged or None

    def abort(self) -> None:
        for call in self._calls:
            call.abort()


def _links_alone(
    batches: list[list[Record]], link_batches: list[list[LinkColumns]]
) -> tuple[list[list[LinkColumns]], list[LinkColumns]]:
    """``validate``'s link batches without those whose rows the merge keeps as they are (but
    for orphans), and those: the last source's link tables when each is the only rows of its
    table (no other source's, no record of it) and has no key twice. Their rows would come last
    in the merge's order, none a duplicate: ``validate`` takes them at the end, without a key
    per row. Otherwise none."""
    if not link_batches or not link_batches[-1]:
        return link_batches, []
    given = Counter(links.table for batch in link_batches for links in batch)
    recorded = {kind.__table__ for batch in batches for kind in set(map(type, batch))}
    last = link_batches[-1]
    if all(given[links.table] == 1 and links.table not in recorded
           and len(set(zip(links.datasheet_ids, links.targets))) == len(links) for links in last):
        return [*link_batches[:-1], []], last
    return link_batches, []


def read_ahead(sources: list[Source], results: dict[str, ParseResult], readings: Readings | None = None) -> Readings | None:
    """Start reading the wordings of the parsed rules (``effects.rules.read_wordings``) in a
    second process, for ``validate``, which merges the sources meanwhile: those ``readings``
    (where a parser started some, ``Readings.rules_parsed``) has not taken; returns the
    readings, or None for a build of fewer than ``READ_AHEAD_MIN_RECORDS`` records or where
    no second process runs (``ForkedCall.start``). The merged rules are mostly the parsed ones:
    a wording the merge changes is read by ``validate`` itself."""
    readings = readings if readings is not None else Readings(sources)
    early = readings.early
    if not early and sum(len(result.records) + sum(map(len, result.links))
                         for result in results.values()) < READ_AHEAD_MIN_RECORDS:
        return None
    rest = [result.records[early.get(sid, 0):] for sid, result in results.items()]
    if any(isinstance(record, _WORDED) for part in rest for record in part):
        records = [record for result in results.values() for record in result.records]
        read = [record for sid, n in early.items() for record in results[sid].records[:n]]
        links = [links for result in results.values() for links in result.links]
        readings.start(lambda: read_wordings(records, readings._by_id, links, read))
    return readings


def unit_size_gaps(records: list[Record]) -> list[DataGap]:
    """A ``DataGap`` (table ``datasheets``, field ``starting_strength``) for each datasheet that
    has no model count: no printed one, no ``N models`` points line and no composition minimum
    (``normalise.composition.unit_size``, the reading the attack engine uses), saying which."""
    points: dict[str, list[str]] = defaultdict(list)
    lines: dict[str, list[UnitComposition]] = defaultdict(list)
    sheets: list[Datasheet] = []
    for r in records:
        if isinstance(r, UnitCost):
            points[r.datasheet_id].append(r.description)
        elif isinstance(r, UnitComposition):
            lines[r.datasheet_id].append(r)
        elif isinstance(r, Datasheet):
            sheets.append(r)
    gaps = []
    for sheet in sheets:
        rows = sorted(lines.get(sheet.datasheet_id, []), key=lambda c: c.line)
        size, why = unit_size(sheet.starting_strength, points.get(sheet.datasheet_id, []),
                              [(c.text, c.model_name, c.min_models) for c in rows])
        if size is None:
            gaps.append(DataGap(source_id=sheet.source_id, locator=sheet.locator, table_name="datasheets",
                                entity_key=sheet.datasheet_id, field="starting_strength",
                                reason=f"no model count: {why}; an attack on it needs --target-models N "
                                       "(as an attacker, --models N)"))
    return gaps


def _external_id(sheet: Datasheet) -> ExternalId:
    return ExternalId(source_id=sheet.source_id, locator=sheet.locator,
                      datasheet_id=sheet.datasheet_id, external_id=sheet.external_id)  # type: ignore[arg-type]


def _reject(record: Record, reason: str) -> Reject:
    return Reject(
        source_id=record.source_id,  # type: ignore[attr-defined]
        locator=record.locator,  # type: ignore[attr-defined]
        table_name=record.__table__,
        raw_text=record.model_dump_json(),
        reason=reason,
    )


def account(sources: list[Source], results: dict[str, ParseResult], valid: Validated) -> list[Accounting]:
    """The accounting of every source, in two stages; in each, input = loaded + duplicates + rejected.

    Stage ``parse``: per input table for tabular sources (the parser's own counts of rows), per
    record table for page-text sources (records, repeated items collapsed, rejected items).
    Stage ``validate``: per record table, the records a source's parse produced: loaded,
    collapsed into an identical or merged row of another source (duplicates), or rejected by the
    build (key collisions, orphans).
    """
    rows: list[Accounting] = []
    loaded = Counter((r.source_id, r.__table__) for r in valid.records if hasattr(r, "source_id"))
    for links in valid.links:  # counted by source id alone (Counter's C loop), then keyed by table
        for sid, n in Counter(links.source_ids).items():
            loaded[(sid, links.table)] += n
    build_rejected = Counter((r.source_id, r.table_name) for r in valid.rejects)
    for source in sources:
        sid, result = source.source_id, results[source.source_id]
        produced = Counter(r.__table__ for r in result.records)
        for links in result.links:
            produced[links.table] += len(links)
        parse_rejected = Counter(r.table_name for r in result.rejects)
        if result.input_rows:
            tables = sorted(set(result.input_rows) | set(parse_rejected) | set(result.duplicates))
            parse_loaded = result.loaded
        else:
            tables = sorted(set(produced) | set(parse_rejected) | set(result.duplicates))
            parse_loaded = produced
        for t in tables:
            n_in = result.input_rows.get(t) if result.input_rows else None
            counts = (parse_loaded[t], result.duplicates[t], parse_rejected[t])
            rows.append(Accounting(
                source_id=sid, stage="parse", table_name=t,
                input_rows=n_in if n_in is not None else sum(counts),
                loaded=counts[0], duplicates=counts[1], rejected=counts[2],
            ))
        for t in sorted(produced):
            rows.append(Accounting(
                source_id=sid, stage="validate", table_name=t, input_rows=produced[t],
                loaded=loaded[(sid, t)], duplicates=valid.duplicates[(sid, t)],
                rejected=build_rejected[(sid, t)],
            ))
    return rows


@contextmanager
def _without_cyclic_gc() -> Iterator[None]:
    """Pause Python's cyclic garbage collector for the duration (restored afterwards).

    A build keeps some 500,000 small objects alive (rows, validated records) and makes almost no
    reference cycles: the cyclic collector would only traverse them again and again (measured:
    a quarter of the full-export build). Reference counting still frees memory as usual.
    """
    was_enabled = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if was_enabled:
            gc.enable()


def build(
    raw_dir: Path, db_path: Path | str | Target, progress: Progress = lambda _msg: None, *, allow_shrink: bool = False,
    keep: list[object] | None = None,
) -> BuildReport:
    """Build the database at ``db_path`` from the snapshots listed in ``raw_dir/manifest.toml``.

    Sources marked ``fetch_only`` whose file has not been fetched are skipped and listed in the
    report. Raises ``ManifestError`` or ``RawFileError`` (naming the file) before anything is
    written; the previous database is replaced only by a complete new one. Raises ``BuildError``
    when ``db_path`` is a file that is not a database of this project (``check_replaceable``), and,
    unless ``allow_shrink``, when a source's table would lose most of its rows against the
    previous database (``shrinkage``). Temporary files that killed builds left beside
    ``db_path`` are removed first (``pipeline.tempfiles``). ``db_path`` may be a SQLAlchemy URL
    (``sqlite:///FILE``, ``postgresql://...``: ``pipeline.targets``); the same checks apply.

    ``keep``: the build's own objects (the raw texts, the parsed and the merged records: some
    million objects for the whole corpus) are appended to it when the build is done, instead of
    being freed one by one as it returns: for a process that ends right after (the command line,
    ``pipeline.wh40k.end_without_teardown``), where freeing them is time spent for nothing.
    """
    with _without_cyclic_gc():
        return _build(raw_dir, db_path, progress, allow_shrink, keep)


def check_writable(db_path: Path) -> None:
    """Raise ``BuildError`` (what, where, how to fix) when the database cannot be written there.

    Checked before the parse, so that a wrong ``--db`` fails at once.
    """
    if db_path.is_dir():
        raise BuildError(f"--db {db_path} is a folder: give the path of a database file, "
                         f"e.g. {db_path / 'wh40k.duckdb'}")
    try:
        db_path.parent.mkdir(parents=True, exist_ok=True)
    except OSError as exc:
        raise BuildError(f"cannot create the folder {db_path.parent} for the database: {exc.strerror}; "
                         "choose another --db") from exc
    if not os.access(db_path.parent, os.W_OK | os.X_OK):
        raise BuildError(f"cannot write the database {db_path}: the folder {db_path.parent} is not "
                         "writable; choose another --db")


def check_replaceable(db_path: Path, backend: str = "duckdb") -> None:
    """Raise ``BuildError`` when ``db_path`` is a file that is not a DuckDB database (or, for
    ``backend`` ``sqlite``, not a SQLite one).

    Reads the first bytes only (no DuckDB): checked before the parse. ``previous_counts`` then
    checks that a DuckDB file is one this project built.
    """
    try:
        with db_path.open("rb") as f:
            head = f.read(_DUCKDB_MAGIC_OFFSET + len(_DUCKDB_MAGIC))
    except FileNotFoundError:
        return
    except OSError as exc:
        raise BuildError(f"--db {db_path}: cannot read it to check it is a database ({exc.strerror}); "
                         "choose another --db") from exc
    if backend == "sqlite":
        if head and not head.startswith(_SQLITE_MAGIC[:len(head)]):
            raise BuildError(f"--db {db_path} is not a SQLite database, and the build would overwrite it; "
                             "choose another --db, or delete the file if it is not needed")
        return
    if head[_DUCKDB_MAGIC_OFFSET:] != _DUCKDB_MAGIC:
        raise BuildError(f"--db {db_path} is not a DuckDB database, and the build would overwrite it; "
                         "choose another --db, or delete the file if it is not needed")


def previous_counts(db_path: Path | Target) -> dict[tuple[str, str, str], int] | None:
    """The rows of each (source_id, stage, table_name) in the database at ``db_path``, or None.

    The rows are ``loaded + duplicates`` of its ``build_accounting`` (what the source gave the
    database, on its own or merged into another source's row). None when there is no file, or it
    is a database of this project too old to have those columns. Raises ``BuildError`` when it is
    a DuckDB database without this project's tables (``OWN_TABLES``) or one that cannot be opened.
    """
    target = parse_target(db_path)
    if target.backend != "duckdb":
        return _previous_sql_counts(target)
    db_path = target.path
    if not db_path.is_file():
        return None  # and DuckDB not imported: a first build's process has no use for it
    import duckdb

    from pipeline.database import sandboxed_connection
    try:  # a file the build did not make, maybe: read it in the readers' sandbox
        con = sandboxed_connection(db_path)
    except duckdb.Error as exc:
        reason = str(exc).splitlines()[0]
        raise BuildError(f"--db {db_path} is a DuckDB database that cannot be opened to check that this "
                         f"project built it ({reason}); choose another --db, or delete the file if it is "
                         "not needed") from exc
    try:
        tables = {row[0] for row in con.execute(
            "SELECT table_name FROM system.information_schema.tables WHERE table_schema = 'main'").fetchall()}
        missing = [t for t in OWN_TABLES if t not in tables]
        if missing:
            raise BuildError(f"--db {db_path} is a DuckDB database that this project did not build (it has "
                             f"no table{'s' if len(missing) > 1 else ''} {', '.join(missing)}), and the build would overwrite it; choose "
                             "another --db, or delete the file if it is not needed")
        try:
            rows = con.execute("SELECT source_id, stage, table_name, loaded + duplicates "
                               "FROM build_accounting").fetchall()
        except duckdb.Error:
            return None
    finally:
        con.close()
    return {(sid, stage, table): n for sid, stage, table, n in rows}


def _previous_sql_counts(target: Target) -> dict[tuple[str, str, str], int] | None:
    """``previous_counts`` of a SQLite file or a PostgreSQL database (its current schema):
    None when it has no table yet."""
    from pipeline.errors import DatabaseError
    from pipeline.sql_connection import catalog_columns, open_sql

    if target.path is not None and not target.path.is_file():
        return None
    try:
        con = open_sql(target)
    except DatabaseError as exc:
        raise BuildError(f"--db {target}: cannot open it to check that this project built it ({exc}); "
                         "choose another --db") from None
    try:
        tables, _views = catalog_columns(con)
        if not tables:
            return None
        missing = [t for t in OWN_TABLES if t not in tables]
        if missing:
            raise BuildError(f"--db {target} is a database that this project did not build (it has "
                             f"no table{'s' if len(missing) > 1 else ''} {', '.join(missing)}), and the build "
                             "would replace its tables; choose another --db")
        try:
            rows = con.execute("SELECT source_id, stage, table_name, loaded + duplicates "
                               "FROM build_accounting").fetchall()
        except DatabaseError:
            return None
    finally:
        con.close()
    return {(sid, stage, table): n for sid, stage, table, n in rows}


def shrinkage(
    previous: dict[tuple[str, str, str], int], accounting: list[Accounting], source_ids: Iterable[str],
    skipped: Iterable[str] = (),
) -> list[str]:
    """What a source loses against the previous build, one line per (source, stage, table); [] if nothing.

    A table of a source in ``source_ids`` (the new manifest's; ``skipped`` ones were not fetched)
    that had N > 0 rows (``loaded + duplicates``) and now has none, or fewer than
    ``SHRINK_KEEPS_AT_LEAST`` of N, is a shrink. Parse-stage lines come first (nearest the raw
    file). Sources no longer in the manifest, and the tables of notes (``data_flags``,
    ``data_gaps``), are not compared.

    >>> a = Accounting(source_id="s", stage="parse", table_name="Datasheets", input_rows=0, loaded=0,
    ...                duplicates=0, rejected=0)
    >>> shrinkage({("s", "parse", "Datasheets"): 1676, ("s", "parse", "Factions"): 26}, [a], ["s"])
    ["source 's' table Datasheets (parse): 1676 rows before, 0 now", "source 's' table Factions (parse): 26 rows before, 0 now"]
    """
    now = Counter({(a.source_id, a.stage, a.table_name): a.loaded + a.duplicates for a in accounting})
    listed, skipped = set(source_ids), set(skipped)
    lines = []
    for (sid, stage, table), before in sorted(previous.items(), key=lambda kv: (kv[0][1] != "parse", kv[0])):
        after = now[(sid, stage, table)]
        if sid in listed and table not in _NOT_SHRINK_CHECKED and before > 0 and (
            after == 0 or after < before * SHRINK_KEEPS_AT_LEAST
        ):
            why = " (skipped: not fetched)" if sid in skipped else ""
            lines.append(f"source {sid!r}{why} table {table} ({stage}): {before} rows before, {after} now")
    return lines


def _build(raw_dir: Path, db: Path | str | Target, progress: Progress, allow_shrink: bool,
           keep: list[object] | None = None) -> BuildReport:
    target = parse_target(db)
    db_path: Path | Target = target.path if target.is_file else target
    if target.is_file:
        check_writable(target.path)
        check_replaceable(target.path, target.backend)
        for stale in remove_stale(target.path.parent, "build", target.path.name):
            progress(f"removed {stale.name}: a temporary file of an earlier build that was killed")
    listed = read_manifest(raw_dir)
    progress(f"read manifest: {len(listed)} sources in {raw_dir}")
    members = read_folder_files(raw_dir)
    files = {Path(s.file).as_posix() for s in listed}
    skipped = [
        s.source_id for s in listed
        if s.fetch_only and not is_present(raw_dir, s, members.get(s.source_id, ()), frozenset(
            m for m in members.get(s.source_id, ()) if (Path(s.file) / m).as_posix() in files))
    ]
    for sid in skipped:
        progress(f"skipped {sid}: not fetched (run `wh40k fetch --only {sid}`, or with --mirror DIR)")
    sources = [s for s in listed if s.source_id not in skipped]
    snapshots = [with_detected_edition(read_snapshot(raw_dir, source, members.get(source.source_id, ())), progress)
                 for source in sources]
    sources = [snapshot.source for snapshot in snapshots]
    # The DuckDB file's second process, forked first (the smallest process to copy), is told
    # the file after the parse: it imports DuckDB and Arrow while the sources are merged, and
    # fills the file while this process makes each table's columns (``pipeline.duckdb_file``).
    raw_bytes = sum(f.bytes for snapshot in snapshots for f in snapshot.checksums)
    if target.is_file and target.backend == "duckdb" and raw_bytes >= WRITER_MIN_RAW_BYTES:
        writer = ForkedDuckdbFile.start()
    else:
        writer = None
        ForkedDuckdbFile.discard_early()  # forked by the command line, for a build that needs none
    try:
        return _parse_and_load(snapshots, sources, listed, skipped, target, db_path, writer, progress, allow_shrink,
                               keep)
    finally:
        if keep is not None:
            keep.append(snapshots)
        if writer is not None:
            writer.abort()  # done with (the file renamed), or an error or Ctrl-C: it stops


def _parse_and_load(
    snapshots: list[RawSnapshot], sources: list[Source], listed: list[Source], skipped: list[str], target: Target,
    db_path: Path | Target, writer: ForkedDuckdbFile | None, progress: Progress, allow_shrink: bool,
    keep: list[object] | None = None,
) -> BuildReport:
    # Parsers that can start work ahead (the export's HTML worker) start it now.
    prepared = {s.source.source_id: prepare_snapshot(s) for s in snapshots}
    from pipeline.load import load_ahead, load_database

    results: dict[str, ParseResult] = {}
    seconds: dict[str, float] = {}
    early = Readings(sources)  # the rules' wordings, read from when a parser has read its rules
    try:
        previous = previous_counts(target)
        for snapshot in snapshots:
            started = time.perf_counter()
            result = parse_snapshot(snapshot, prepared.pop(snapshot.source.source_id), early)
            result.records.extend(snapshot.flags)
            result.records.extend(snapshot.checksums)
            results[snapshot.source.source_id] = result
            seconds[f"parse {snapshot.source.source_id}"] = time.perf_counter() - started
            progress(
                f"parsed {snapshot.source.source_id}: {len(result.records) + sum(map(len, result.links))} records, "
                f"{len(result.rejects)} rejects in {seconds[f'parse {snapshot.source.source_id}']:.2f} s"
            )
    except BaseException:
        early.abort()  # an error or Ctrl-C: the wordings are read for nothing
        raise
    finally:
        for left in prepared.values():  # a parser failed before the others took theirs
            if left is not None:
                left.abort()  # type: ignore[attr-defined]
    if writer is not None:
        writer.open(temp_path(target.path, "build"))
    started = time.perf_counter()
    readings = read_ahead(sources, results, early)
    if writer is not None:  # after the last fork: a thread of this process sends them
        load_ahead(writer, [links for result in results.values() for links in result.links])
    try:  # the wordings read ahead are waited for by the load (the rules' effects, made last)
        valid = validate(sources, results, readings, effects_later=True)
        accounting = account(sources, results, valid)
        seconds["validate and merge"] = time.perf_counter() - started
        progress(f"validated and merged in {seconds['validate and merge']:.2f} s")
        lost = shrinkage(previous or {}, accounting, [s.source_id for s in listed], skipped)
        for line in lost:
            progress(f"shrink{' (allowed)' if allow_shrink else ''}: {line}")
        if lost and not allow_shrink:
            more = f"; and {len(lost) - 1} more (listed above, unless --quiet)" if len(lost) > 1 else ""
            raise BuildError(
                f"the new build would shrink {db_path}: {lost[0]}{more}; the previous database is kept. "
                "Check that source's raw files, or pass --allow-shrink if the shrink is intended"
            )
        boilerplate: Counter[str] = Counter()
        for result in results.values():
            boilerplate.update(result.boilerplate)
        progress(f"loading {len(valid.records) + len(valid.filled) + sum(map(len, valid.links))} rows and the "
                 f"effects of the rules into {db_path}")
        rejects = [r for result in results.values() for r in result.rejects] + valid.rejects
        started = time.perf_counter()
        effects_seconds = 0.0

        def effects() -> list[Record]:  # called by the load once the other rows are in: the wordings
            nonlocal effects_seconds    # read ahead meanwhile (the second process) have come by then
            begun = time.perf_counter()
            assert valid.effects is not None
            made = valid.effects()
            effects_seconds = time.perf_counter() - begun
            return made

        rows = load_database(
            [*sources, *valid.records, *valid.filled, *load_aliases(), *valid.conflicts, *rejects, *accounting,
             *valid.agreement],
            target if target.backend != "duckdb" else target.path, links=valid.links, later=effects, writer=writer,
        )
        seconds["effects"] = effects_seconds
        seconds["load"] = time.perf_counter() - started - effects_seconds
        progress(f"read the rules' effects in {effects_seconds:.2f} s (while the other rows went in)")
        progress(f"loaded in {seconds['load']:.2f} s")
    finally:
        if readings is not None:
            readings.abort()  # read already, or an error or Ctrl-C: it stops
    if keep is not None:
        keep.append((results, valid, rejects))
    return BuildReport(
        db_path=db_path, rows=rows, accounting=accounting, boilerplate=boilerplate, skipped=skipped,
        seconds=seconds,
    )
