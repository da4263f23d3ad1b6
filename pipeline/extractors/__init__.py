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
from typing import Any, Callable

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

    def extend(self, other: "ParseResult") -> None:
        self.records.extend(other.records)
        self.rejects.extend(other.rejects)
        self.duplicates.update(other.duplicates)
        self.boilerplate.update(other.boilerplate)
        self.input_rows.update(other.input_rows)
        self.loaded.update(other.loaded)


Parser = Callable[[str, Source], ParseResult]


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
