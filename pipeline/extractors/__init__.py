"""One pure extractor per source format, registered in ``EXTRACTORS`` (no discovery magic).

An extractor reads what its source prints and hands the printed values to the shared assembly
stage (``pipeline.assemble``), which builds the records. It is a function ``parse(text, source) -> ParseResult``: text in, records and rejects out,
no I/O, no globals, no database. ``source`` is the manifest's ``Source`` record, used only for
provenance (``source_id``) and the edition / game mode the source declares.
"""

from __future__ import annotations

import importlib
import json
from collections import Counter
from dataclasses import dataclass, field
from typing import Any, Callable, Mapping

from pipeline.limits import MAX_NESTING_DEPTH, MAX_NUMBER_DIGITS

from schemas.records import Record, Reject, RuleText, Source


@dataclass
class ParseResult:
    """What a parser returns.

    ``records``: validated records, each with ``source_id`` and ``locator``.
    ``rejects``: input that could not be read, with the raw text and reason.
    ``duplicates``: per table, repeated input items collapsed into one record.
    ``boilerplate``: per kind, page lines dropped as site boilerplate (not content).
    ``input_rows`` and ``loaded``: per input table, rows read and rows that gave records (for
    tabular sources, whose counters and ``Reject.table_name`` are then keyed by input table; the
    parser keeps input rows = loaded + duplicates + rejected). Empty for page-text sources,
    whose counters are keyed by record table.
    """

    records: list[Record] = field(default_factory=list)
    rejects: list[Reject] = field(default_factory=list)
    duplicates: Counter[str] = field(default_factory=Counter)
    boilerplate: Counter[str] = field(default_factory=Counter)
    input_rows: Counter[str] = field(default_factory=Counter)
    loaded: Counter[str] = field(default_factory=Counter)
    #: Rows of link tables kept as columns instead of records (``LinkColumns``): only from a
    #: parser of ``LINK_COLUMN_FORMATS`` called with ``link_columns=True``, as the build calls it.
    links: list["LinkColumns"] = field(default_factory=list)

    def extend(self, other: "ParseResult") -> None:
        self.records.extend(other.records)
        self.links.extend(other.links)
        self.rejects.extend(other.rejects)
        self.duplicates.update(other.duplicates)
        self.boilerplate.update(other.boilerplate)
        self.input_rows.update(other.input_rows)
        self.loaded.update(other.loaded)


Parser = Callable[[str, Source], ParseResult]


@dataclass
class LinkColumns:
    """The rows of one link table (a datasheet and a row of another table: ``DatasheetStratagem``,
    ``DatasheetEnhancement``, ``DatasheetDetachmentAbility``) as columns, one value per row in
    each list, instead of one record per row: the export's link tables hold some 96,000 rows,
    which the build merges and loads as columns. Every value is a ``str``, as the record's
    fields; ``record(i)`` is row ``i`` as its record (the same values, validated).

    >>> from schemas.records import DatasheetStratagem
    >>> links = LinkColumns(DatasheetStratagem, ["s"], ["line 2"], ["10e/sm/captain"], ["10e/wahapedia/1"])
    >>> links.table, links.target_field, len(links), links.record(0).stratagem_id
    ('datasheet_stratagems', 'stratagem_id', 1, '10e/wahapedia/1')
    """

    record_type: type[Record]
    source_ids: list[str]
    locators: list[str]
    datasheet_ids: list[str]
    targets: list[str]  #: the other key field of the record (``target_field``)

    @property
    def table(self) -> str:
        return self.record_type.__table__

    @property
    def target_field(self) -> str:
        return self.record_type.__key__[1]

    def __len__(self) -> int:
        return len(self.locators)

    def record(self, i: int) -> Record:
        return self.record_type(source_id=self.source_ids[i], locator=self.locators[i],
                                datasheet_id=self.datasheet_ids[i], **{self.target_field: self.targets[i]})

    def records(self) -> list[Record]:
        return [self.record(i) for i in range(len(self))]

    def columns(self) -> dict[str, list[str]]:
        """Field name -> the values of the rows (the record's fields)."""
        return {"source_id": self.source_ids, "locator": self.locators, "datasheet_id": self.datasheet_ids,
                self.target_field: self.targets}

    def moved(self, moved: Mapping[str, str]) -> "LinkColumns":
        """These rows with each datasheet id of ``moved`` replaced (``merge.unify_datasheet_ids``)."""
        if not moved or not any(d in moved for d in self.datasheet_ids):
            return self
        return LinkColumns(self.record_type, self.source_ids, self.locators,
                           [moved.get(d, d) for d in self.datasheet_ids], self.targets)


#: Formats whose parser takes ``link_columns=True``: it then gives its link tables' rows as
#: ``ParseResult.links`` (``LinkColumns``), not as records. The build asks for it.
LINK_COLUMN_FORMATS = frozenset({"wahapedia-csv"})
#: Formats whose parser takes ``rules_parsed=``: called with its records so far once every table
#: of rules is read, before the tables left (the build starts reading the wordings then).
RULES_PARSED_FORMATS = frozenset({"wahapedia-csv"})


def source_rule_text(
    source: Source, locator: str, rule_key: str, title: str, text: str, section: str | None = None
) -> RuleText:
    """A ``RuleText`` of a rules document: its edition, game mode and effective date are the
    source's (the manifest's ``edition``, ``game_mode`` and ``version_date``)."""
    return RuleText(
        source_id=source.source_id, locator=locator, rule_key=rule_key, title=title, section=section,
        edition=source.edition, game_mode=source.game_mode, effective_date=source.version_date,
        text=text,
    )


class TooDeep(ValueError):
    """A JSON or XML file nested deeper than ``pipeline.limits.MAX_NESTING_DEPTH``."""


def too_deep() -> TooDeep:
    return TooDeep(f"nested deeper than {MAX_NESTING_DEPTH} levels (the limit on the nesting depth of a file)")


def _bounded_int(digits: str) -> int:
    if len(digits.lstrip("-")) > MAX_NUMBER_DIGITS:
        raise ValueError(f"a number of {len(digits.lstrip('-'))} digits: at most {MAX_NUMBER_DIGITS} digits")
    return int(digits)


def load_json(text: str) -> Any:
    """``json.loads`` within the limits of ``pipeline.limits``: containers nested at most
    ``MAX_NESTING_DEPTH`` deep, integers of at most ``MAX_NUMBER_DIGITS`` digits.

    Raises ``json.JSONDecodeError`` for text that is not JSON and ``ValueError`` (``TooDeep``
    for the nesting) saying the limit and the value.

    >>> load_json('{"a": [1, 2]}')
    {'a': [1, 2]}
    >>> load_json("[" * 300 + "]" * 300)
    Traceback (most recent call last):
    ...
    pipeline.extractors.TooDeep: nested deeper than 256 levels (the limit on the nesting depth of a file)
    """
    try:
        data = json.loads(text, parse_int=_bounded_int)
    except RecursionError:
        raise too_deep() from None
    level: list[Any] = [data]
    for _ in range(MAX_NESTING_DEPTH):  # breadth first, one level of containers at a time
        level = [child for node in level if isinstance(node, (dict, list))
                 for child in (node.values() if isinstance(node, dict) else node)
                 if isinstance(child, (dict, list))]
        if not level:
            return data
    raise too_deep()


def xml_reason(message: str) -> str:
    """lxml's message for a file it refused, said in the project's terms (libxml2 names an option
    to lift its depth limit, which the project keeps: ``MAX_NESTING_DEPTH``).

    >>> xml_reason("Excessive depth in document: 256, use XML_PARSE_HUGE option, line 1, column 2")
    'nested deeper than 256 levels (the limit on the nesting depth of a file), line 1, column 2'
    """
    if message.startswith("Excessive depth in document"):
        where = message.split("option", 1)[1] if "option" in message else ""
        return str(too_deep()) + where
    return message


#: Every source format (a manifest entry's ``format``) and the parser that reads it, as (module
#: under ``pipeline.extractors``, function). A parser's module is imported when it is first asked for,
#: so reading the manifest (``wh40k fetch`` does) does not import every parser.
EXTRACTORS: dict[str, tuple[str, str]] = {
    "wahapedia-text-10e": ("wahapedia_text_10e", "parse"),
    "wahapedia-rules-11e": ("wahapedia_rules_11e", "parse"),
    "battlescribe-rule-descriptions": ("battlescribe_rules", "parse"),
    "bsdata-gst-xml": ("bsdata_gamesystem", "parse_gst_xml"),
    "bsdata-gst-json": ("bsdata_gamesystem", "parse_gst_json"),
    "bsdata-cat-xml": ("bsdata_catalogue", "parse_cat_xml"),
    "bsdata-cat-json": ("bsdata_catalogue", "parse_cat_json"),
    "bsdata-cat-set-xml": ("bsdata_catalogue", "parse_cat_set_xml"),
    "bsdata-cat-set-json": ("bsdata_json", "parse_cat_set_json"),
    "wahapedia-html": ("wahapedia_html", "parse"),
    "wahapedia-csv": ("wahapedia_csv", "parse_export"),
    "gdc-core-rules": ("gdc_rules", "parse_core"),
    "gdc-faqs": ("gdc_rules", "parse_faqs"),
    "gdc-json": ("gdc_json", "parse_file"),
    "gdc-json-folder": ("gdc_json", "parse_folder"),
}


#: Formats read from a folder source, and the file name endings of the files the build reads from
#: the folder (others in it are not read). A ``.csv`` table is handed over under its table name
#: (``Datasheets``), any other file under its file name (``Tyranids.cat``).
FOLDER_FILES: dict[str, tuple[str, ...]] = {
    "wahapedia-csv": (".csv",),
    "bsdata-cat-set-xml": (".cat", ".gst"),
    "gdc-json-folder": (".json",),
    "bsdata-cat-set-json": (".json",),
}


#: Formats whose parser can start work ahead of the parse, as (module, function) of a
#: ``prepare(content, source)``: it returns what the parser then takes as ``prepared=`` (for the
#: Wahapedia export, the worker process that shares its HTML clean-up), or None. A build
#: prepares every source first, so that such work runs while it does its own.
PREPARERS: dict[str, tuple[str, str]] = {
    "wahapedia-csv": ("wahapedia_csv", "prepare_export"),
}


def get_preparer(fmt: str) -> Callable[[object, Source], object] | None:
    """The ``prepare`` function registered in ``PREPARERS`` for a format, or None."""
    if fmt not in PREPARERS:
        return None
    module, function = PREPARERS[fmt]
    return getattr(importlib.import_module(f"pipeline.extractors.{module}"), function)


def get_extractor(fmt: str) -> Parser:
    """The parser registered in ``EXTRACTORS`` for a format name.

    Raises ``KeyError`` naming the known formats (the manifest rejects an unknown format before
    a build gets here, so reaching it is a bug).
    """
    if fmt not in EXTRACTORS:
        raise KeyError(f"no parser for format {fmt!r}; known formats: {', '.join(sorted(EXTRACTORS))}")
    module, function = EXTRACTORS[fmt]
    return getattr(importlib.import_module(f"pipeline.extractors.{module}"), function)
