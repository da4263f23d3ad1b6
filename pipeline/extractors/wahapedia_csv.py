"""Wahapedia CSV export (10th and 11th edition): extracts what its 20 pipe-separated tables print.

What it hands to the assembly (``pipeline.assemble``): a ``PrintedDatasheet`` per Datasheets row
(its Starting Strength read from its composition rows), a ``PrintedComposition`` per
Datasheets_unit_composition row (the model part: its first line, the keyword spans cut off), a
``PrintedModel`` per Datasheets_models row, a ``PrintedWeapon`` per Datasheets_wargear row, a
``PrintedAbility`` per Datasheets_abilities row and for the ``transport``, ``damaged_*`` and
``leader_*`` columns, the ``loadout`` lines and the keywords; the collector and the id scheme are
the assembly's too. The tables no other source prints (publications, detachments, options, costs,
Stratagems, enhancements, rule texts) it builds itself.

Pure: ``parse_export(files, source)`` takes the decoded text of each table, keyed by table name
(the file stem: ``"Datasheets"``, ``"Datasheets_wargear"``), and returns records, rejects and the
per-table accounting. No I/O, no globals. The reader is ``pipeline.extractors.psv``. On a large
export a worker process shares the cleaning of the HTML fields (``HTML_COLUMNS``;
``WH40K_JOBS=1`` keeps it in the calling process): the output is the same either way.

Every input row of every table ends as exactly one of: loaded (it gave one or more records),
a counted duplicate, or a ``Reject`` (locator ``"Datasheets_wargear.csv line 123"``, the raw row,
the reason). The counters of the result (``input_rows``, ``loaded``, ``duplicates``) and
``Reject.table_name`` are keyed by *input* table (the file stem), because one input row can give
records of several tables (a wargear row: a ``WeaponProfile``, its ``WeaponAbility`` rows and
flags). ``accounting(result, source_id)`` returns one ``Accounting`` per input table, and for each
``input_rows == loaded + duplicates + rejected`` (``check_accounting`` raises otherwise).

Decisions (see also the tables of labels below, which are the data this parser reads):

- Duplicates: a row identical to an earlier row of the same table (the whole raw line) is a
  counted duplicate (``exact_duplicates``). A row whose record key is already loaded with the
  same values is a counted duplicate too (e.g. one keyword listed for two models). A row whose
  key is loaded with *different* values is rejected (``duplicate_profile_conflict`` for weapon
  profiles, ``duplicate_key_conflict`` otherwise) and the kept record gets a ``DataFlag`` naming
  both rows: the first row wins, never the last, never silently.
- Blank wargear placeholder rows (no name, no range, no type) are rejected with the reason
  ``blank wargear placeholder row``; identical repeats of them are counted duplicates first.
- Orphans (a ``datasheet_id`` not in Datasheets.csv) are rejected:
  ``orphan: datasheet 000004150 is not in Datasheets.csv``.
- The test row (``Example Wargear``: ``virtual=true`` and no ``source_id``) is rejected as
  ``test row: ...``; its child rows are rejected as belonging to a rejected datasheet.
- Datasheet ids are ``{edition}e/{faction slug}/{name slug}``; when several rows of one faction
  share a name (Wahapedia prints them from different publications: a codex and its supplement,
  a codex and Warhammer Legends), the row whose Wahapedia link has no ``-1`` suffix keeps the
  plain id and the others get ``--{publication slug}`` (``--`` never occurs in a slug), with a
  ``repeated_datasheet_name`` flag on each.
- Faction ids are the slug of the faction name, so ``T’au Empire`` and ``T'au Empire`` are one
  faction (the second row is a counted duplicate, with a ``faction_name_variant`` flag).
- Source, Detachments, Detachment_abilities, Datasheets_options, Datasheets_models_cost,
  Datasheets_enhancements and Datasheets_detachment_abilities give ``Publication``,
  ``Detachment``, ``DetachmentAbility``, ``WargearOption``, ``UnitCost``,
  ``DatasheetEnhancement`` and ``DatasheetDetachmentAbility`` records.
- Abilities.csv (core and faction abilities) gives ``RuleText`` rows (the wording of the rule;
  the box title and fluff paragraph of core abilities are dropped). A Stratagems.csv row whose
  type is not ``... Stratagem`` (``Datasheet Ability``; the Aeldari Agile Manoeuvres with an
  empty type) is a ``RuleText`` too, with a ``not_a_stratagem`` flag, never a ``Stratagem``.
- The Datasheets columns ``transport``, ``damaged_w`` / ``damaged_description`` and
  ``leader_head`` / ``leader_footer`` give ``Ability`` rows of kind ``other`` (``Transport``,
  ``Damaged`` with the wound range as parameter, ``Leader``). ``loadout`` gives one
  ``WargearLoadout`` per ``... equipped with: ...`` line; its other lines are kept as
  ``loadout_note`` flags. An ``inv_sv_descr`` note restricts the invulnerable save (scope)
  unless it states another roll target or is about re-rolls; every note is kept as an
  ``invulnerable_save_note`` flag.
- Columns read but not stored (no field yet): Factions/Datasheets ``link``, Datasheets
  ``source_id`` (the publication), ``virtual`` / ``is_support`` (flags when true), models
  ``base_size`` / ``base_size_descr``, Stratagems ``faction_id`` / ``turn`` / ``phase`` /
  ``detachment_id``, Enhancements ``faction_id`` / ``detachment_id``, Abilities ``legend``,
  Datasheets_options ``button`` (kept as ``is_footnote``).
- ``restore_listbrewer_resave`` undoes the comma re-save of the ListBrewer 11th-edition copy. It
  is never applied implicitly: the caller (a test set-up, a build step) decides.
"""

from __future__ import annotations

import csv
import datetime as dt
import io
import re
from collections import Counter, defaultdict
from dataclasses import dataclass, field
from typing import Callable, Iterable, Iterator, Mapping

from pydantic import ValidationError

from pipeline.assemble.abilities import assemble_ability
from pipeline.assemble.collector import Collector, Outcome, entity_key
from pipeline.assemble.composition import assemble_composition
from pipeline.assemble.stratagems import assemble_stratagem
from pipeline.assemble.datasheets import assemble_datasheet, starting_strength
from pipeline.assemble.ids import datasheet_id, qualified_datasheet_id
from pipeline.assemble.keywords import read_keyword, read_keywords
from pipeline.assemble.loadouts import assemble_loadout
from pipeline.assemble.models import assemble_model
from pipeline.assemble.printed import (
    PrintedAbility, PrintedComposition, PrintedDatasheet, PrintedModel, PrintedStratagem,
    PrintedWeapon,
)
from pipeline.assemble.weapons import assemble_weapon
from pipeline.errors import ManifestError, NormaliseError
from pipeline.normalise.text import BatchedHtmlCleaning, SharedHtmlCleaning, clean_line, html_to_text, slug
from pipeline.extractors import LinkColumns, ParseResult
from pipeline.extractors.psv import Records, Row, Table, read_table, split_records
from schemas.records import (
    Accounting,
    DataFlag,
    DataGap,
    Datasheet,
    DatasheetDetachmentAbility,
    DatasheetEnhancement,
    DatasheetStratagem,
    Detachment,
    DetachmentAbility,
    Enhancement,
    Faction,
    Keyword,
    LeaderLink,
    ModelProfile,
    Provenanced,
    Publication,
    Record,
    Reject,
    RuleText,
    Source,
    UnitComposition,
    UnitCost,
    WargearLoadout,
    WargearOption,
    WeaponProfile,
    key_getter,
)

# --------------------------------------------------------------------------------------------
# The data this parser reads: tables, columns, labels.
# --------------------------------------------------------------------------------------------

#: The 20 tables of the export, in the order they are processed (parents before children).
TABLES: tuple[str, ...] = (
    "Last_update",
    "Factions",
    "Source",
    "Abilities",
    "Detachments",
    "Detachment_abilities",
    "Datasheets",
    "Datasheets_keywords",
    "Datasheets_unit_composition",
    "Datasheets_models",
    "Datasheets_wargear",
    "Datasheets_abilities",
    "Datasheets_leader",
    "Datasheets_options",
    "Datasheets_models_cost",
    "Stratagems",
    "Datasheets_stratagems",
    "Enhancements",
    "Datasheets_enhancements",
    "Datasheets_detachment_abilities",
)

#: Per table: (required columns, optional columns). A missing required column rejects every row
#: of the table with the reason; a column in neither list gets one ``unknown_column`` flag.
COLUMNS: dict[str, tuple[tuple[str, ...], tuple[str, ...]]] = {
    "Last_update": (("last_update",), ()),
    "Factions": (("id", "name"), ("link",)),
    "Source": (("id", "name"), ("type", "edition", "version", "errata_date", "errata_link")),
    "Abilities": (("id", "name", "description"), ("legend", "faction_id")),
    "Detachments": (("id", "name"), ("faction_id", "legend", "type")),
    "Detachment_abilities": (
        ("id", "name", "description"),
        ("faction_id", "legend", "detachment", "detachment_id"),
    ),
    "Datasheets": (
        ("id", "name", "faction_id"),
        (
            "source_id",
            "legend",
            "role",
            "loadout",
            "transport",
            "virtual",
            "is_support",
            "leader_head",
            "leader_footer",
            "damaged_w",
            "damaged_description",
            "link",
        ),
    ),
    "Datasheets_unit_composition": (("datasheet_id", "line", "description"), ()),
    "Datasheets_models": (
        ("datasheet_id", "line", "name", "M", "T", "Sv", "W", "Ld", "OC"),
        ("inv_sv", "inv_sv_descr", "base_size", "base_size_descr"),
    ),
    "Datasheets_wargear": (
        ("datasheet_id", "name", "range", "type", "A", "BS_WS", "S", "AP", "D"),
        ("line", "line_in_wargear", "dice", "description"),
    ),
    "Datasheets_keywords": (("datasheet_id", "keyword", "is_faction_keyword"), ("model",)),
    "Datasheets_abilities": (
        ("datasheet_id", "type"),
        ("line", "ability_id", "model", "name", "description", "parameter"),
    ),
    "Datasheets_leader": (("leader_id", "attached_id"), ()),
    "Datasheets_options": (("datasheet_id", "line", "description"), ("button",)),
    "Datasheets_models_cost": (("datasheet_id", "line", "description", "cost"), ()),
    "Stratagems": (
        ("id", "name", "type", "description"),
        ("faction_id", "cp_cost", "legend", "turn", "phase", "detachment", "detachment_id"),
    ),
    "Datasheets_stratagems": (("datasheet_id", "stratagem_id"), ()),
    "Enhancements": (
        ("id", "name", "cost", "description"),
        ("faction_id", "detachment", "detachment_id", "legend"),
    ),
    "Datasheets_enhancements": (("datasheet_id", "enhancement_id"), ()),
    "Datasheets_detachment_abilities": (("datasheet_id", "detachment_ability_id"), ()),
}

#: Column names used by other versions of the export (the specification workbook names the
#: leader columns ``datasheet_id`` / ``attached_datasheet_id``; the data says ``leader_id`` /
#: ``attached_id``): read as the canonical name.
COLUMN_ALIASES: dict[str, dict[str, str]] = {
    "Datasheets_leader": {"datasheet_id": "leader_id", "attached_datasheet_id": "attached_id"},
}

#: ``Datasheets_abilities.type`` -> ability kind. The Russian labels are Wahapedia's own
#: layout notes ("right column", "left column", "no heading").
ABILITY_KINDS: dict[str, str] = {
    "Core": "core",
    "Faction": "faction",
    "Datasheet": "datasheet",
    "Primarch": "datasheet",
    "Wargear": "wargear",
    "Wargear profile": "wargear",
    "Special (правая колонка)": "other",
    "Fortification (левая колонка)": "other",
    "Без заголовка": "other",
}

#: The HTML columns of each table, in the order the parser reads them. On a large export their
#: distinct fragments are cleaned by the parser and a worker process together
#: (``SharedHtmlCleaning``: about 1.4 s of beautifulsoup4 work on the full 10th-edition export).
#: Only a matter of speed: a fragment not listed is cleaned when the parser reaches it.
HTML_COLUMNS: dict[str, tuple[str, ...]] = {
    "Abilities": ("name", "description"),
    "Detachments": ("legend",),
    "Detachment_abilities": ("description", "legend"),
    "Datasheets": (
        "name", "legend", "loadout", "transport", "damaged_description", "leader_head",
        "leader_footer",
    ),
    "Datasheets_keywords": ("keyword",),
    "Datasheets_unit_composition": ("description",),
    "Datasheets_models": ("inv_sv_descr",),
    "Datasheets_wargear": ("description",),
    "Datasheets_abilities": ("name", "description"),
    "Datasheets_options": ("description",),
    "Datasheets_models_cost": ("description",),
    "Stratagems": ("name", "description", "legend"),
    "Enhancements": ("name", "description", "legend"),
}
#: An export with fewer tags than this in those tables is cleaned in the calling process alone
#: (a worker would cost more than it saves; the full 10th-edition export has about 150,000).
SHARED_HTML_MIN_TAGS = 20_000

#: The tables that link a datasheet to a row of another table, and nothing else: read by
#: ``_Export.link_rows`` in one loop, without a dict of values per row (some 96,000 rows).
LINK_TABLES = frozenset({"Datasheets_stratagems", "Datasheets_enhancements", "Datasheets_detachment_abilities"})

#: ``Datasheets_keywords.model`` values that mean the whole unit.
WHOLE_UNIT_MODELS = frozenset({"", "ALL", "ALL MODELS"})

BOOLEANS = {"true": True, "false": False}

# --------------------------------------------------------------------------------------------
# Result and accounting.
# --------------------------------------------------------------------------------------------


@dataclass
class ExportParseResult(ParseResult):
    """``ParseResult`` plus the per-table accounting of the export.

    All counters are keyed by input table (file stem, ``"Datasheets_wargear"``), as is
    ``Reject.table_name``. ``input_rows`` and ``loaded`` (inherited): rows read and rows that
    gave records. ``duplicates`` (inherited) counts, per input table, rows collapsed into an
    already loaded record; ``exact_duplicates`` is the part of it that repeated a whole earlier
    row. ``last_update``: the export's timestamp.
    """

    exact_duplicates: Counter[str] = field(default_factory=Counter)
    last_update: dt.datetime | None = None


def accounting(result: ExportParseResult, source_id: str) -> list[Accounting]:
    """Per input table: input rows, loaded, duplicates, rejected (one ``Accounting`` each).

    For each table ``input_rows == loaded + duplicates + rejected``; ``check_accounting``
    raises when it does not hold.
    """
    rejected = Counter(r.table_name for r in result.rejects)
    tables = sorted(set(result.input_rows) | set(rejected) | set(result.duplicates))
    return [
        Accounting(
            source_id=source_id,
            stage="parse",
            table_name=t,
            input_rows=result.input_rows[t],
            loaded=result.loaded[t],
            duplicates=result.duplicates[t],
            rejected=rejected[t],
        )
        for t in tables
    ]


def check_accounting(rows: Iterable[Accounting]) -> None:
    """Raise ``AssertionError`` naming every table whose counts do not add up (a parser bug)."""
    bad = [
        f"{a.table_name}: {a.input_rows} != {a.loaded} + {a.duplicates} + {a.rejected}"
        for a in rows
        if a.input_rows != a.loaded + a.duplicates + a.rejected
    ]
    if bad:
        raise AssertionError("accounting does not add up: " + "; ".join(bad))


# --------------------------------------------------------------------------------------------
# The ListBrewer re-save.
# --------------------------------------------------------------------------------------------


def restore_listbrewer_resave(text: str) -> str:
    """Undo the ListBrewer re-save of an 11th-edition export file.

    That copy was read as *comma*-separated CSV and written back with ``|`` as the delimiter:
    every line is wrapped in ``"…"``, literal ``"`` are doubled and each comma of the original
    became a field break. Reading each record with a CSV reader (delimiter ``|``, quote ``"``)
    and joining its fields with ``,`` gives back the original line. A leading BOM and the line
    ending style are kept. A field that began with ``"`` right after a comma in the original
    cannot be recovered (the re-save lost it).

    >>> restore_listbrewer_resave('"a|b|"\\n"1|x"|" y|"\\n')
    'a|b|\\n1|x, y|\\n'
    >>> restore_listbrewer_resave('"1|6""|"\\n')
    '1|6"|\\n'
    """
    bom = text.startswith("\ufeff")
    body = text[1:] if bom else text
    newline = "\r\n" if "\r\n" in body else "\n"
    records = csv.reader(io.StringIO(body, newline=""), delimiter="|", quotechar='"')
    lines = [",".join(fields) for fields in records]
    out = newline.join(lines) + (newline if body.endswith("\n") else "")
    return ("\ufeff" if bom else "") + out


# --------------------------------------------------------------------------------------------
# The parser.
# --------------------------------------------------------------------------------------------


def prepare_export(files: Mapping[str, str], source: Source) -> SharedHtmlCleaning | None:
    """Start sharing the HTML clean-up of a large export with a worker process, or None.

    Pass the result to ``parse_export(..., prepared=...)``, which closes it. The worker reads
    its own copy of the tables, so the caller can do other work meanwhile (see
    ``SharedHtmlCleaning``; ``WH40K_JOBS=1`` or a small export: None).
    """
    return _start_shared_html(files)


def parse_export(
    files: Mapping[str, str], source: Source, prepared: SharedHtmlCleaning | None = None,
    link_columns: bool = False, rules_parsed: Callable[[list[Record]], None] | None = None,
) -> ExportParseResult:
    """Parse a Wahapedia CSV export: ``{table name: decoded text}`` -> records and rejects.

    ``files`` maps the table name (file stem, e.g. ``"Datasheets_wargear"``) to its text, a
    leading BOM included or not. Any subset of the 20 tables may be given; a child row whose
    parent table is missing is rejected as an orphan. A name that is not one of the 20 tables
    rejects its rows (``unknown table``). ``source.edition`` (10 or 11) gives the edition of
    every datasheet and stratagem.

    ``prepared`` is what ``prepare_export`` returned for these files; when None, the parser
    starts the worker itself if the export is large. ``link_columns``: the rows of the link
    tables (``LINK_TABLES``) go to ``result.links`` as columns (``LinkColumns``, as the build
    takes them), not to ``result.records``; the counts and rejects are the same.
    ``rules_parsed``: called once, with the records so far (the list the parse goes on adding
    to), when every table of rules (abilities, detachment abilities, stratagems, enhancements)
    has been read and the link tables are left: the build starts reading the rules' wordings
    then, in a second process (``pipeline.build.read_ahead``).

    Raises ``ManifestError`` when ``source.edition`` is None.
    """
    if source.edition is None:
        if prepared is not None:
            prepared.close()
        raise ManifestError(
            f"source {source.source_id!r}: a Wahapedia export needs its edition (10 or 11) "
            "in the raw manifest"
        )
    return _Export(files, source, prepared, link_columns, rules_parsed).run()


class _Rejected(Exception):
    """Raised by a row handler: the row is rejected with this reason."""


class _Duplicate(Exception):
    """Raised by a row handler: the row repeats a loaded record (counted duplicate)."""


_Handler = Callable[[Row], list[Record]]


class _Export:
    """State of one ``parse_export`` call (id maps, key registry, HTML cache)."""

    def __init__(
        self, files: Mapping[str, str], source: Source, prepared: SharedHtmlCleaning | None,
        link_columns: bool = False, rules_parsed: Callable[[list[Record]], None] | None = None,
    ) -> None:
        self.source = source
        self.link_columns = link_columns
        self.rules_parsed = rules_parsed
        self.sid = source.source_id
        self.edition = source.edition
        self.prefix = f"{source.edition}e"
        self.result = ExportParseResult()
        # Started first: the worker reads its own copy of the HTML tables meanwhile.
        self._shared_html: BatchedHtmlCleaning | None = (
            prepared if prepared is not None else _start_shared_html(files))
        self.tables: dict[str, Table] = {}
        self.unknown_tables: dict[str, Table] = {}
        #: The link tables (``LINK_TABLES``) as split records: no dict of values per row.
        self.link_records: dict[str, Records] = {}
        for name, text in files.items():
            if name in LINK_TABLES and name not in COLUMN_ALIASES:
                self.link_records[name] = split_records(text)
                continue
            table = _read(text, name)
            if name in COLUMNS:
                self.tables[name] = table
            else:
                self.unknown_tables[name] = table
        if self._shared_html is None:  # no worker: still one parse tree per chunk of fragments
            self._shared_html = BatchedHtmlCleaning()
        self._shared_html.expect(html_fragments(self.tables))
        self._html: dict[str, str] = {}
        self.collector = Collector(source.source_id)  # the shared duplicate and flag rules
        self._seen = self.collector._seen  # (table, key) -> first record, read by a few checks
        # Wahapedia id maps.
        self.faction_slug: dict[str, str] = {}  # Wahapedia faction id -> faction_id
        self.publication_name: dict[str, str] = {}
        self.ability_names: dict[str, str] = {}  # Abilities.csv id -> name
        self.datasheet_ids: dict[str, str] = {}  # Wahapedia datasheet id -> datasheet_id
        self.datasheet_rejected: dict[str, str] = {}  # Wahapedia id -> reason
        self.stratagem_ids: dict[str, str] = {}
        self.stratagem_routed: dict[str, str] = {}  # ids of Stratagems rows that are not stratagems
        self.enhancement_ids: dict[str, str] = {}
        self.detachment_ability_ids: dict[str, str] = {}
        self.detachment_ids: dict[str, str] = {}
        self.composition: dict[str, list[UnitComposition]] = defaultdict(list)
        self.faction_keyword_seen: set[str] = set()
        self.profiled: set[str] = set()
        self.repeated_names: dict[str, str] = {}  # Wahapedia id -> the rows sharing its name
        self.datasheet_drafts: dict[str, tuple[int, list[Record]]] = {}  # id -> (line, records)
        self.datasheet_names: dict[str, str] = {}  # Wahapedia id -> name as printed

    # ---- bookkeeping -----------------------------------------------------------------------

    def locator(self, table: str, line: int) -> str:
        return f"{table}.csv line {line}"

    def reject(self, table: str, line: int, raw: str, reason: str) -> None:
        self.result.rejects.append(
            Reject(
                source_id=self.sid,
                locator=self.locator(table, line),
                table_name=table,
                raw_text=raw,
                reason=reason,
            )
        )

    def flag(
        self, table: str, line: int, record_table: str, entity_key: str, flag: str, detail: str
    ) -> DataFlag | None:
        """A flag under the shared rules (``Collector.new_flag``): None when it repeats one
        with the same detail (a counted duplicate); the row handlers' lists drop the Nones."""
        return self.collector.new_flag(record_table, entity_key, flag, detail, self.locator(table, line))

    def claim(self, record: Provenanced, key: tuple | None = None) -> None:
        """Register a record's key (``Collector.claim``); raise ``_Duplicate`` when it is taken
        by the same values, ``_Rejected`` with the shared reason when by other values."""
        outcome, first = self.collector.claim(record, key)
        if outcome is Outcome.DUPLICATE:
            raise _Duplicate()
        if outcome is Outcome.CONFLICT:
            assert first is not None
            raise _Rejected(self.collector.conflict_reason(first, record))

    def html(self, fragment: str) -> str:
        """Clean text of an HTML fragment (memoised for this export)."""
        if not fragment:
            return ""
        text = self._html.get(fragment)
        if text is None:
            shared = self._shared_html
            text = html_to_text(fragment) if shared is None else shared.get(fragment)
            self._html[fragment] = text
        return text

    def text_or_none(self, fragment: str) -> str | None:
        return self.html(fragment) or None

    def rows(self, name: str, handler: _Handler) -> None:
        """Run ``handler`` over every row of a table, with the accounting."""
        table = self.tables.get(name)
        if table is None:
            return
        res = self.result
        res.input_rows[name] += table.input_rows
        for bad in table.bad_rows:
            self.reject(name, bad.line, bad.raw, bad.reason)
        required, optional = COLUMNS[name]
        missing = [c for c in required if c not in table.columns]
        if missing:
            reason = (
                f"the header of {name}.csv lacks the column(s) {', '.join(missing)} "
                f"(header: {'|'.join(table.columns)})"
            )
            for row in table.rows:
                self.reject(name, row.line, row.raw, reason)
            return
        unknown = [c for c in table.columns if c not in required and c not in optional]
        if unknown:
            _keep(res.records, 
                self.flag(
                    name,
                    1,
                    "sources",
                    name,
                    "unknown_column",
                    f"{name}.csv has column(s) this parser does not read: {', '.join(unknown)}",
                )
            )
        seen_raw: set[str] = set()
        loaded = duplicates = exact_duplicates = 0  # added to the counters once, at the end
        kept = res.records
        for row in table.rows:
            if row.raw in seen_raw:
                duplicates += 1
                exact_duplicates += 1
                continue
            seen_raw.add(row.raw)
            try:
                records = handler(row)
            except _Duplicate:
                duplicates += 1
                continue
            except _Rejected as exc:
                self.reject(name, row.line, row.raw, str(exc))
                continue
            except NormaliseError as exc:
                self.reject(name, row.line, row.raw, str(exc))
                continue
            except ValidationError as exc:
                self.reject(name, row.line, row.raw, _validation_reason(exc))
                continue
            loaded += 1
            for record in records:
                if record is not None:
                    kept.append(record)
        if loaded:
            res.loaded[name] += loaded
        if duplicates:
            res.duplicates[name] += duplicates
        if exact_duplicates:
            res.exact_duplicates[name] += exact_duplicates

    def link_rows(self, name: str) -> None:
        """A link table (``LINK_TABLES``: a datasheet id and another table's id) as
        ``rows(name, ...)`` with the ``link`` handler takes it (the same records, rejects and
        counts), in one loop over its split records: no dict of values, exception or handler
        call per row; with ``link_columns``, its rows go to ``result.links`` as one
        ``LinkColumns``. A table whose header is not exactly its two columns goes through
        ``rows`` (the unknown and missing columns)."""
        records = self.link_records.get(name)
        handler = lambda row: self.link(name, row)  # noqa: E731
        if records is None:
            self.rows(name, handler)
            return
        column, ids, record_type = self._link_columns(name)
        if sorted(records.columns) != sorted(COLUMNS[name][0]):
            self.tables[name] = _table_of(name, records)
            self.rows(name, handler)
            return
        res = self.result
        res.input_rows[name] += records.input_rows
        for bad in records.bad_rows:
            self.reject(name, bad.line, bad.raw, bad.reason)
        values = records.column_lists()
        seen_raw: set[str] = set()
        keys: set[tuple[str, str]] = set()
        locators: list[str] = []
        sheets: list[str] = []
        targets: list[str] = []
        duplicates = exact_duplicates = 0
        # Each row's two ids looked up in one pass per column (C loops), then one loop per row
        sheet_wids, target_wids = list(map(str.strip, values["datasheet_id"])), list(map(str.strip, values[column]))
        for line, raw, ds_id, other, ds_wid, wid in zip(
                records.lines, records.raws, map(self.datasheet_ids.get, sheet_wids), map(ids.get, target_wids),
                sheet_wids, target_wids):
            if raw in seen_raw:
                duplicates += 1
                exact_duplicates += 1
                continue
            seen_raw.add(raw)
            if ds_id is None or other is None:  # the handler's reason (``datasheet``, ``link_target``)
                try:
                    self.datasheet(ds_wid)
                    self.link_target(name, wid)
                except _Rejected as exc:
                    self.reject(name, line, raw, str(exc))
                continue
            key = (ds_id, other)
            if key in keys:  # the same two ids again: the same values (counted duplicate)
                duplicates += 1
                continue
            keys.add(key)
            locators.append(f"{name}.csv line {line}")
            sheets.append(ds_id)
            targets.append(other)
        links = LinkColumns(record_type, [self.sid] * len(locators), locators, sheets, targets)
        if self.link_columns:
            res.links.append(links)
        else:
            res.records.extend(links.records())
        if locators:
            res.loaded[name] += len(locators)
        if duplicates:
            res.duplicates[name] += duplicates
        if exact_duplicates:
            res.exact_duplicates[name] += exact_duplicates

    def _link_columns(self, name: str) -> tuple[str, Mapping[str, str], type[Record]]:
        """A link table's (id column, Wahapedia id -> id, record type)."""
        if name == "Datasheets_stratagems":
            return "stratagem_id", self.stratagem_ids, DatasheetStratagem
        if name == "Datasheets_enhancements":
            return "enhancement_id", self.enhancement_ids, DatasheetEnhancement
        return "detachment_ability_id", self.detachment_ability_ids, DatasheetDetachmentAbility

    def link_target(self, name: str, wid: str) -> str:
        """The id that a row of link table ``name`` points to by its Wahapedia id ``wid``, or
        raise ``_Rejected`` (an orphan, or a Stratagems row that is not a stratagem)."""
        target = self._link_columns(name)[1].get(wid)
        if target is not None:
            return target
        if name == "Datasheets_stratagems" and wid in self.stratagem_routed:
            raise _Rejected(f"stratagem {wid} is not a stratagem (type {self.stratagem_routed[wid]!r})")
        what, file = {"Datasheets_stratagems": ("stratagem", "Stratagems.csv"),
                      "Datasheets_enhancements": ("enhancement", "Enhancements.csv")}.get(
                          name, ("detachment ability", "Detachment_abilities.csv"))
        raise _Rejected(f"orphan: {what} {wid} is not in {file}")

    def link(self, name: str, row: Row) -> list[Record]:
        """A row of link table ``name`` (a datasheet and another table's row): its record."""
        column, _, record_type = self._link_columns(name)
        ds_id = self.datasheet(row.values["datasheet_id"].strip())
        record = record_type(source_id=self.sid, locator=self.locator(name, row.line), datasheet_id=ds_id,
                             **{column: self.link_target(name, row.values[column].strip())})
        self.claim(record)
        return [record]

    def datasheet(self, wid: str) -> str:
        """The ``datasheet_id`` of a Wahapedia datasheet id, or raise ``_Rejected``."""
        ds = self.datasheet_ids.get(wid)
        if ds is not None:
            return ds
        if wid in self.datasheet_rejected:
            raise _Rejected(f"datasheet {wid} was rejected ({self.datasheet_rejected[wid]})")
        raise _Rejected(f"orphan: datasheet {wid} is not in Datasheets.csv")

    # ---- run -------------------------------------------------------------------------------

    def run(self) -> ExportParseResult:
        try:
            result = self._run()
        except BaseException:  # an error or Ctrl-C: stop the worker, read nothing more from it
            if self._shared_html is not None:
                self._shared_html.abort()
            raise
        finally:
            shared, self._shared_html = self._shared_html, None
        if shared is not None:
            shared.close()
        return result

    def _run(self) -> ExportParseResult:
        self.rows("Last_update", self.last_update)
        self.rows("Factions", self.factions)
        self.rows("Source", self.publications)
        self.rows("Abilities", self.abilities)
        self.rows("Detachments", self.detachments)
        self.rows("Detachment_abilities", self.detachment_abilities)
        self.prepare_datasheets()
        # Keywords before the unit composition: the composition's keyword spans (EPIC HERO)
        # only add a keyword the unit does not already have from Datasheets_keywords.csv.
        self.rows("Datasheets_keywords", self.keywords)
        self.rows("Datasheets_unit_composition", self.unit_composition)
        self.rows("Datasheets", self.datasheets)
        self.rows("Datasheets_models", self.models)
        self.rows("Datasheets_wargear", self.wargear)
        self.datasheet_checks()
        self.rows("Datasheets_abilities", self.datasheet_abilities)
        self.rows("Datasheets_leader", self.leaders)
        self.rows("Datasheets_options", self.options)
        self.rows("Datasheets_models_cost", self.models_cost)
        self.rows("Stratagems", self.stratagems)
        self.rows("Enhancements", self.enhancements)
        if self.rules_parsed is not None:  # every table of rules read; the link tables are left
            self.rules_parsed(self.result.records)
        self.link_rows("Datasheets_stratagems")
        self.link_rows("Datasheets_enhancements")
        self.link_rows("Datasheets_detachment_abilities")
        for name, table in self.unknown_tables.items():
            self.result.input_rows[name] += table.input_rows
            for row in table.rows:
                self.reject(
                    name, row.line, row.raw, f"unknown table {name!r}: not part of the export"
                )
            for bad in table.bad_rows:
                self.reject(
                    name, bad.line, bad.raw, f"unknown table {name!r}: not part of the export"
                )
        return self.result

    # ---- small tables ----------------------------------------------------------------------

    def last_update(self, row: Row) -> list[Record]:
        text = clean_line(row.values["last_update"])
        try:
            stamp = dt.datetime.strptime(text, "%Y-%m-%d %H:%M:%S")
        except ValueError:
            raise _Rejected(f"not a timestamp: {text!r} (expected yyyy-mm-dd hh:mm:ss)") from None
        self.result.last_update = stamp
        out: list[Record] = []
        if self.source.version_date is not None and self.source.version_date != stamp.date():
            out.append(
                self.flag(
                    "Last_update",
                    row.line,
                    "sources",
                    self.sid,
                    "last_update_differs",
                    f"Last_update.csv says {text}; the manifest says {self.source.version_date}",
                )
            )
        return out

    def factions(self, row: Row) -> list[Record]:
        v = row.values
        wid, name = clean_line(v["id"]), clean_line(v["name"])
        if not wid or not name:
            raise _Rejected("faction row without id or name")
        faction_id = slug(name)
        record = Faction(
            source_id=self.sid,
            locator=self.locator("Factions", row.line),
            faction_id=faction_id,
            name=name,
        )
        key = ("factions", record.key())
        seen = self._seen.get(key)
        self.faction_slug[wid] = faction_id
        if seen is not None:  # the same faction under another spelling or id: join them
            _keep(self.result.records, 
                self.flag(
                    "Factions",
                    row.line,
                    "factions",
                    faction_id,
                    "faction_name_variant",
                    f"{name!r} (id {wid}) joined to {getattr(seen, 'name')!r} "
                    f"from {seen.locator}",
                )
            )
            raise _Duplicate()
        self._seen[key] = record
        return [record]

    def publications(self, row: Row) -> list[Record]:
        v = row.values
        wid = clean_line(v["id"])
        name = clean_line(v["name"])
        if not wid or not name:
            raise _Rejected("publication row without id or name")
        edition_text = clean_line(v.get("edition", ""))
        edition = int(edition_text) if edition_text.isdigit() and edition_text != "0" else None
        if edition_text and not edition_text.isdigit():
            raise _Rejected(f"not an edition number: {edition_text!r}")
        date_text = clean_line(v.get("errata_date", ""))
        errata_date = None
        if date_text:
            try:
                parsed = dt.datetime.strptime(date_text.split(" ")[0], "%d.%m.%Y").date()
            except ValueError:
                raise _Rejected(f"not a date: {date_text!r} (expected dd.mm.yyyy)") from None
            errata_date = None if parsed.year == 1 else parsed
        self.publication_name[wid] = name
        record = Publication(
            source_id=self.sid,
            locator=self.locator("Source", row.line),
            publication_id=self._wid(wid),
            name=name,
            type=clean_line(v.get("type", "")) or None,
            edition=edition,
            version=clean_line(v.get("version", "")) or None,
            errata_date=errata_date,
            errata_url=clean_line(v.get("errata_link", "")) or None,
        )
        self.claim(record)
        return [record]

    def abilities(self, row: Row) -> list[Record]:
        """Abilities.csv: core and faction abilities, as the wording of a rule (``RuleText``)."""
        v = row.values
        wid, name = clean_line(v["id"]), clean_line(self.html(v["name"]))
        if not name:
            raise _Rejected("ability without a name")
        self.ability_names.setdefault(wid, name)
        text = self.html(_strip_ability_box(v["description"]))
        if not text:
            raise _Rejected(f"ability {name!r} has no text")
        record = RuleText(
            source_id=self.sid,
            locator=self.locator("Abilities", row.line),
            rule_key=slug(name),
            title=name,
            section=None,
            edition=self.edition,
            game_mode=None,
            effective_date=None,
            text=text,
        )
        return [record, *self.markup_flags("Abilities", row.line, "rule_texts", slug(name), text)]

    def detachments(self, row: Row) -> list[Record]:
        v = row.values
        wid, name = clean_line(v["id"]), clean_line(v["name"])
        if not name:
            raise _Rejected("detachment without a name")
        record = Detachment(
            source_id=self.sid,
            locator=self.locator("Detachments", row.line),
            detachment_id=self._wid(wid),
            faction_id=self._faction(v.get("faction_id", "")),
            name=name,
            legend=self.text_or_none(v.get("legend", "")),
            type=clean_line(v.get("type", "")) or None,
        )
        self.claim(record)
        self.detachment_ids[wid] = record.detachment_id
        return [record]

    def detachment_abilities(self, row: Row) -> list[Record]:
        v = row.values
        wid, name = clean_line(v["id"]), clean_line(v["name"])
        if not name:
            raise _Rejected("detachment ability without a name")
        text = self.html(v["description"])
        det_wid = clean_line(v.get("detachment_id", ""))
        record = DetachmentAbility(
            source_id=self.sid,
            locator=self.locator("Detachment_abilities", row.line),
            detachment_ability_id=self._wid(wid),
            detachment_id=self._wid(det_wid) if det_wid else None,
            detachment=clean_line(v.get("detachment", "")) or None,
            faction_id=self._faction(v.get("faction_id", "")),
            name=name,
            legend=self.text_or_none(v.get("legend", "")),
            text=text,
        )
        self.claim(record)
        self.detachment_ability_ids[wid] = record.detachment_ability_id
        out: list[Record] = [record]
        out += self.markup_flags(
            "Detachment_abilities",
            row.line,
            "detachment_abilities",
            record.detachment_ability_id,
            text,
        )
        if det_wid and self.tables.get("Detachments") and det_wid not in self.detachment_ids:
            out.append(
                self.flag(
                    "Detachment_abilities",
                    row.line,
                    "detachment_abilities",
                    record.detachment_ability_id,
                    "unknown_detachment",
                    f"detachment {det_wid} is not in Detachments.csv",
                )
            )
        return out

    # ---- datasheets ------------------------------------------------------------------------

    def prepare_datasheets(self) -> None:
        """First pass over Datasheets.csv: each row's ``datasheet_id`` and records, or its reject.

        The records of a row (``Datasheet``, ``WargearLoadout``, section ``Ability`` and flags)
        are built and validated here, so that the child tables see only datasheets that will be
        loaded; the ``Datasheets`` pass (after the unit composition, which gives
        ``starting_strength``) then emits them with the accounting. A row is rejected for: no
        name, an unknown faction, being the test row, or a value that does not validate.
        """
        table = self.tables.get("Datasheets")
        if table is None or any(c not in table.columns for c in COLUMNS["Datasheets"][0]):
            return
        groups: dict[str, list[Row]] = defaultdict(list)
        firsts: list[Row] = []
        for row in table.rows:
            v = row.values
            wid, name = v["id"].strip(), clean_line(self.html(v["name"]))
            if not wid or wid in self.datasheet_ids or wid in self.datasheet_rejected:
                continue  # no id, or a repeated id: the Datasheets pass rejects the row
            if not name:
                self.datasheet_rejected[wid] = "datasheet without a name"
                continue
            fid = v["faction_id"].strip()
            if fid not in self.faction_slug:
                self.datasheet_rejected[wid] = f"unknown faction id {fid!r}: not in Factions.csv"
                continue
            if v.get("virtual", "").strip() == "true" and not v.get("source_id", "").strip():
                self.datasheet_rejected[wid] = (
                    f"test row: {name!r} is virtual and has no source publication"
                )
                continue
            base = datasheet_id(self.edition, self.faction_slug[fid], name)
            self.datasheet_names[wid] = name
            groups[base].append(row)
            firsts.append(row)
            self.datasheet_ids[wid] = base
        for base, rows in groups.items():
            if len(rows) > 1:
                self._disambiguate(base, rows)
        for row in firsts:
            wid = row.values["id"].strip()
            try:
                self.datasheet_drafts[wid] = (row.line, self._datasheet_records(row))
            except (_Rejected, NormaliseError) as exc:
                self.datasheet_rejected[wid] = str(exc)
            except ValidationError as exc:
                self.datasheet_rejected[wid] = _validation_reason(exc)
            if wid in self.datasheet_rejected:
                del self.datasheet_ids[wid]

    def _disambiguate(self, base: str, rows: list[Row]) -> None:
        """Distinct, stable ids for rows of one faction that share a name (see module notes)."""
        plain = [r for r in rows if not re.search(r"-\d+$", r.values.get("link", "").strip())]
        keeper = plain[0] if len(plain) == 1 else min(rows, key=lambda r: r.values["id"])
        taken = {base}
        for r in rows:
            if r is keeper:
                continue
            wid = r.values["id"].strip()
            pub = self.publication_name.get(r.values.get("source_id", "").strip())
            ds_id = qualified_datasheet_id(base, pub) if pub else f"{base}--{wid}"
            if ds_id in taken:
                ds_id = f"{base}--{wid}"
            taken.add(ds_id)
            self.datasheet_ids[wid] = ds_id

        def pub_of(r: Row) -> str:
            return self.publication_name.get(
                r.values.get("source_id", "").strip(), "no publication"
            )

        listing = "; ".join(
            f"{r.values['id'].strip()} "
            f"({pub_of(r)})"
            f" -> {self.datasheet_ids[r.values['id'].strip()]}"
            for r in rows
        )
        for r in rows:
            self.repeated_names[r.values["id"].strip()] = listing

    def _datasheet_records(self, row: Row) -> list[Record]:
        v = row.values
        wid = v["id"].strip()
        ds_id = self.datasheet_ids[wid]
        locator = self.locator("Datasheets", row.line)
        printed = PrintedDatasheet(locator, self.html(v["name"]), self.faction_slug[v["faction_id"].strip()],
                                   self.edition, role=v.get("role", ""), legend=self.html(v.get("legend", "")),
                                   external_id=wid)
        record = assemble_datasheet(printed, self.sid, ds_id)
        self.claim(record)
        out: list[Record] = [record]
        flag = lambda code, detail: self.flag("Datasheets", row.line, "datasheets", ds_id, code, detail)  # noqa: E731
        listing = self.repeated_names.get(wid)
        if listing:
            out.append(flag("repeated_datasheet_name", f"{record.name!r} is printed more than once: {listing}"))
        for column, code in (("virtual", "virtual_datasheet"), ("is_support", "support_unit")):
            raw = v.get(column, "").strip()
            if raw and raw not in BOOLEANS:
                out.append(flag("bad_boolean", f"{column}={raw!r} is neither true nor false"))
            elif BOOLEANS.get(raw):
                out.append(flag(code, f"{column}=true"))
        out += self.loadout(row, ds_id)
        out += self.datasheet_sections(row, ds_id)
        return out

    def datasheets(self, row: Row) -> list[Record]:
        """Emit the records prepared for a Datasheets row, with ``starting_strength`` read from
        its unit composition rows (``pipeline.assemble.datasheets.starting_strength``)."""
        wid = row.values["id"].strip()
        if not wid:
            raise _Rejected("datasheet without an id")
        if wid in self.datasheet_rejected:
            raise _Rejected(self.datasheet_rejected[wid])
        line, records = self.datasheet_drafts[wid]
        if line != row.line:
            raise _Rejected(
                f"duplicate_key_conflict: datasheet id {wid} already read from "
                f"{self.locator('Datasheets', line)} with different values"
            )
        starting = starting_strength(None, self.composition.get(wid, []))
        if starting is not None:
            records = [records[0].model_copy(update={"starting_strength": starting}), *records[1:]]
        return records

    def loadout(self, row: Row, ds_id: str) -> list[Record]:
        """``Datasheets.loadout`` -> one ``WargearLoadout`` per ``... equipped with: ...`` line.

        Other lines (designer's notes, composition footnotes) are kept as a
        ``loadout_note`` flag until the schema has a field for them.
        """
        text = self.html(row.values.get("loadout", ""))
        out: list[Record] = []
        n = 0
        for line in text.split("\n"):
            loadout = assemble_loadout(line, source_id=self.sid, locator=self.locator("Datasheets", row.line),
                                       datasheet_id=ds_id, line=n + 1, printed=line)
            if loadout is None:
                if line:
                    out.append(
                        self.flag("Datasheets", row.line, "datasheets", ds_id, "loadout_note", line)
                    )
                continue
            n += 1
            out.append(loadout)
        return out

    def datasheet_sections(self, row: Row, ds_id: str) -> list[Record]:
        """Transport, Damaged and Leader sections of a datasheet row -> ``Ability`` (kind other)."""
        v = row.values
        locator = self.locator("Datasheets", row.line)
        leader = "\n".join(t for t in (self.html(v.get("leader_head", "")), self.html(v.get("leader_footer", ""))) if t)
        printed = [
            PrintedAbility(locator, "other", "Transport", self.html(v.get("transport", ""))),
            PrintedAbility(locator, "other", "Damaged", self.html(v.get("damaged_description", "")),
                           clean_line(v.get("damaged_w", ""))),
            PrintedAbility(locator, "other", "Leader", leader),
        ]
        out: list[Record] = [assemble_ability(p, self.sid, ds_id) for p in printed if p.text or p.parameter]
        flags: list[Record] = []
        for ability in out:
            self.claim(ability)
            flags += self.markup_flags("Datasheets", row.line, "abilities", ability, ability.text or "")
        return out + flags

    def unit_composition(self, row: Row) -> list[Record]:
        """A Datasheets_unit_composition row -> ``UnitComposition`` rows and keyword spans.

        The line (its first line without the keyword spans) is read by
        ``pipeline.assemble.composition``, as the datasheet pages are. Rows are numbered
        from 1 per datasheet in file order (the export lists them by ``line``; a row whose
        ``line`` does not follow the one before gets a ``composition_line_order`` flag). The
        export's ``line`` identifies the input row: the same datasheet and line again is a
        counted duplicate with the same text, a ``duplicate_key_conflict`` reject with another.
        """
        v = row.values
        wid = v["datasheet_id"].strip()
        ds_id = self.datasheet(wid)
        source_line = _int(v["line"], "line")
        html = v["description"]
        model_html, keyword_html = _composition_parts(html)
        text = self.html(html)
        model_text = self.html(model_html).rstrip()
        model_text = re.sub(r"\s*[–—-]\s*$", "", model_text) if keyword_html else model_text
        printed = PrintedComposition(self.locator("Datasheets_unit_composition", row.line), text,
                                     model_text.split("\n")[0].strip())
        # The input row, keyed as the export numbers it (repeats are duplicates or conflicts).
        row_key = ("Datasheets_unit_composition", (ds_id, source_line))
        self.claim(assemble_composition(printed, self.sid, ds_id, source_line).records[0], row_key)
        earlier = self.composition[wid]
        start = earlier[-1].line + 1 if earlier else 1
        assembled = assemble_composition(printed, self.sid, ds_id, start)
        records = assembled.records
        earlier.extend(records)  # type: ignore[arg-type]
        notes = [(n.entity, n.code, n.detail) for n in assembled.notes]
        previous_row_key = ("Datasheets_unit_composition", (ds_id, source_line - 1))
        if source_line != 1 and previous_row_key not in self._seen:
            notes.append((f"{ds_id}|{start}", "composition_line_order",
                          f"export line {source_line} does not follow line {source_line - 1}: rows numbered in file order"))
        out: list[Record | None] = [*records, *(self.flag("Datasheets_unit_composition", row.line, "unit_composition", *n)
                                                for n in notes)]
        for keyword in read_keywords(self.html(keyword_html)):
            kw = Keyword(source_id=self.sid, locator=records[0].locator, datasheet_id=ds_id, keyword=keyword,
                         is_faction_keyword=False)
            try:
                self.claim(kw)
            except (_Duplicate, _Rejected):
                continue  # already a keyword of the unit
            out.append(kw)
        return out

    def models(self, row: Row) -> list[Record]:
        v = row.values
        ds_id = self.datasheet(v["datasheet_id"].strip())
        line = _int(v["line"], "line")
        locator = self.locator("Datasheets_models", row.line)
        printed = PrintedModel(
            locator=locator, line=line, name=v["name"], move=v["M"], toughness=v["T"],
            save=v["Sv"], wounds=v["W"], leadership=v["Ld"], objective_control=v["OC"],
            invulnerable_save=v.get("inv_sv", ""),
            invulnerable_save_note=self.html(v.get("inv_sv_descr", "")),
        )
        assembled = assemble_model(
            printed, self.sid, ds_id, self.datasheet_names.get(v["datasheet_id"].strip())
        )
        record = assembled.records[0]
        self.claim(record)
        self.profiled.add(ds_id)
        out: list[Record | None] = [record]
        out += [self.flag("Datasheets_models", row.line, n.table, n.entity, n.code, n.detail)
                for n in assembled.notes]
        out += [DataGap(source_id=self.sid, locator=locator, table_name=g.table, entity_key=g.entity,
                        field=g.field, reason=g.reason) for g in assembled.gaps]
        return out  # type: ignore[return-value]

    def wargear(self, row: Row) -> list[Record]:
        v = row.values
        ds_id = self.datasheet(v["datasheet_id"].strip())
        printed_name = clean_line(v["name"])
        if not printed_name and not v["range"].strip() and not v["type"].strip():
            raise _Rejected("blank wargear placeholder row")
        if not printed_name:
            raise _Rejected("wargear row without a name")
        kind = clean_line(v["type"])
        if kind not in ("Melee", "Ranged"):
            raise _Rejected(f"unknown weapon type {kind!r} (expected Melee or Ranged)")
        locator = self.locator("Datasheets_wargear", row.line)
        printed = PrintedWeapon(
            locator=locator, name=printed_name, range=v["range"], attacks=v["A"], skill=v["BS_WS"],
            strength=v["S"], armour_penetration=v["AP"], damage=v["D"],
            abilities=self.html(v.get("description", "")), is_melee=kind == "Melee",
            roll=v.get("dice", ""),
        )
        assembled = assemble_weapon(printed, self.sid, ds_id)
        record = assembled.records[0]
        assert isinstance(record, WeaponProfile)
        try:
            self.claim(record)
        except _Rejected:
            first = self.collector.first(record)
            assert isinstance(first, WeaponProfile)
            _keep(self.result.records, self.collector.conflict_flag(first, record))
            raise
        out: list[Record | None] = list(assembled.records)
        out += [self.flag("Datasheets_wargear", row.line, n.table, n.entity, n.code, n.detail)
                for n in assembled.notes]
        out += self.markup_flags(
            "Datasheets_wargear", row.line, "weapon_profiles", record, printed.abilities
        )
        return out  # type: ignore[return-value]

    def keywords(self, row: Row) -> list[Record]:
        v = row.values
        ds_id = self.datasheet(v["datasheet_id"].strip())
        keyword = read_keyword(self.html(v["keyword"]))
        if not keyword:
            raise _Rejected("blank keyword")
        raw_flag = v["is_faction_keyword"].strip()
        if raw_flag not in BOOLEANS:
            raise _Rejected(f"is_faction_keyword={raw_flag!r} is neither true nor false")
        record = Keyword(
            source_id=self.sid,
            locator=self.locator("Datasheets_keywords", row.line),
            datasheet_id=ds_id,
            keyword=keyword,
            is_faction_keyword=BOOLEANS[raw_flag],
        )
        out: list[Record] = []
        model = clean_line(v.get("model", "")).upper()
        if model not in WHOLE_UNIT_MODELS:
            out.append(
                self.flag(
                    "Datasheets_keywords",
                    row.line,
                    "keywords",
                    f"{ds_id}|{keyword}",
                    "model_specific_keyword",
                    f"{keyword} applies to: {model}",
                )
            )
        try:
            self.claim(record)
        except _Duplicate:
            self.result.records.extend(out)  # the model note stays, the row is a duplicate
            raise
        if record.is_faction_keyword:
            self.faction_keyword_seen.add(ds_id)
        return [record, *out]

    def datasheet_checks(self) -> None:
        """Flag loaded datasheets with no faction keyword or no model profile."""
        for record in list(self.result.records):
            if not isinstance(record, Datasheet):
                continue
            line = int(record.locator.rsplit(" ", 1)[1])
            if "Datasheets_keywords" in self.tables and record.datasheet_id not in self.faction_keyword_seen:
                _keep(self.result.records, self.flag("Datasheets", line, "datasheets", record.datasheet_id,
                                                     "missing_faction_keyword", "no faction keyword in Datasheets_keywords.csv"))
            if "Datasheets_models" in self.tables and record.datasheet_id not in self.profiled:
                _keep(self.result.records, self.flag("Datasheets", line, "datasheets", record.datasheet_id,
                                                     "no_model_profile", "no row in Datasheets_models.csv"))

    def datasheet_abilities(self, row: Row) -> list[Record]:
        v = row.values
        ds_id = self.datasheet(v["datasheet_id"].strip())
        label = clean_line(v["type"])
        kind = ABILITY_KINDS.get(label)
        if kind is None:
            raise _Rejected(f"unknown ability type {label!r} (known: {', '.join(ABILITY_KINDS)})")
        ability_wid = clean_line(v.get("ability_id", ""))
        name = clean_line(self.html(v.get("name", "")))
        if ability_wid:
            if ability_wid not in self.ability_names:
                raise _Rejected(f"ability {ability_wid} is not in Abilities.csv")
            name = name or self.ability_names[ability_wid]
        if not name:
            raise _Rejected("ability without a name")
        printed = PrintedAbility(self.locator("Datasheets_abilities", row.line), kind, name,
                                 self.html(v.get("description", "")), v.get("parameter", ""))
        record = assemble_ability(printed, self.sid, ds_id)
        self.claim(record)
        out: list[Record] = [record]
        model = clean_line(v.get("model", ""))
        if model:
            out.append(self.flag("Datasheets_abilities", row.line, "abilities", entity_key(record),
                                 "model_specific_ability", f"{record.name} applies to: {model}"))
        return out + self.markup_flags("Datasheets_abilities", row.line, "abilities", record, record.text or "")

    def leaders(self, row: Row) -> list[Record]:
        v = row.values
        leader, bodyguard = v["leader_id"].strip(), v["attached_id"].strip()
        record = LeaderLink(
            source_id=self.sid,
            locator=self.locator("Datasheets_leader", row.line),
            leader_datasheet_id=self.datasheet(leader),
            bodyguard_datasheet_id=self.datasheet(bodyguard),
            leader_name=self.datasheet_names[leader],
            bodyguard_name=self.datasheet_names[bodyguard],
        )
        self.claim(record)
        return [record]

    def options(self, row: Row) -> list[Record]:
        v = row.values
        text = self.html(v["description"])
        if not text:
            raise _Rejected("wargear option without text")
        record = WargearOption(
            source_id=self.sid,
            locator=self.locator("Datasheets_options", row.line),
            datasheet_id=self.datasheet(v["datasheet_id"].strip()),
            line=_int(v["line"], "line"),
            text=text,
            is_footnote=v.get("button", "").strip() == "*",
        )
        self.claim(record)
        return [record]

    def models_cost(self, row: Row) -> list[Record]:
        v = row.values
        cost_text = clean_line(v["cost"])
        m = re.fullmatch(r"(\+?)(\d+)", cost_text)
        if not m:
            raise _Rejected(f"not a points cost: {cost_text!r}")
        record = UnitCost(
            source_id=self.sid,
            locator=self.locator("Datasheets_models_cost", row.line),
            datasheet_id=self.datasheet(v["datasheet_id"].strip()),
            line=_int(v["line"], "line"),
            description=self.html(v["description"]),
            cost_points=int(m.group(2)),
            is_addon=m.group(1) == "+",
        )
        self.claim(record)
        return [record]

    # ---- stratagems and enhancements -------------------------------------------------------

    def stratagems(self, row: Row) -> list[Record]:
        v = row.values
        wid, name = clean_line(v["id"]), clean_line(self.html(v["name"]))
        if not wid or not name:
            raise _Rejected("stratagem row without id or name")
        locator = self.locator("Stratagems", row.line)
        printed_type = clean_line(v["type"])
        m = _STRATAGEM_TYPE.fullmatch(printed_type)
        text = self.html(v["description"])
        if not (m or printed_type.endswith("Stratagem")):
            # Not a stratagem (e.g. "Datasheet Ability", or the Aeldari Agile Manoeuvres with an
            # empty type): its text is kept as a rule wording, never as a stratagem.
            if not text:
                raise _Rejected(f"not a stratagem (type {printed_type!r}) and no text")
            self.stratagem_routed[wid] = printed_type
            record = RuleText(
                source_id=self.sid,
                locator=locator,
                rule_key=slug(name),
                title=name,
                section=None,
                edition=self.edition,
                game_mode=None,
                effective_date=None,
                text=text,
            )
            return [
                record,
                self.flag(
                    "Stratagems",
                    row.line,
                    "rule_texts",
                    slug(name),
                    "not_a_stratagem",
                    f"Stratagems.csv row {wid} has type {printed_type!r}; loaded as a rule text",
                ),
            ]
        stratagem_id = self._wid(wid)
        printed = PrintedStratagem(locator, name, v.get("cp_cost", ""), printed_type,
                                   group=v.get("detachment", ""), legend=self.text_or_none(v.get("legend", "")),
                                   text=text)
        try:
            assembled = assemble_stratagem(printed, self.sid, stratagem_id, self.edition)
        except ValueError as e:
            raise _Rejected(str(e)) from None
        (record,) = assembled.records
        out: list[Record] = [self.flag("Stratagems", row.line, n.table, n.entity, n.code, n.detail)
                             for n in assembled.notes]
        self.claim(record)
        self.stratagem_ids[wid] = stratagem_id
        out += self.markup_flags("Stratagems", row.line, "stratagems", stratagem_id, text)
        return [record, *out]

    def enhancements(self, row: Row) -> list[Record]:
        v = row.values
        wid, name = clean_line(v["id"]), clean_line(self.html(v["name"]))
        if not wid or not name:
            raise _Rejected("enhancement row without id or name")
        cost_text = clean_line(v["cost"])
        m = re.fullmatch(r"(\+?)(\d+)", cost_text)
        if cost_text and not m:
            raise _Rejected(f"not a points cost: {cost_text!r}")
        enhancement_id = self._wid(wid)
        text = self.html(v["description"])
        record = Enhancement(
            source_id=self.sid,
            locator=self.locator("Enhancements", row.line),
            enhancement_id=enhancement_id,
            name=name,
            detachment=clean_line(v.get("detachment", "")) or None,
            is_default=None,
            cost_points=int(m.group(2)) if m else None,
            legend=self.text_or_none(v.get("legend", "")),
            text=text,
        )
        self.claim(record)
        self.enhancement_ids[wid] = enhancement_id
        out: list[Record] = [record]
        if m and m.group(1) == "+":
            out.append(
                self.flag(
                    "Enhancements",
                    row.line,
                    "enhancements",
                    enhancement_id,
                    "addon_cost",
                    f"cost printed as {cost_text!r}",
                )
            )
        out += self.markup_flags("Enhancements", row.line, "enhancements", enhancement_id, text)
        return out

    # ---- helpers ---------------------------------------------------------------------------

    def _wid(self, wid: str) -> str:
        """A Wahapedia id made unique across editions: ``10e/wahapedia/000009218006``."""
        return f"{self.prefix}/wahapedia/{wid}"

    def _faction(self, wid: str) -> str | None:
        wid = clean_line(wid)
        if not wid:
            return None
        return self.faction_slug.get(wid, wid)

    def markup_flags(
        self, table: str, line: int, record_table: str, entity: str | Record, text: str
    ) -> list[Record]:
        """A ``markup_left_in_text`` flag when cleaned text still holds tags (escaped HTML).
        ``entity``: the flag's entity key, or the record whose key it is (``entity_key``, made
        only for a flag)."""
        found = _MARKUP.search(text)
        if found is None:
            return []
        key = entity if isinstance(entity, str) else entity_key(entity)
        return [self.flag(table, line, record_table, key, "markup_left_in_text", found.group(0)[:80])]  # type: ignore[list-item]


# --------------------------------------------------------------------------------------------
# Pure helpers.
# --------------------------------------------------------------------------------------------

_KEYWORD_SPAN = re.compile(r"<span[^>]*class=\"[^\"]*\bkwbu?\b[^\"]*\"|<ky>", re.IGNORECASE)
_STRATAGEM_TYPE = re.compile(r"(?P<group>.+?)\s+[–—-]\s+(?P<type>.+\bStratagem)")
_MARKUP = re.compile(r"<\s*/?\s*[A-Za-z][^>]*>?")


def _keep(records: list[Record], flag: DataFlag | None) -> None:
    """Append a flag unless the collector counted it as a repeat (None)."""
    if flag is not None:
        records.append(flag)


def _strip_ability_box(fragment: str) -> str:
    """Drop the title and fluff paragraph of an Abilities.csv core-ability box (kept elsewhere)."""
    fragment = re.sub(r'<div class="abName">.*?</div>', "", fragment)
    return re.sub(r'<p[^>]*class="[^"]*ShowFluff[^"]*"[^>]*>.*?</p>', "", fragment)


def _composition_parts(html: str) -> tuple[str, str]:
    """A Datasheets_unit_composition line cut before its keyword spans: (model part, keywords).

    Keyword spans at the end of the line (``– <span class="kwb">EPIC</span> ...``) are the
    unit's keywords; the dash before them separates them from the model name.

    >>> _composition_parts('1 Captain – <span class="kwb">EPIC</span> <span class="kwb">HERO</span>')
    ('1 Captain – ', '<span class="kwb">EPIC</span> <span class="kwb">HERO</span>')
    >>> _composition_parts("5 Intercessors")
    ('5 Intercessors', '')
    """
    cut = _KEYWORD_SPAN.search(html)
    return (html[: cut.start()], html[cut.start() :]) if cut else (html, "")


#: The ``HTML_COLUMNS`` whose value the parser cleans in other pieces than the whole: the
#: fragments it cleans, in its order (listed for the worker in place of the value).
_HTML_CUTS: dict[tuple[str, str], Callable[[str], tuple[str, ...]]] = {
    ("Abilities", "description"): lambda value: (_strip_ability_box(value),),
    ("Datasheets_unit_composition", "description"): lambda value: (value, *_composition_parts(value)),
}


def _int(text: str, name: str) -> int:
    t = text.strip()
    if not t.isdigit():
        raise _Rejected(f"{name} is not a whole number: {t!r}")
    return int(t)


def _read(text: str, name: str) -> Table:
    """One table of the export, its columns renamed to this parser's names (``COLUMN_ALIASES``)."""
    table = read_table(text, name)
    aliases = COLUMN_ALIASES.get(name, {})
    return _rename_columns(table, aliases) if aliases else table


def html_fragments(tables: Mapping[str, Table]) -> list[str]:
    """The distinct HTML fragments of the ``HTML_COLUMNS``, in the order the parser reads them.

    Only values with markup (``<`` or an escaped ``&lt;``) are listed: plain text is cleaned
    without beautifulsoup4. A column of ``_HTML_CUTS`` gives the pieces the parser cleans.
    """
    return list(_each_html_fragment(tables.get))


def _each_html_fragment(table_of: Callable[[str], Table | None]) -> Iterator[str]:
    """``html_fragments``, one at a time, each table asked of ``table_of`` when its turn comes."""
    seen: set[str] = set()
    for name, columns in HTML_COLUMNS.items():
        table = table_of(name)
        cuts = [_HTML_CUTS.get((name, column)) for column in columns]
        for row in table.rows if table is not None else ():
            for column, cut in zip(columns, cuts):
                value = row.values.get(column, "")
                for fragment in (value,) if cut is None else cut(value):
                    if ("<" in fragment or "&lt;" in fragment) and fragment not in seen:
                        seen.add(fragment)
                        yield fragment


def _fragments_of_files(files: Mapping[str, str]) -> Iterator[str]:
    """``html_fragments`` from the texts, one at a time, each table read when its turn comes
    (what the worker runs: it reads its own copy, and cleans the first fragments while the
    later tables wait)."""
    return _each_html_fragment(lambda name: _read(files[name], name) if name in files else None)


def _start_shared_html(files: Mapping[str, str]) -> SharedHtmlCleaning | None:
    """A worker sharing the HTML cleaning of a large export, or None for a small one."""
    texts = [files[name] for name in HTML_COLUMNS if name in files]
    if sum(text.count("<") for text in texts) < SHARED_HTML_MIN_TAGS:
        return None
    # One fragment per row and column at most: a bound on the number of chunks.
    capacity = sum(text.count("\n") + 1 for text in texts) * max(map(len, HTML_COLUMNS.values()))
    return SharedHtmlCleaning.start(lambda: _fragments_of_files(files), capacity // 32 + 1)


def _table_of(name: str, records: Records) -> Table:
    """The ``Table`` of split records (``read_table``'s, without reading the text again)."""
    rows = [Row(line, dict(zip(records.columns, raw.split("|"))), raw) for line, raw in zip(records.lines, records.raws)]
    return Table(name=name, columns=records.columns, rows=rows, bad_rows=records.bad_rows)


def _rename_columns(table: Table, aliases: dict[str, str]) -> Table:
    if not any(c in aliases for c in table.columns):
        return table
    columns = tuple(aliases.get(c, c) for c in table.columns)
    rows = [
        Row(r.line, {aliases.get(k, k): val for k, val in r.values.items()}, r.raw)
        for r in table.rows
    ]
    return Table(name=table.name, columns=columns, rows=rows, bad_rows=table.bad_rows)


def _validation_reason(exc: ValidationError) -> str:
    err = exc.errors()[0]
    where = ".".join(str(x) for x in err["loc"])
    return f"invalid {where}: {err['msg']} (got {err.get('input')!r})"
