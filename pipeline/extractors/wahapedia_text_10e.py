"""Wahapedia 10th-edition page text (a Combat Patrol page saved as text): extracts what it prints.

What it hands to the assembly (``pipeline.assemble``): each datasheet header (``PrintedDatasheet``,
with the model count it prints: ``CANONESS ADALYA (1 MODEL)``), each weapon row
(``PrintedWeapon``), each ability line (``PrintedAbility``: ``CORE: Deadly Demise D3`` as printed),
the loadout lines and the keywords. The page prints no model characteristics and no unit
composition. Stratagem cards, enhancements, secondary objectives and rule sections it builds itself.

Input: the text of a Wahapedia 10th-edition Combat Patrol page as a browser saves it (one
paragraph per line; table cells separated by ``|``). Output: ``Faction``, ``Datasheet``,
``WargearLoadout``, ``WeaponProfile``, ``WeaponAbility``, ``Ability``, ``Keyword``,
``Stratagem``, ``DatasheetStratagem``, ``Enhancement``, ``SecondaryObjective``, ``RuleText``,
``DataGap`` and ``DataFlag`` records, and a ``Reject`` per line that fits nowhere.

The page, top to bottom (each part found by its heading, ``_PAGE_HEADINGS``):

- the page title, then ``Books`` and the publication table (``publication_table``): checked
  against the manifest's edition and version, a ``DataFlag`` when they disagree;
- the datasheet headers ``CANONESS ADALYA (1 MODEL)``, each with its tactical text (printed
  twice) and its ``- ... is equipped with: a; b.`` loadout lines;
- ``Abilities``: the faction rule (``Acts of Faith``);
- ``Enhancements`` and ``Secondary Objectives``: a default and an optional choice each;
- ``Stratagems``: the Combat Patrol's Stratagem cards;
- ``Datasheets``: one block per datasheet (weapon tables, ``ABILITIES``, ``KEYWORDS``,
  ``FACTION KEYWORDS:``, ``STRATAGEMS``, ``LED BY``), each starting at a ``RANGED WEAPONS`` or
  ``MELEE WEAPONS`` line. A block is matched to its header by the datasheet's name among its
  keywords (the page does not print the blocks in the order of the headers);
- core rule sections and Stratagem cards, interleaved, to the end of the page.

What the scrape broke, and what the parser does about it:

- Paragraph breaks and titles glued to the previous line (``...wound the target.Torrent``):
  every line is split into segments (``split_glued``) before anything else reads it.
- Every table row, ``TARGET:`` / ``EFFECT:`` line, tactical text and faction keyword printed
  twice; Stratagem cards and rule sections repeated further down: collapsed, and each repeated
  segment counted in ``result.duplicates`` under the table of the record it repeats.
- Characteristics tables, the wound table and the names in leader links were lost: a
  ``DataGap`` each, never a made-up value.
- U+2011 hyphens: every segment goes through ``clean_line`` (plain hyphens, folded spaces).

Accounting: every non-blank segment of the page is used by a record, counted as a duplicate
(``result.duplicates``, per table, in segments), counted as boilerplate (``result.boilerplate``,
per kind, in segments) or rejected; ``dispositions`` lists what happened to each one.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import NamedTuple

from pipeline.assemble.abilities import assemble_ability
from pipeline.assemble.collector import Collector, Outcome, entity_key
from pipeline.assemble.datasheets import assemble_datasheet
from pipeline.assemble.ids import scoped_datasheet_id
from pipeline.assemble.keywords import read_keyword
from pipeline.assemble.loadouts import assemble_loadout
from pipeline.assemble.printed import PrintedAbility, PrintedDatasheet, PrintedStratagem, PrintedWeapon
from pipeline.assemble.stratagems import assemble_stratagem
from pipeline.assemble.weapons import assemble_weapon, split_weapon_name
from pipeline.errors import NormaliseError
from pipeline.limits import MAX_NUMBER_DIGITS
from pipeline.normalise.characteristics import WEAPON_COLUMNS, WEAPON_TABLES
from pipeline.normalise.text import clean_line, slug
from pipeline.extractors import ParseResult, source_rule_text
from schemas.records import (
    DatasheetStratagem,
    DataFlag,
    DataGap,
    Enhancement,
    Faction,
    Keyword,
    Record,
    Reject,
    SecondaryObjective,
    Source,
    WargearLoadout,
    WeaponProfile,
)

# --------------------------------------------------------------------------------------------
# Labels of the page, as data
# --------------------------------------------------------------------------------------------

#: Top-level headings of the page, in page order, and the table a stray line under each goes to.
_PAGE_HEADINGS: dict[str, str] = {
    "Books": "sources",
    "Abilities": "rule_texts",
    "Enhancements": "enhancements",
    "Secondary Objectives": "secondary_objectives",
    "Stratagems": "stratagems",
    "Datasheets": "datasheets",
}

#: Columns of the publication table -> keys of ``publication_table``.
_PUBLICATION_COLUMNS: dict[str, str] = {
    "Book": "book",
    "Kind": "kind",
    "Edition": "edition",
    "Version": "version",
    "Last update": "last_update",
}

#: Headings inside a datasheet block -> (state, rank). A heading is accepted only after the
#: headings of lower rank; ``KEYWORDS:`` (rank 4) carries its values on the same line.
_BLOCK_HEADINGS: dict[str, tuple[str, int]] = {
    "ABILITIES": ("abilities", 1),
    "WARGEAR ABILITIES": ("wargear", 2),
    "LEADER": ("leader", 3),
    "FACTION KEYWORDS:": ("faction-keywords", 5),
    "STRATAGEMS": ("stratagems", 6),
    "LED BY": ("led-by", 7),
}
_KEYWORDS_RANK = 4

#: ``CORE: Leader`` / ``FACTION: Acts of Faith`` prefixes -> ability kind.
_ABILITY_PREFIXES: dict[str, str] = {"CORE": "core", "FACTION": "faction"}

#: Leader-link sentences whose names the scrape lost -> (field of the DataGap, what was lost).
_LEADER_SENTENCES: dict[str, tuple[str, str]] = {
    "leader": ("bodyguard units", "the units this Leader can be attached to"),
    "led-by": ("leader units", "the Leader that can lead this unit"),
}

#: Labelled lines of a Stratagem card -> Stratagem field.
_STRATAGEM_LABELS: dict[str, str] = {
    "WHEN": "when",
    "TARGET": "target",
    "EFFECT": "effect",
    "RESTRICTIONS": "restrictions",
}

#: Lines of a datasheet's Stratagem list that are not content -> boilerplate kind.
_STRATAGEM_LIST_BOILERPLATE: dict[str, str] = {"C": "core stratagem icon letter"}

#: Markers before an enhancement or secondary objective -> is_default.
_CHOICE_MARKERS: dict[str, dict[str, bool]] = {
    "enhancements": {"DEFAULT ENHANCEMENT": True, "OPTIONAL ENHANCEMENT": False},
    "secondary_objectives": {
        "DEFAULT SECONDARY OBJECTIVE": True,
        "OPTIONAL SECONDARY OBJECTIVE": False,
    },
}
_CHOICE_SEPARATOR = "OR"

#: The introduction of each choice part, naming the default and the optional choice.
_CHOICE_INTROS: dict[str, re.Pattern[str]] = {
    "enhancements": re.compile(
        r"has the (?P<default>.+?) Enhancement\. You can replace this with (?P<optional>.+?)\.$"
    ),
    "secondary_objectives": re.compile(
        r"use the (?P<default>.+?) secondary objective\. You can replace this with"
        r" (?P<optional>.+?)\.$"
    ),
}

#: Sub-headings that stay inside a rule section -> rule key of that section.
_SUBHEADINGS: dict[str, str] = {
    "Gaining Miracle Dice": "acts-of-faith",
    "Performing an Act of Faith": "acts-of-faith",
}

#: Paragraphs whose section title the scrape lost -> reason of their reject.
_UNTITLED_PARAGRAPHS: dict[str, str] = {
    "Before selecting targets for this weapon, select one of its profiles to make attacks with.": (
        "paragraph whose section title the page scrape lost (it is about weapons with several"
        " profiles, not about the section printed above it)"
    ),
}

#: Tables lost inside a rule section (a row of empty cells) -> field of the DataGap.
_LOST_TABLE_FIELDS: dict[str, str] = {"wound-roll": "wound table"}

#: Wording of earlier editions found in rule text -> flagged ``older_edition_wording``.
_OLDER_EDITION_MARKERS: tuple[str, ...] = (
    "Look out, Sir",
    "Warlord Trait",
    "Heroic Interventions in Charge Phase",
)

#: Source kind -> prefix of the scope of the ids this page gets (``cp-sanctuary-guardians``).
_SCOPE_PREFIXES: dict[str, str] = {"combat-patrol": "cp", "index": "index", "codex": "codex"}

#: Lower-case words in names written in title case.
_SMALL_WORDS = frozenset({"a", "an", "and", "of", "the", "in", "on", "to", "for"})

#: Loadout subjects that state a model count in words.

_GLUE = re.compile(r"(?<=[.!?:])(?=[A-Z]|-\s)")
_CP = re.compile(rf"^(?P<cp>\d{{1,{MAX_NUMBER_DIGITS}}})\s*CP$")
_CATEGORY = re.compile(r"^(?P<group>.+?)\s+[–—-]\s+(?P<type>.+?)(?:\s+Stratagem)?$")
_LABELLED = re.compile(r"^(?P<label>[A-Z]+):\s*(?P<text>.*)$")
_HEADER = re.compile(rf"^(?P<name>.+?)\s+\((?P<count>\d{{1,{MAX_NUMBER_DIGITS}}})\s+MODELS?\)$")
_PREFIXED_ABILITY = re.compile(r"^(?P<prefix>[A-Z]+):\s*(?P<name>.+)$")
_NAMED_ABILITY = re.compile(r"^(?P<name>[^:]{1,60}?):\s+(?P<text>.+)$")
_KEYWORD_INDEX = re.compile(r"^The .+ keywords? (?:is|are) used in the following .+ datasheets:$")
_STEP_NUMBER = re.compile(r"^\d+\.\s*")
_TEMPLATE_TEXT = re.compile(r"%\d+[^%]*%")
_BRACKETS = re.compile(r"^(?P<name>[^\[]+?)\s*\[(?P<abilities>[^\]]*)\]$")


# --------------------------------------------------------------------------------------------
# Pure helpers
# --------------------------------------------------------------------------------------------


def split_glued(line: str) -> list[str]:
    """Split a page line where the scrape glued a paragraph, bullet or title to the one before.

    A split falls after ``.``, ``!``, ``?`` or ``:`` followed directly (no space) by a capital
    letter or by ``- ``. Table rows (starting with ``|``) are never split. Pieces keep their
    raw characters; blank pieces are dropped.

    >>> split_glued("a Critical Hit automatically wounds the target.Torrent")
    ['a Critical Hit automatically wounds the target.', 'Torrent']
    >>> split_glued("You can use the following Stratagems:ASCETIC DISCIPLINE")
    ['You can use the following Stratagems:', 'ASCETIC DISCIPLINE']
    >>> split_glued("enemy models.- Normal Move: Models move up to M\\".")
    ['enemy models.', '- Normal Move: Models move up to M".']
    >>> split_glued("e.g. a Charge roll")
    ['e.g. a Charge roll']
    """
    if line.lstrip().startswith("|"):
        return [line] if line.strip() else []
    return [piece for piece in _GLUE.split(line) if piece.strip()]


def title_case_name(printed: str) -> str:
    """A datasheet name as a player writes it: ``ARCO‑FLAGELLANTS`` -> ``Arco-flagellants``.

    Each word gets a capital first letter (the rest lower case, also after a hyphen); small
    words after the first (``of``, ``the``) stay lower case.

    >>> title_case_name("ARCO\u2011FLAGELLANTS"), title_case_name("BATTLE SISTERS SQUAD")
    ('Arco-flagellants', 'Battle Sisters Squad')
    >>> title_case_name("DEFENDER OF THE FAITH")
    'Defender of the Faith'
    """
    words = clean_line(printed).lower().split(" ")
    return " ".join(
        w if n and w in _SMALL_WORDS else w[:1].upper() + w[1:] for n, w in enumerate(words)
    )


def looks_like_title(text: str) -> bool:
    """True for a short name-like segment that can title a rule section.

    At most six words, starting with a capital letter or a step number (``2. Battle-shock``),
    not ending in punctuation, not a bullet or a table row.

    >>> looks_like_title("Lethal Hits"), looks_like_title("2. Battle-shock")
    (True, True)
    >>> looks_like_title("You gain 1 Miracle dice:"), looks_like_title("- Advance roll")
    (False, False)
    """
    if not text or text.startswith(("-", "|")) or text[-1] in ".:;,!?)’”\"":
        return False
    return len(text.split()) <= 6 and (text[0].isupper() or text[0].isdigit())


def rule_key(title: str) -> str:
    """The rule key of a section title: its slug, without a step number.

    >>> rule_key("Lethal Hits"), rule_key("2. Battle-shock"), rule_key("FEEL NO PAIN")
    ('lethal-hits', 'battle-shock', 'feel-no-pain')
    """
    return slug(_STEP_NUMBER.sub("", title))


def table_cells(row: str) -> list[str]:
    """The cells of a ``|`` table row, cleaned, without the trailing empty cells.

    >>> table_cells('| Boltgun [rapid fire 1] | 24" | 1 | 3+ | 4 | 0 | 1 | |')
    ['Boltgun [rapid fire 1]', '24"', '1', '3+', '4', '0', '1']
    >>> table_cells("| Boltgun [rapid fire 1] | |||||||")
    ['Boltgun [rapid fire 1]']
    >>> table_cells("| ||||||||||||||")
    []
    """
    cells = [clean_line(cell) for cell in row.strip().strip("|").split("|")]
    while cells and not cells[-1]:
        cells.pop()
    return cells


def publication_table(text: str) -> dict[str, str | int | None]:
    """The values of the publication table at the top of the page.

    Returns ``{"book", "kind", "edition", "version", "last_update"}``: ``edition`` an int,
    empty cells None. Raises ``NormaliseError`` when the page has no publication table, a
    column label is unknown or the edition is not a number.

    >>> publication_table("Books\\n| Book | Kind | Edition | Version | Last update |\\n"
    ...                   " X | ||||\\n| X | Index | 10 | June 2024 | |")
    {'book': 'X', 'kind': 'Index', 'edition': 10, 'version': 'June 2024', 'last_update': None}
    """
    table = _read_publication(_segments(text))
    if table is None:
        raise NormaliseError("no publication table (| Book | Kind | Edition | ... |) on the page")
    return table.values


# --------------------------------------------------------------------------------------------
# Segments and their accounting
# --------------------------------------------------------------------------------------------


class _Seg(NamedTuple):
    line: int  # 1-based line of the page
    text: str  # cleaned
    raw: str  # as printed


def _segments(text: str) -> list[_Seg]:
    segs: list[_Seg] = []
    for number, line in enumerate(text.split("\n"), start=1):
        for piece in split_glued(line.rstrip("\r")):
            segs.append(_Seg(number, clean_line(piece), piece.strip()))
    return segs


class _Page:
    """The segments of a page, what happened to each one, and the records made so far."""

    def __init__(self, text: str, source: Source) -> None:
        self.source = source
        self.segs = _segments(text)
        self.fate: list[str | None] = [None] * len(self.segs)
        self.stray_table: list[str] = ["sources"] * len(self.segs)
        self.collector = Collector(source.source_id)  # the shared rules; its records are the page's
        self.result = ParseResult(records=self.collector.records, rejects=self.collector.rejects,
                                  duplicates=self.collector.duplicates)
        self.scope = ""

    def text(self, i: int) -> str:
        return self.segs[i].text if 0 <= i < len(self.segs) else ""

    def loc(self, i: int) -> str:
        return f"line {self.segs[i].line}"

    def _mark(self, i: int, fate: str) -> None:
        if self.fate[i] is not None and not (self.fate[i] == fate == "used"):
            raise RuntimeError(f"bug: {self.loc(i)} placed twice ({self.fate[i]}, then {fate})")
        self.fate[i] = fate

    def use(self, *indexes: int) -> None:
        for i in indexes:
            self._mark(i, "used")

    def dup(self, table: str, *indexes: int) -> None:
        for i in indexes:
            self._mark(i, f"duplicate {table}")
            self.result.duplicates[table] += 1

    def boiler(self, kind: str, *indexes: int) -> None:
        for i in indexes:
            self._mark(i, f"boilerplate {kind}")
            self.result.boilerplate[kind] += 1

    def reject(self, i: int, table: str, reason: str) -> None:
        self._mark(i, f"reject {table}")
        self.result.rejects.append(
            Reject(
                source_id=self.source.source_id,
                locator=self.loc(i),
                table_name=table,
                raw_text=self.segs[i].raw,
                reason=reason,
            )
        )

    def add(self, record: Record) -> None:
        self.collector.add(record)

    def keep(self, record: Record, *indexes: int) -> bool:
        """Add ``record`` under the shared rules (``Collector.claim``): a new key is kept and
        its segments used; the same values again -> the segments are counted duplicates; other
        values -> they are rejected with the shared reason. True when added."""
        outcome, earlier = self.collector.claim(record)
        if outcome is Outcome.NEW:
            self.collector.records.append(record)
            self.use(*indexes)
            return True
        if outcome is Outcome.DUPLICATE:
            self.dup(record.__table__, *indexes)
        else:
            assert earlier is not None
            for i in indexes:
                self.reject(i, record.__table__, self.collector.conflict_reason(earlier, record))
        return False

    def flag(self, i: int, table: str, entity: str, code: str, detail: str) -> None:
        self.collector.flag(table, entity, code, detail, self.loc(i))

    def gap(self, i: int, table: str, entity: str, name: str, reason: str) -> None:
        self.collector.gap(table, entity, name, reason, self.loc(i))

    def sweep(self) -> None:
        """Reject every segment no block placed (a bug in the page layout, never dropped)."""
        for i, fate in enumerate(self.fate):
            if fate is None:
                self.reject(i, self.stray_table[i],
                            "line not placed by any part of the page parser")


# --------------------------------------------------------------------------------------------
# Page layout
# --------------------------------------------------------------------------------------------


def parse(text: str, source: Source) -> ParseResult:
    """Parse the page text of a Wahapedia 10th-edition Combat Patrol page.

    ``source`` gives the provenance (``source_id``), the edition, the game mode and the
    effective date of the rule texts. Returns records and rejects; nothing is raised for bad
    input (an unreadable line is a ``Reject`` with its reason).
    """
    return _run(text, source).result


def dispositions(text: str, source: Source) -> list[tuple[str, str, str]]:
    """What happened to each segment of the page: ``(locator, segment text, fate)``.

    ``fate`` is ``used``, ``duplicate <table>``, ``boilerplate <kind>`` or ``reject <table>``.
    """
    page = _run(text, source)
    return [(page.loc(i), seg.text, page.fate[i] or "") for i, seg in enumerate(page.segs)]


def _run(text: str, source: Source) -> _Page:
    page = _Page(text, source)
    parts = _find_parts(page)
    book = _parse_front(page, *parts["front"], *parts["Books"])
    page.scope = _scope(source, book)
    headers = _parse_headers(page, *parts["headers"])
    rules = _RuleBook()
    stratagems = _StratagemBook()
    _parse_faction_rules(page, *parts["Abilities"], rules)
    _parse_choices(page, *parts["Enhancements"], "enhancements", book)
    _parse_choices(page, *parts["Secondary Objectives"], "secondary_objectives", book)
    _parse_stratagem_part(page, *parts["Stratagems"], stratagems)
    start, end = parts["Datasheets"]
    blocks, rules_start = _read_blocks(page, start, end)
    _parse_rule_sections(page, rules_start, end, rules, stratagems)
    _emit_datasheets(page, headers, blocks, stratagems)  # first: it collects the listed Stratagems
    _emit_stratagems(page, stratagems)
    _emit_rules(page, rules)
    page.sweep()
    return page


def _find_parts(page: _Page) -> dict[str, tuple[int, int]]:
    """Segment ranges ``[start, end)`` of each part, found by the headings in page order.

    A missing heading gives an empty part. ``front`` is what precedes the first heading;
    ``Books`` holds the publication rows and ``headers`` the datasheet headers after them.
    """
    found: list[tuple[str, int]] = []
    i = 0
    for heading in _PAGE_HEADINGS:
        for j in range(i, len(page.segs)):
            if page.text(j) == heading:
                found.append((heading, j))
                page.use(j)
                i = j + 1
                break
    parts = {heading: (len(page.segs), len(page.segs)) for heading in _PAGE_HEADINGS}
    first = found[0][1] if found else 0
    parts["front"] = (0, first)
    for n, (heading, j) in enumerate(found):
        end = found[n + 1][1] if n + 1 < len(found) else len(page.segs)
        parts[heading] = (j + 1, end)
        for k in range(j + 1, end):
            page.stray_table[k] = _PAGE_HEADINGS[heading]
    books_start, books_end = parts["Books"]
    rows_end = books_start
    while rows_end < books_end and "|" in page.text(rows_end):
        rows_end += 1
    parts["Books"] = (books_start, rows_end)
    parts["headers"] = (rows_end, books_end)
    for k in range(rows_end, books_end):
        page.stray_table[k] = "datasheets"
    return parts


def _scope(source: Source, book: str | None) -> str:
    """The prefix of this page's ids: ``cp-sanctuary-guardians`` for a Combat Patrol."""
    prefix = _SCOPE_PREFIXES.get(source.kind, slug(source.kind))
    return f"{prefix}-{slug(book)}" if book else slug(source.source_id)


# --------------------------------------------------------------------------------------------
# Front: page title and publication table
# --------------------------------------------------------------------------------------------


@dataclass
class _Publication:
    header: int
    name_only_rows: list[int]
    row: int
    values: dict[str, str | int | None]


def _read_publication(segs: list[_Seg], start: int = 0) -> _Publication | None:
    """The publication table: its header row, rows that kept only the book name, the full row."""
    header = next((i for i in range(start, len(segs)) if segs[i].text.startswith("| Book |")), None)
    if header is None:
        return None
    labels = table_cells(segs[header].text)
    unknown = [label for label in labels if label not in _PUBLICATION_COLUMNS]
    if unknown:
        raise NormaliseError(f"{unknown} in the publication table (line {segs[header].line}) is"
                             f" not a known column; known: {', '.join(_PUBLICATION_COLUMNS)}")
    name_only: list[int] = []
    for i in range(header + 1, len(segs)):
        cells = table_cells(segs[i].text)
        if "|" not in segs[i].text:
            break
        if len(cells) <= 1:
            name_only.append(i)
            continue
        cells += [""] * (len(labels) - len(cells))
        values: dict[str, str | int | None] = {
            _PUBLICATION_COLUMNS[label]: (cell or None) for label, cell in zip(labels, cells)
        }
        edition = values.get("edition")
        if edition is not None:
            if not str(edition).isdigit() or len(str(edition)) > MAX_NUMBER_DIGITS:
                raise NormaliseError(f"edition {edition!r} in the publication table (line"
                                     f" {segs[i].line}) is not a number")
            values["edition"] = int(str(edition))
        return _Publication(header, name_only, i, values)
    return None


def _parse_front(page: _Page, front_start: int, front_end: int, rows_start: int,
                 rows_end: int) -> str | None:
    """Read the page title and the publication table; return the book name.

    The table's edition and version are compared with the manifest's: a ``DataFlag``
    ``publication_table_differs`` on ``sources`` when they disagree.
    """
    title = page.text(front_start) if front_end > front_start else None
    if title is not None:
        page.use(front_start)
    for i in range(front_start + 1, front_end):
        page.reject(i, "sources", "text before the publication table")
    try:
        table = _read_publication(page.segs[:rows_end], rows_start)
    except NormaliseError as exc:
        for i in range(rows_start, rows_end):
            page.reject(i, "sources", str(exc))
        return title
    if table is None:
        return title
    page.use(table.header, table.row)
    page.dup("sources", *table.name_only_rows)
    source = page.source
    checks = {"edition": source.edition, "version": source.version}
    for key, manifest_value in checks.items():
        printed = table.values.get(key)
        if printed is not None and printed != manifest_value:
            page.flag(table.row, "sources", source.source_id, "publication_table_differs",
                      f"{key}: the page prints {printed!r}, the manifest says {manifest_value!r}")
    book = table.values.get("book")
    if title is not None and book is not None and slug(title) != slug(str(book)):
        page.flag(front_start, "sources", source.source_id, "page_title_differs",
                  f"the page title {title!r} is not the book {book!r} of the publication table")
    return str(book) if book else title


# --------------------------------------------------------------------------------------------
# Datasheet headers: name, starting strength, tactical text, loadouts
# --------------------------------------------------------------------------------------------


@dataclass
class _Header:
    index: int
    printed: str
    name: str
    datasheet_id: str
    model_count: str
    legend: str | None = None
    loadouts: list[WargearLoadout] = field(default_factory=list)


def _parse_headers(page: _Page, start: int, end: int) -> list[_Header]:
    """Read ``NAME (N MODELS)`` headers, each with its legend and its loadout lines.

    The legend is printed before and after the loadouts: the second printing is a duplicate.
    A line that repeats the page title (the Combat Patrol heading) is boilerplate.
    """
    headers: list[_Header] = []
    for i in range(start, end):
        text = page.text(i)
        header = _HEADER.match(text)
        if header:
            name = title_case_name(header["name"])
            headers.append(_Header(i, header["name"], name, scoped_datasheet_id(page.scope, name),
                                   header["count"]))
            page.use(i)
        elif not headers:
            if page.segs[0].text == text and i != 0:
                page.boiler("repeated page title", i)
            else:
                page.reject(i, "datasheets", "text before the first datasheet header")
        elif text.startswith("- "):
            _parse_loadout(page, i, headers[-1])
        elif headers[-1].legend is None:
            headers[-1].legend = text
            page.use(i)
        elif headers[-1].legend == text:
            page.dup("datasheets", i)
        else:
            page.reject(i, "datasheets", "a second, different tactical text under one datasheet"
                        " header")
    return headers


def _parse_loadout(page: _Page, i: int, header: _Header) -> None:
    """``- 6 Battle Sisters are equipped with: a; b.`` -> a ``WargearLoadout``."""
    loadout = (assemble_loadout(page.text(i), source_id=page.source.source_id, locator=page.loc(i),
                                datasheet_id=header.datasheet_id, line=len(header.loadouts) + 1,
                                printed=page.text(i)[2:])
               if page.text(i).startswith("- ") else None)
    if loadout is None:
        page.reject(i, "wargear_loadouts", "bullet line is not '- <models> is/are equipped with:"
                    " <equipment>.'")
        return
    header.loadouts.append(loadout)
    page.use(i)


# --------------------------------------------------------------------------------------------
# Rule sections (faction rule and core rules) and Stratagem cards
# --------------------------------------------------------------------------------------------


@dataclass
class _RuleDraft:
    key: str
    title: str
    title_segs: list[int]
    lines: list[str] = field(default_factory=list)
    lost_tables: list[int] = field(default_factory=list)


class _RuleBook:
    """Rule sections by rule key, in page order; a repeated section reopens the first one."""

    def __init__(self) -> None:
        self.drafts: dict[str, _RuleDraft] = {}

    def open(self, title: str, i: int) -> _RuleDraft:
        key = rule_key(title)
        draft = self.drafts.get(key)
        if draft is None:
            draft = self.drafts[key] = _RuleDraft(key, title, [])
        draft.title_segs.append(i)
        return draft


def _parse_faction_rules(page: _Page, start: int, end: int, rules: _RuleBook) -> None:
    """The ``Abilities`` part: an introduction (boilerplate), then the faction rule sections."""
    i = start
    while i < end and not looks_like_title(page.text(i)):
        page.boiler("section introduction", i)
        i += 1
    _parse_rule_sections(page, i, end, rules, None)


def _parse_rule_sections(page: _Page, start: int, end: int, rules: _RuleBook,
                         stratagems: _StratagemBook | None) -> None:
    """Rule sections (title, then paragraphs and bullets) and Stratagem cards, interleaved.

    A title-like segment opens a section (``looks_like_title``), except a known sub-heading of
    the open section (``_SUBHEADINGS``) and the same title printed again right after itself
    (``Feel No Pain`` / ``FEEL NO PAIN``, a duplicate). A segment followed by ``<N>CP`` starts a
    Stratagem card. A repeated section is merged into the first: its known lines are
    duplicates, new lines are appended.
    """
    current: _RuleDraft | None = None
    i = start
    while i < end:
        text = page.text(i)
        if stratagems is not None and _is_stratagem_start(page, i, end):
            i = _parse_stratagem_card(page, i, end, stratagems)
            current = None
            continue
        if _KEYWORD_INDEX.match(text):
            page.boiler("keyword index (datasheet links lost)", i)
        elif text in _UNTITLED_PARAGRAPHS:
            page.reject(i, "rule_texts", _UNTITLED_PARAGRAPHS[text])
        elif current is not None and _SUBHEADINGS.get(text) == current.key:
            _add_rule_line(page, current, i)
        elif looks_like_title(text):
            if current is not None and rule_key(text) == current.key and not current.lines:
                page.dup("rule_texts", i)
            else:
                current = rules.open(text, i)
        elif current is None:
            page.reject(i, "rule_texts", "text before any section title")
        elif text.startswith("|") and not table_cells(text):
            current.lost_tables.append(i)
            page.use(i)
        else:
            _add_rule_line(page, current, i)
        i += 1


def _add_rule_line(page: _Page, draft: _RuleDraft, i: int) -> None:
    if page.text(i) in draft.lines:
        page.dup("rule_texts", i)
    else:
        draft.lines.append(page.text(i))
        page.use(i)


def _emit_rules(page: _Page, rules: _RuleBook) -> None:
    """One ``RuleText`` per section, with flags for template text and older-edition wording."""
    source = page.source
    for draft in rules.drafts.values():
        first, *repeats = draft.title_segs
        if not draft.lines:
            for i in draft.title_segs:
                page.reject(i, "rule_texts", "section title with no text under it")
            continue
        page.use(first)
        page.dup("rule_texts", *repeats)
        text = "\n".join(draft.lines)
        page.add(source_rule_text(source, page.loc(first), draft.key, draft.title, text))
        for i in draft.lost_tables:
            page.gap(i, "rule_texts", draft.key, _LOST_TABLE_FIELDS.get(draft.key, "table"),
                     f"page scrape lost the table (printed as {page.text(i)!r})")
        for marker in _TEMPLATE_TEXT.findall(text):
            page.flag(first, "rule_texts", draft.key, "template_text",
                      f"stray site template text {marker!r} kept as printed")
        older = [m for m in _OLDER_EDITION_MARKERS if m in text]
        if older:
            page.flag(first, "rule_texts", draft.key, "older_edition_wording",
                      f"the text names rules of an earlier edition: {', '.join(older)}")


@dataclass
class _StratagemDraft:
    first: int
    name: str
    cp_cost: int
    group: str
    type: str
    fields: dict[str, str] = field(default_factory=dict)


@dataclass
class _ListedStratagem:
    """A Stratagem in a datasheet's list: name, cost and category, no text."""

    segs: tuple[int, ...]
    stratagem_id: str
    name: str
    cp_cost: int
    group: str
    type: str


class _StratagemBook:
    """Stratagem cards by id; each is stored once however often the page prints it."""

    def __init__(self) -> None:
        self.drafts: dict[str, _StratagemDraft] = {}
        self.listed: dict[str, _ListedStratagem] = {}


def _is_stratagem_start(page: _Page, i: int, end: int) -> bool:
    text = page.text(i)
    return (i + 1 < end and bool(_CP.match(page.text(i + 1))) and not text.startswith(("-", "|"))
            and not _CP.match(text))


def _stratagem_head(page: _Page, i: int) -> tuple[str, int, str, str] | None:
    """``NAME`` / ``1CP`` / ``Group – Type [Stratagem]`` -> (name, cp, group, type)."""
    category = _CATEGORY.match(page.text(i + 2))
    if category is None:
        return None
    return page.text(i), int(_CP.match(page.text(i + 1))["cp"]), category["group"], category["type"]


def stratagem_id(edition: int | None, group: str, name: str) -> str:
    """The id of a Stratagem: the edition, then the slug of its group and name.

    The edition prefix is the one the 11th-edition parser uses (``11e-core-...``), so the same
    Core Stratagem of two editions gets two ids.

    >>> stratagem_id(10, "Sanctuary Guardians", "A MARTYR’S DEATH")
    '10e-sanctuary-guardians-a-martyrs-death'
    """
    prefix = f"{edition}e-" if edition else ""
    return prefix + slug(f"{group} {name}")


def _parse_stratagem_part(page: _Page, start: int, end: int, book: _StratagemBook) -> None:
    """The ``Stratagems`` part: an introduction (boilerplate), then Stratagem cards."""
    i = start
    while i < end:
        if _is_stratagem_start(page, i, end):
            i = _parse_stratagem_card(page, i, end, book)
        elif not book.drafts:
            page.boiler("section introduction", i)
            i += 1
        else:
            page.reject(i, "stratagems", "line between Stratagem cards that starts no card")
            i += 1


def _parse_stratagem_card(page: _Page, i: int, end: int, book: _StratagemBook) -> int:
    """Read one card from ``i`` (the name line); return the index after it.

    Card: name, ``<N>CP``, category, an optional legend, then ``WHEN:`` / ``TARGET:`` /
    ``EFFECT:`` / ``RESTRICTIONS:`` lines (the scrape repeats some of them). A card printed
    again merges into the first: equal values are duplicates, a value the first lacked is
    filled in, a different value is rejected.
    """
    head = _stratagem_head(page, i) if i + 2 < end else None
    if head is None:
        for k in range(i, min(i + 3, end)):
            page.reject(k, "stratagems", "Stratagem card without a 'Group – Type' category line")
        return min(i + 3, end)
    name, cp_cost, group, kind = head
    sid = stratagem_id(page.source.edition, group, name)
    draft = book.drafts.get(sid)
    if draft is None:
        draft = book.drafts[sid] = _StratagemDraft(i, name, cp_cost, group, kind)
        page.use(i, i + 1, i + 2)
    elif (draft.name, draft.cp_cost, draft.group, draft.type) == head:
        page.dup("stratagems", i, i + 1, i + 2)
    else:
        for k in (i, i + 1, i + 2):
            page.reject(k, "stratagems", f"Stratagem card printed again with another cost or"
                        f" category than at {page.loc(draft.first)}; the first is kept")
    j = i + 3
    if j + 1 < end and _label(page.text(j)) is None and _label(page.text(j + 1)) is not None:
        _set_stratagem_field(page, draft, "legend", page.text(j), j)
        j += 1
    last_field: str | None = None
    while j < end:
        labelled = _label(page.text(j))
        if labelled is not None:
            last_field = labelled[0]
            _set_stratagem_field(page, draft, *labelled, j)
        elif (last_field is not None and page.segs[j].line == page.segs[j - 1].line
              and not looks_like_title(page.text(j))):
            draft.fields[last_field] += "\n" + page.text(j)  # glued continuation of the line
            page.use(j)
        else:
            break
        j += 1
    return j


def _label(text: str) -> tuple[str, str] | None:
    m = _LABELLED.match(text)
    if m is None or m["label"] not in _STRATAGEM_LABELS:
        return None
    return _STRATAGEM_LABELS[m["label"]], m["text"]


def _set_stratagem_field(page: _Page, draft: _StratagemDraft, name: str, text: str,
                         i: int) -> None:
    earlier = draft.fields.get(name)
    if earlier is None:
        draft.fields[name] = text
        page.use(i)
    elif earlier == text:
        page.dup("stratagems", i)
    else:
        page.reject(i, "stratagems", f"{name} printed again with other text than on the card at"
                    f" {page.loc(draft.first)}; the first is kept")


def _emit_stratagems(page: _Page, book: _StratagemBook) -> None:
    """One ``Stratagem`` per card; a Stratagem only listed on datasheets gets a ``DataGap``."""
    for sid, draft in book.drafts.items():
        f = draft.fields
        first = draft.first
        _add_stratagem(page, sid, PrintedStratagem(
            page.loc(first), draft.name, page.text(first + 1), page.text(first + 2),
            legend=f.get("legend"), when=f.get("when"), target=f.get("target"), effect=f.get("effect"),
            restrictions=f.get("restrictions")))
        listed = book.listed.get(sid)
        if listed and (listed.cp_cost, listed.type) != (draft.cp_cost, draft.type):
            page.flag(listed.segs[0], "stratagems", sid, "datasheet_list_differs",
                      f"a datasheet lists {listed.cp_cost}CP {listed.type}; the card at"
                      f" {page.loc(draft.first)} prints {draft.cp_cost}CP {draft.type}")
    for sid, listed in book.listed.items():
        if sid in book.drafts:
            continue
        name_seg, cost_seg, category_seg = listed.segs
        _add_stratagem(page, sid, PrintedStratagem(page.loc(name_seg), listed.name, page.text(cost_seg),
                                                   page.text(category_seg)))
        page.gap(listed.segs[0], "stratagems", sid, "legend, when, target, effect",
                 "the page lists this Stratagem on a datasheet but prints no card for it")


def _add_stratagem(page: _Page, sid: str, printed: PrintedStratagem) -> None:
    """Keep the ``Stratagem`` of a card or a datasheet's list entry (``assemble_stratagem``; its
    cost line matched ``_CP``, so it reads) and its flags."""
    assembled = assemble_stratagem(printed, page.source.source_id, sid, page.source.edition)
    page.add(assembled.records[0])
    for note in assembled.notes:
        page.collector.flag(note.table, note.entity, note.code, note.detail, printed.locator)


# --------------------------------------------------------------------------------------------
# Enhancements and secondary objectives
# --------------------------------------------------------------------------------------------


def _parse_choices(page: _Page, start: int, end: int, table: str, book: str | None) -> None:
    """A choice part: introduction, then ``DEFAULT ...`` / ``OPTIONAL ...`` marker, name,
    legend and text for each choice, separated by ``OR``.

    The introduction names the default and the optional choice; when it names others than the
    ones printed below (the scrape lost link text), each mismatch is a ``DataFlag``
    ``introduction_names_other_choice`` (the printed names are kept).
    """
    markers = _CHOICE_MARKERS[table]
    intro: tuple[int, re.Match[str]] | None = None
    chosen: dict[bool, tuple[str, str]] = {}  # is_default -> (id, name)
    i = start
    while i < end and page.text(i) not in markers:
        m = _CHOICE_INTROS[table].search(page.text(i))
        if m and intro is None:
            intro = (i, m)
            page.use(i)
        else:
            page.boiler("section introduction", i)
        i += 1
    while i < end:
        text = page.text(i)
        if text == _CHOICE_SEPARATOR:
            page.boiler("choice separator", i)
            i += 1
            continue
        if text not in markers or i + 1 >= end:
            page.reject(i, table, f"expected one of {', '.join(markers)} or {_CHOICE_SEPARATOR}")
            i += 1
            continue
        body_end = i + 2
        while (body_end < end and page.text(body_end) not in markers
               and page.text(body_end) != _CHOICE_SEPARATOR):
            body_end += 1
        is_default = markers[text]
        chosen[is_default] = _emit_choice(page, i, body_end, table, book, is_default)
        i = body_end
    if intro is not None:
        _check_intro(page, table, intro, chosen)


def _emit_choice(page: _Page, marker: int, end: int, table: str, book: str | None,
                 is_default: bool) -> tuple[str, str]:
    name_i = marker + 1
    name = page.text(name_i)
    body = list(range(name_i + 1, end))
    legend_i = body[0] if len(body) > 1 and not page.text(body[0]).startswith("- ") else None
    text_is = [k for k in body if k != legend_i]
    legend = page.text(legend_i) if legend_i is not None else None
    text = "\n".join(page.text(k) for k in text_is)
    entity = f"{page.scope}/{slug(name)}"
    common = dict(source_id=page.source.source_id, locator=page.loc(name_i), name=name,
                  is_default=is_default, legend=legend, text=text)
    if table == "enhancements":
        record: Record = Enhancement(enhancement_id=entity, detachment=book, cost_points=None,
                                     **common)
    else:
        record = SecondaryObjective(objective_id=entity, group=book, **common)
    page.keep(record, marker, name_i, *body)
    return entity, name


def _check_intro(page: _Page, table: str, intro: tuple[int, re.Match[str]],
                 chosen: dict[bool, tuple[str, str]]) -> None:
    i, m = intro
    for is_default, group in ((True, "default"), (False, "optional")):
        if is_default not in chosen:
            continue
        entity, name = chosen[is_default]
        if slug(m[group]) != slug(name):
            page.flag(i, table, entity, "introduction_names_other_choice",
                      f"the introduction names {m[group]!r} as the {group} choice; the {group}"
                      f" choice printed below is {name!r}")


# --------------------------------------------------------------------------------------------
# Datasheet blocks
# --------------------------------------------------------------------------------------------


class _Item(NamedTuple):
    """One thing read from a datasheet block, placed once the block's datasheet is known.

    ``kind`` is one of heading, weapon-row, name-only-row, ability, keywords, faction-keyword,
    leader-gap, stratagem, boilerplate, reject; ``data`` its values (see ``_emit_block``).
    """

    segs: tuple[int, ...]
    kind: str
    data: tuple


@dataclass
class _Block:
    start: int
    items: list[_Item] = field(default_factory=list)

    def keywords(self) -> set[str]:
        out: set[str] = set()
        for item in self.items:
            if item.kind == "keywords":
                out.update(item.data)
        return out


def _is_weapon_header(text: str) -> bool:
    return "|" in text and text.split("|")[0].strip().casefold() in WEAPON_TABLES


def _read_blocks(page: _Page, start: int, end: int) -> tuple[list[_Block], int]:
    """Datasheet blocks from ``start``; returns them and the index where the rules begin."""
    blocks: list[_Block] = []
    i = start
    while i < end and _is_weapon_header(page.text(i)):
        block, i = _read_block(page, i, end)
        blocks.append(block)
    for k in range(i, end):
        page.stray_table[k] = "rule_texts"
    return blocks, i


def _read_block(page: _Page, i: int, end: int) -> tuple[_Block, int]:
    """Read one datasheet block from its first weapon header.

    The block ends at the first segment it cannot read once ``KEYWORDS:`` was seen (the next
    block's weapon header, or the first rule section); before that, such a segment is an item
    to reject.
    """
    block = _Block(i)
    state, rank = "weapons", 0
    table: tuple[bool, list[str]] | None = None
    while i < end:
        text = page.text(i)
        heading = _BLOCK_HEADINGS.get(text)
        if _is_weapon_header(text):
            if rank > 0:
                break
            table = _weapon_header(page, block, i)
        elif heading is not None and heading[1] > rank:
            state, rank = heading
            block.items.append(_Item((i,), "heading", ()))
        elif text.startswith("KEYWORDS:") and rank < _KEYWORDS_RANK:
            state, rank = "keywords", _KEYWORDS_RANK
            words = tuple(clean_line(w) for w in text.split(":", 1)[1].split(",") if w.strip())
            block.items.append(_Item((i,), "keywords", words))
        elif state == "weapons" and text.startswith("|"):
            _weapon_row(block, i, text, table)
        elif state in ("abilities", "wargear"):
            i = _read_ability(page, block, i, end, state)
            continue
        elif state in _LEADER_SENTENCES and text.endswith(":"):
            block.items.append(_Item((i,), "leader-gap", (state, text)))
        elif state == "faction-keywords" and text == text.upper() and ":" not in text:
            block.items.append(_Item((i,), "faction-keyword", (text,)))
        elif state == "stratagems" and _is_stratagem_start(page, i, end) and i + 2 < end:
            i = _read_listed_stratagem(page, block, i)
            continue
        elif state == "stratagems" and text in _STRATAGEM_LIST_BOILERPLATE:
            block.items.append(_Item((i,), "boilerplate", (_STRATAGEM_LIST_BOILERPLATE[text],)))
        elif rank >= _KEYWORDS_RANK:
            break
        else:
            block.items.append(_Item((i,), "reject", (f"line not understood in the {state}"
                                                      f" part of a datasheet block",)))
        i += 1
    return block, i


def _weapon_header(page: _Page, block: _Block, i: int) -> tuple[bool, list[str]] | None:
    labels = table_cells(page.text(i))
    unknown = [label for label in labels[1:] if label.casefold() not in WEAPON_COLUMNS]
    if unknown:
        block.items.append(_Item((i,), "reject", (f"unknown weapon column {unknown}; known:"
                                                  f" {', '.join(c.upper() for c in WEAPON_COLUMNS)}",)))
        return None
    block.items.append(_Item((i,), "heading", ()))
    return WEAPON_TABLES[labels[0].casefold()], labels[1:]


def _weapon_row(block: _Block, i: int, text: str, table: tuple[bool, list[str]] | None) -> None:
    cells = table_cells(text)
    if table is None:
        block.items.append(_Item((i,), "reject", ("weapon row under a missing or unreadable"
                                                  " table header",)))
    elif len(cells) == 1:
        block.items.append(_Item((i,), "name-only-row", (cells[0],)))
    elif len(cells) != len(table[1]) + 1:
        block.items.append(_Item((i,), "reject", (f"weapon row has {len(cells)} cells; the"
                                                  f" header has {len(table[1]) + 1}",)))
    else:
        block.items.append(_Item((i,), "weapon-row", (table[0], table[1], cells)))


def _read_ability(page: _Page, block: _Block, i: int, end: int, state: str) -> int:
    """One ability line (``CORE: X``, ``FACTION: X``, ``Name: text``) or a name line with its
    text on the next line (``Patrol Squads``, a datasheet ability). Returns the next index."""
    text = page.text(i)
    prefixed = _PREFIXED_ABILITY.match(text)
    named = _NAMED_ABILITY.match(text)
    if prefixed and prefixed["prefix"] in _ABILITY_PREFIXES:
        kind = _ABILITY_PREFIXES[prefixed["prefix"]]
        block.items.append(_Item((i,), "ability", (kind, prefixed["name"], None)))
        return i + 1
    if named:
        kind = "wargear" if state == "wargear" else "datasheet"
        block.items.append(_Item((i,), "ability", (kind, named["name"], named["text"])))
        return i + 1
    following = page.text(i + 1) if i + 1 < end else ""
    if (looks_like_title(text) and following and not looks_like_title(following)
            and following not in _BLOCK_HEADINGS and not following.startswith("KEYWORDS:")):
        block.items.append(_Item((i, i + 1), "ability", ("datasheet", text, following)))
        return i + 2
    block.items.append(_Item((i,), "reject", ("ability line is neither 'CORE: X', 'FACTION: X',"
                                              " 'Name: text' nor a name with its text below",)))
    return i + 1


def _read_listed_stratagem(page: _Page, block: _Block, i: int) -> int:
    head = _stratagem_head(page, i)
    if head is None:
        block.items.append(_Item((i,), "reject", ("listed Stratagem without a 'Group – Type'"
                                                  " category line",)))
        return i + 1
    block.items.append(_Item((i, i + 1, i + 2), "stratagem", head))
    return i + 3


# --------------------------------------------------------------------------------------------
# Datasheets: headers matched with blocks, then their records
# --------------------------------------------------------------------------------------------


def _match_blocks(page: _Page, headers: list[_Header],
                  blocks: list[_Block]) -> list[tuple[_Header | None, _Block | None]]:
    """Pair each block with the header whose printed name is among the block's keywords.

    A block naming no header takes the next unmatched header in page order (``DataFlag``
    ``datasheet_matched_by_order``); a block left over has no header.
    """
    by_name = {clean_line(h.printed).upper(): h for h in headers}
    pairs: dict[int, _Block] = {}
    unnamed: list[_Block] = []
    for block in blocks:
        names = [by_name[k] for k in block.keywords() if k.upper() in by_name]
        if len(names) == 1 and names[0].index not in pairs:
            pairs[names[0].index] = block
        else:
            unnamed.append(block)
    result: list[tuple[_Header | None, _Block | None]] = []
    for header in headers:
        block = pairs.get(header.index)
        if block is None and unnamed:
            block = unnamed.pop(0)
            page.flag(header.index, "datasheets", header.datasheet_id,
                      "datasheet_matched_by_order",
                      f"the block at {page.loc(block.start)} names no datasheet in its keywords")
        result.append((header, block))
    result.extend((None, block) for block in unnamed)
    return result


def _emit_datasheets(page: _Page, headers: list[_Header], blocks: list[_Block],
                     stratagems: _StratagemBook) -> None:
    """Records of every datasheet: the header's own, then its block's."""
    source = page.source
    factions: set[str] = set()
    for header, block in _match_blocks(page, headers, blocks):
        if header is None:
            for item in block.items:
                for i in item.segs:
                    page.reject(i, "datasheets", "datasheet block that matches no datasheet"
                                " header at the top of the page")
            continue
        faction_kws = [item for item in (block.items if block else [])
                       if item.kind == "faction-keyword"]
        faction_id = slug(faction_kws[0].data[0]) if faction_kws else None
        if faction_id and faction_id not in factions:
            factions.add(faction_id)
            page.add(Faction(source_id=source.source_id, locator=page.loc(faction_kws[0].segs[0]),
                             faction_id=faction_id, name=title_case_name(faction_kws[0].data[0])))
        printed = PrintedDatasheet(page.loc(header.index), header.name, faction_id, source.edition,
                                   source.game_mode, legend=header.legend, model_count=header.model_count)
        page.add(assemble_datasheet(printed, source.source_id, header.datasheet_id))
        for loadout in header.loadouts:
            page.add(loadout)
        page.gap(header.index, "model_profiles", header.datasheet_id, "M,T,Sv,InSv,W,Ld,OC",
                 "page scrape lost the characteristics table (M, T, Sv, invulnerable save, W,"
                 " Ld, OC)")
        if block is None:
            page.gap(header.index, "datasheets", header.datasheet_id,
                     "weapons, abilities, keywords", "the page prints no block for this datasheet")
            continue
        _emit_block(page, header, block, stratagems)


def _emit_block(page: _Page, header: _Header, block: _Block, stratagems: _StratagemBook) -> None:
    ds = header.datasheet_id
    source_id = page.source.source_id
    full_rows = {item.data[2][0] for item in block.items if item.kind == "weapon-row"}
    equipment = {clean_line(e).lower() for lo in header.loadouts for e in lo.equipment.split(";")}
    for item in block.items:
        i = item.segs[0]
        if item.kind == "heading":
            page.use(i)
        elif item.kind == "boilerplate":
            page.boiler(item.data[0], i)
        elif item.kind == "reject":
            page.reject(i, "datasheets", item.data[0])
        elif item.kind == "name-only-row":
            if item.data[0] in full_rows:
                page.dup("weapon_profiles", i)
            else:
                page.gap(i, "weapon_profiles", f"{ds}/{slug(item.data[0])}", "characteristics",
                         "page scrape lost the characteristics of this weapon row")
                page.use(i)
        elif item.kind == "weapon-row":
            _emit_weapon(page, ds, i, *item.data, equipment)
        elif item.kind == "ability":
            page.keep(assemble_ability(PrintedAbility(page.loc(i), *item.data), source_id, ds), *item.segs)
        elif item.kind == "faction-keyword":
            page.keep(Keyword(source_id=source_id, locator=page.loc(i), datasheet_id=ds,
                              keyword=read_keyword(item.data[0]), is_faction_keyword=True), i)
        elif item.kind == "keywords":
            page.use(i)
            for word in item.data:
                if not page.keep(Keyword(source_id=source_id, locator=page.loc(i), datasheet_id=ds,
                                         keyword=read_keyword(word), is_faction_keyword=False)):
                    page.result.duplicates["keywords"] += 1  # the same keyword twice in the line
        elif item.kind == "leader-gap":
            state, text = item.data
            name, lost = _LEADER_SENTENCES[state]
            page.gap(i, "leader_links", ds, name,
                     f"page scrape lost the link text: {text!r} names no unit ({lost})")
            page.use(i)
        elif item.kind == "stratagem":
            name, cp_cost, group, kind = item.data
            sid = stratagem_id(page.source.edition, group, name)
            stratagems.listed.setdefault(sid, _ListedStratagem(item.segs, sid, *item.data))
            page.keep(DatasheetStratagem(source_id=source_id, locator=page.loc(i), datasheet_id=ds,
                                         stratagem_id=sid), *item.segs)
        else:
            raise RuntimeError(f"bug: unknown block item kind {item.kind!r}")


def _split_weapon_cell(cell: str) -> tuple[str, str]:
    """``Bolt pistol [pistol]`` -> (the name as printed, the abilities text).

    >>> _split_weapon_cell("Combi-weapon [ANTI-INFANTRY 4+, RAPID FIRE 1]")
    ('Combi-weapon', 'ANTI-INFANTRY 4+, RAPID FIRE 1')
    >>> _split_weapon_cell("➤ Plasma storm battery - supercharge [HAZARDOUS]")
    ('➤ Plasma storm battery - supercharge', 'HAZARDOUS')
    """
    m = _BRACKETS.match(cell)
    name, abilities = (m["name"], m["abilities"]) if m else (cell, "")
    return clean_line(name), clean_line(abilities)


def _emit_weapon(page: _Page, ds: str, i: int, is_melee: bool, labels: list[str],
                 cells: list[str], equipment: set[str]) -> None:
    """One weapon row -> ``WeaponProfile`` and its ``WeaponAbility`` rows, or a reject.

    The row is read by the shared assembly (``pipeline.assemble.weapons``); its segment is used,
    counted as a duplicate, or rejected (a value that cannot be read, or the key of an earlier
    row with other values: ``duplicate_profile_conflict``).
    """
    printed_name, abilities_text = _split_weapon_cell(cells[0])
    name = split_weapon_name(printed_name)[0]
    values = {WEAPON_COLUMNS[label.casefold()]: cell for label, cell in zip(labels, cells[1:])}
    missing = [c for c in ("range", "attacks", "skill", "strength", "armour_penetration", "damage")
               if c not in values]
    if missing:
        page.reject(i, "weapon_profiles", f"{name}: no column for {', '.join(missing)}")
        return
    printed = PrintedWeapon(
        locator=page.loc(i), name=printed_name, range=values["range"],
        attacks=values["attacks"], skill=values["skill"], strength=values["strength"],
        armour_penetration=values["armour_penetration"], damage=values["damage"],
        abilities=abilities_text, is_melee=is_melee,
    )
    try:
        assembled = assemble_weapon(printed, page.source.source_id, ds)
    except NormaliseError as exc:
        page.reject(i, "weapon_profiles", str(exc))  # the assembly's reason, as from every source
        return
    weapon = assembled.records[0]
    if not page.keep(weapon, i):
        if page.fate[i] != "duplicate weapon_profiles":
            first = page.collector.first(weapon)
            assert isinstance(first, WeaponProfile) and isinstance(weapon, WeaponProfile)
            made = page.collector.conflict_flag(first, weapon)
            if made is not None:
                page.add(made)
        return
    for record in assembled.records[1:]:
        page.add(record)
    for note in assembled.notes:
        page.flag(i, note.table, note.entity, note.code, note.detail)
    if name.lower() not in equipment:
        page.flag(i, "weapon_profiles", entity_key(weapon), "weapon_not_in_loadout",
                  f"{name!r} is in no loadout line of the datasheet")
