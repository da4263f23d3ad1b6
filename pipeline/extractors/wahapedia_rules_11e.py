"""Wahapedia 11th-edition page text (core rule sections scraped from a faction page) -> records.

Input: the text of a Wahapedia 11th-edition page as saved by a browser (one paragraph per line,
blank lines between paragraphs, table cells separated by tabs). Output: ``RuleText`` per rule
section, ``RuleReference`` per ``SEE ALSO`` entry, ``Stratagem`` per Core Stratagem card,
``DataGap`` per table that lost its numbers, ``Reject`` per line that fits nowhere.

Every non-blank line ends in exactly one place (``line_dispositions`` shows where): the text of a
record, a counted boilerplate kind (``result.boilerplate``, counted in lines), a collapsed
duplicate block (``result.duplicates``, counted in blocks per table) or a reject.

Section headers (a whole line; the section number is ``NN.NN`` or ``NN.NN.NN``):

- ``[RAPID FIRE]24.30``: a weapon ability; title ``RAPID FIRE`` (brackets dropped);
- ``ADVANCE MOVE09.06``: an upper-case title glued to its number (a space is also accepted);
- ``06.03 Hazard Rolls``: number first, then the title.

``Title 06.02.01`` (title first, then a space and the number) is the form of ``SEE ALSO``
entries and is read only inside a ``SEE ALSO`` block. A header whose next line is ``<N>CP``
starts a Stratagem card: ``<N>CP``, then the category (``Core Stratagem``: group ``Core``, type
``Stratagem``; ``Core – Battle Tactic``: group ``Core``, type ``Battle Tactic``), then the
legend, then ``WHEN:`` / ``TARGET:`` / ``EFFECT:`` / ``RESTRICTIONS:``. The card is also a
``RuleText`` of its section.

Numberless headings, decided by structure (nothing here knows rule names):

- A *heading candidate* is a short name-like line (at most 8 words and 60 characters, starting
  with a capital letter, no tab, not ending in ``. , ; :``) in upper case (``DEEP STRIKE``) or
  title case (``Moving a Model in a Straight Line``), whose next non-blank line is text, not
  another name, header or boilerplate.
- Its *block* runs to the next header, heading candidate, ``SEE ALSO`` or boilerplate line.
- A heading candidate starts a new numberless rule (``section`` None) when no section is open,
  when the open section is closed (a ``SEE ALSO`` block or a boilerplate line ended it), or:
  - upper case: when its block has two or more paragraphs (``DEEP STRIKE``: flavour, rule,
    summary). A one-paragraph block is a call-out (``CRITICAL HITS``, ``WHAT IS ENGAGEMENT?``,
    ``MORTAL WOUNDS AND NORMAL DAMAGE``) and stays in the open section's text;
  - title case, under an upper-case section (a weapon ability, move or Stratagem card, which
    have no title-case sub-headings): always (``Hit Roll`` after ``[LETHAL HITS]``,
    ``Voice of Command`` after ``[RAPID FIRE]``);
  - title case, under a title-case section: unless it is one of a run of two or more adjacent
    short blocks (at most two paragraphs each) under title-case headings. Such a run is a list of
    sub-headings (``Model Visible`` ... ``Unit Fully Visible`` in 06.01, the Orders of
    ``Voice of Command``); a lone heading starts a rule (``Wound Roll`` after 05.02.01,
    ``Rotating a Model`` after ``Moving a Model in a Straight Line``).
- A new rule whose title (ignoring case) and text equal an earlier section's or sub-heading's
  is a repeat (``BATTLEFIELD MORALE`` repeating 01.07.01, ``Duty and Honour!`` repeating the
  Order): it is collapsed and counted in ``duplicates["rule_texts"]``.

Boilerplate (counted per kind, in lines): the page title (the first non-blank line, unless it is
a header); ``[ ]``; the ``This datasheet does not meet the selection criteria`` notice (it also
closes the open section); ``The X keyword(s) is/are used in the following ... datasheets:`` with
its list of names up to ``and others...``, the next header or boilerplate, or a name followed by
text (a heading); the ``Army List`` / ``Datasheets collated`` index with its names. The page
starts inside such a list (the scrape begins mid-page), so names before the first section are
list items too.

Text: each line cleaned (``clean_line``); a table row (cells separated by tabs) is written as its
non-empty cells joined by `` | ``; lines of a paragraph are joined by a newline and paragraphs by
a blank line. A table row with a ``+`` cell (the number was an image) or an ``Unmodified`` cell
with no roll value gives a ``DataGap``; the value is never filled in.
"""

from __future__ import annotations

import re
from collections import Counter
from dataclasses import dataclass, field

from pipeline.assemble.printed import PrintedStratagem
from pipeline.assemble.stratagems import SECTIONS, assemble_stratagem
from pipeline.normalise.text import clean_line, slug
from pipeline.extractors import ParseResult, source_rule_text
from schemas.records import DataFlag, DataGap, Record, Reject, RuleReference, Source

TABLE = "rule_texts"

_SECTION = r"\d{2}(?:\.\d{2}){1,2}"
_BRACKET_HEADER = re.compile(
    rf"^\[(?P<title>[^\[\]]*[A-Za-z][^\[\]]*)\]\s*(?P<section>{_SECTION})$"
)
_GLUED_HEADER = re.compile(rf"^(?P<title>[A-Z][A-Z0-9 '’/&!?\-]*?)\s*(?P<section>{_SECTION})$")
_NUMBER_FIRST_HEADER = re.compile(rf"^(?P<section>{_SECTION})\s+(?P<title>[A-Z][^\t]{{0,79}})$")
_REFERENCE = re.compile(rf"^(?P<title>.*?\S)\s+(?P<section>{_SECTION})$")
_CP = re.compile(r"^(?P<cp>\d+)\s*CP$")
_FIELD = re.compile(r"^(?P<label>[A-Z][A-Z ]*[A-Z]):\s*(?P<value>.*)$")

SEE_ALSO = "SEE ALSO"
SELECTION_NOTICE = (
    "This datasheet does not meet the selection criteria (see Filter combo-box or Settings tab)."
)
_KEYWORD_LIST_HEADING = re.compile(
    r"^The .+ keywords? (?:is|are) used in the following .+ datasheets:$"
)
LIST_ENDS = ("and others...", "and others…")
INDEX_HEADINGS = ("Army List", "Datasheets collated")
_EMPTY_LINK = re.compile(r"^\[\s*\]$")

#: Boilerplate kinds, as counted in ``ParseResult.boilerplate`` (in lines).
PAGE_TITLE = "page title"
EMPTY_LINK = "empty link [ ]"
NOTICE = "selection criteria notice"
KEYWORD_LIST = "keyword datasheet list"
INDEX = "datasheet index"

#: Stratagem card fields, by printed label.
STRATAGEM_FIELDS = SECTIONS

#: Words that stay lower case inside a title-case heading.
SMALL_WORDS = frozenset(
    "a an and as at by for from in into of on or over the to vs with within".split()
)

MAX_HEADING_WORDS = 8
MAX_HEADING_CHARS = 60
#: A sub-heading block in a run of sub-headings has at most this many paragraphs.
MAX_SUB_PARAGRAPHS = 2


@dataclass(frozen=True)
class Header:
    """A numbered section header: ``form`` is ``bracket``, ``glued`` or ``number-first``."""

    section: str
    title: str
    form: str


def read_header(line: str) -> Header | None:
    """Read a numbered section header in any printed form, or None.

    >>> read_header("[RAPID FIRE]24.30")
    Header(section='24.30', title='RAPID FIRE', form='bracket')
    >>> read_header("ADVANCE MOVE09.06")
    Header(section='09.06', title='ADVANCE MOVE', form='glued')
    >>> read_header("05.04.04 Destroyed")
    Header(section='05.04.04', title='Destroyed', form='number-first')
    >>> read_header("Normal Damage 06.02.01") is None  # a SEE ALSO entry, not a header
    True
    """
    line = clean_line(line)
    m = _BRACKET_HEADER.match(line)
    if m:
        return Header(m["section"], clean_line(m["title"]), "bracket")
    m = _GLUED_HEADER.match(line)
    if m and re.search("[A-Z]", m["title"]):
        return Header(m["section"], clean_line(m["title"]), "glued")
    m = _NUMBER_FIRST_HEADER.match(line)
    if m and not m["title"].rstrip().endswith((".", ":", ";", ",")):
        return Header(m["section"], clean_line(m["title"]), "number-first")
    return None


def heading_style(raw: str) -> str | None:
    """``caps`` for an upper-case name, ``title`` for a title-case one, else None.

    >>> heading_style("WHAT IS ENGAGEMENT?"), heading_style("Moving a Model in a Straight Line")
    ('caps', 'title')
    >>> heading_style("Datasheets collated"), heading_style("Your unit must be unengaged.")
    (None, None)
    >>> heading_style("\\tUnmodified\\tFAILS") is None  # a table row
    True
    """
    if not name_like(raw):
        return None
    line = clean_line(raw)
    if line.upper() == line:
        return "caps"
    words = [w for w in re.split(r"[\s/]+", line) if re.match(r"[A-Za-z]", w)]
    if all(w[0].isupper() or w.lower() in SMALL_WORDS for w in words):
        return "title"
    return None


def name_like(raw: str) -> bool:
    """A short line that could be a name or a heading: not a sentence, label or table row.

    >>> name_like("Death Korps Of Krieg"), name_like("Rapid Disembark:"), name_like('+3"')
    (True, False, False)
    """
    line = clean_line(raw)
    return (
        bool(line)
        and "\t" not in raw.strip("\r\n")
        and len(line) <= MAX_HEADING_CHARS
        and len(line.split()) <= MAX_HEADING_WORDS
        and line[0].isupper()
        and not line.endswith((".", ",", ";", ":"))
        and ": " not in line
    )


def split_category(printed: str) -> tuple[str, str] | None:
    """A Stratagem category as printed -> (group, type), or None when unreadable.

    >>> split_category("Core Stratagem"), split_category("Core – Battle Tactic")
    (('Core', 'Stratagem'), ('Core', 'Battle Tactic'))
    """
    printed = clean_line(printed)
    m = re.match(r"^(?P<group>.+?)\s+[–—-]\s+(?P<type>.+)$", printed)
    if m:
        return m["group"], m["type"]
    m = re.match(r"^(?P<group>.+?)\s+(?P<type>Stratagem)$", printed)
    if m:
        return m["group"], m["type"]
    return None


def render_line(raw: str) -> str:
    """One printed line as stored in a rule text: cleaned; a tab-separated table row as cells.

    >>> render_line("\\tUnmodified\\tFAILS")
    'Unmodified | FAILS'
    >>> render_line("Strength is LESS than the Toughness\\t\\t+")
    'Strength is LESS than the Toughness | +'
    """
    if "\t" in raw:
        return " | ".join(c for c in (clean_line(cell) for cell in raw.split("\t")) if c)
    return clean_line(raw)


@dataclass
class _Block:
    """One rule section as read from the page, before it becomes records."""

    line: int  # header line number
    title: str
    section: str | None
    style: str  # "caps" or "title": the style of the section's own title
    body: list[tuple[int, str]] = field(default_factory=list)  # (line, raw); raw "" = blank
    sub_headings: list[int] = field(default_factory=list)
    see_also: list[int] = field(default_factory=list)  # the SEE ALSO line(s)
    references: list[tuple[int, str, str | None]] = field(default_factory=list)
    card: tuple[int, int] | None = None  # lines of "<N>CP" and of the category
    closed: bool = False
    last_was_title_sub: bool = False

    def add(self, number: int, raw: str) -> None:
        if raw or (self.body and self.body[-1][1]):
            self.body.append((number, raw))

    def text(self) -> str:
        return _render(self.body)

    def lines(self) -> list[int]:
        """Every non-blank line number the block was read from."""
        own = [self.line, *self.see_also, *(n for n, _, _ in self.references)]
        return own + [n for n, raw in self.body if raw]


def _render(body: list[tuple[int, str]]) -> str:
    paragraphs: list[list[str]] = [[]]
    for _, raw in body:
        if raw:
            paragraphs[-1].append(render_line(raw))
        elif paragraphs[-1]:
            paragraphs.append([])
    return "\n\n".join("\n".join(p) for p in paragraphs if p)


@dataclass
class _Scan:
    """The result of one pass over the page: blocks, boilerplate and rejected lines."""

    blocks: list[_Block] = field(default_factory=list)
    boilerplate: dict[int, str] = field(default_factory=dict)  # line -> kind
    rejects: list[tuple[int, str, str]] = field(default_factory=list)  # (line, raw, reason)


class _Page:
    """The page's lines with the look-ahead questions the scan asks (1-based line numbers)."""

    def __init__(self, text: str) -> None:
        self.raw = text.splitlines()
        self.clean = [clean_line(x) for x in self.raw]

    def __len__(self) -> int:
        return len(self.raw)

    def next_nonblank(self, i: int) -> int | None:
        """Index of the first non-blank line after index ``i``."""
        for j in range(i + 1, len(self.clean)):
            if self.clean[j]:
                return j
        return None

    def is_trigger(self, i: int) -> bool:
        """A boilerplate line that starts or ends a block of boilerplate."""
        line = self.clean[i]
        return (
            line == SELECTION_NOTICE
            or bool(_KEYWORD_LIST_HEADING.match(line))
            or line == INDEX_HEADINGS[0]
            or line in LIST_ENDS
            or bool(_EMPTY_LINK.match(line))
        )

    def is_heading(self, i: int) -> bool:
        """A heading candidate: a name-like line in caps or title case followed by text."""
        line = self.clean[i]
        if (
            line == SEE_ALSO
            or self.is_trigger(i)
            or read_header(line)
            or not heading_style(self.raw[i])
        ):
            return False
        j = self.next_nonblank(i)
        if j is None:
            return False
        nxt = self.clean[j]
        return not (
            name_like(self.raw[j]) or read_header(nxt) or self.is_trigger(j) or nxt == SEE_ALSO
        )

    def is_stop(self, i: int) -> bool:
        line = self.clean[i]
        return (
            bool(read_header(line)) or line == SEE_ALSO or self.is_trigger(i) or self.is_heading(i)
        )

    def block_end(self, i: int) -> int:
        """Index of the first stop line after the heading at index ``i`` (or the end)."""
        for j in range(i + 1, len(self.clean)):
            if self.clean[j] and self.is_stop(j):
                return j
        return len(self.clean)

    def paragraphs(self, i: int) -> int:
        """Number of paragraphs in the block of the heading at index ``i``."""
        count, inside = 0, False
        for j in range(i + 1, self.block_end(i)):
            if self.clean[j] and not inside:
                count += 1
            inside = bool(self.clean[j])
        return count

    def is_short_title_heading(self, i: int | None) -> bool:
        return (
            i is not None
            and self.is_heading(i)
            and heading_style(self.raw[i]) == "title"
            and self.paragraphs(i) <= MAX_SUB_PARAGRAPHS
        )


def _starts_rule(page: _Page, i: int, current: _Block | None) -> bool:
    """Does the heading candidate at index ``i`` start a new numberless rule? (module docstring)"""
    if current is None or current.closed:
        return True
    style = heading_style(page.raw[i])
    if style == "caps":
        return page.paragraphs(i) >= 2
    if current.style == "caps":
        return True
    if not page.is_short_title_heading(i):
        return True
    end = page.block_end(i)
    in_run = current.last_was_title_sub or (end < len(page) and page.is_short_title_heading(end))
    return not in_run


def _scan(text: str) -> _Scan:
    page = _Page(text)
    scan = _Scan()
    current: _Block | None = None
    list_kind: str | None = KEYWORD_LIST  # the page starts inside a keyword datasheet list
    seen_first = False

    def close() -> None:
        nonlocal current
        if current is not None:
            scan.blocks.append(current)
            current = None

    i = 0
    while i < len(page):
        raw, line, number = page.raw[i], page.clean[i], i + 1
        if not line:
            if current is not None and not current.closed:
                current.add(number, "")
            i += 1
            continue
        header = read_header(line)
        if not seen_first:
            seen_first = True
            if header is None:
                scan.boilerplate[number] = PAGE_TITLE
                i += 1
                continue
        if _EMPTY_LINK.match(line):
            scan.boilerplate[number] = EMPTY_LINK
            i += 1
            continue
        if list_kind is not None:
            if line in LIST_ENDS:
                scan.boilerplate[number] = list_kind
                list_kind = None
                i += 1
                continue
            if (
                not header
                and not page.is_trigger(i)
                and line != SEE_ALSO
                and name_like(raw)
                and not page.is_heading(i)
            ):
                scan.boilerplate[number] = list_kind
                i += 1
                continue
            list_kind = None
        if header is not None:
            close()
            style = "caps" if header.form != "number-first" or header.title.isupper() else "title"
            current = _Block(number, header.title, header.section, style)
            j = page.next_nonblank(i)
            if j is not None and _CP.match(page.clean[j]):
                k = page.next_nonblank(j)
                if k is not None and not read_header(page.clean[k]) and not page.is_trigger(k):
                    current.card = (j + 1, k + 1)
        elif current is not None and current.card and number in current.card:
            current.add(number, raw)
        elif line == SELECTION_NOTICE:
            scan.boilerplate[number] = NOTICE
            close()
        elif _KEYWORD_LIST_HEADING.match(line):
            scan.boilerplate[number] = KEYWORD_LIST
            close()
            list_kind = KEYWORD_LIST
        elif line == INDEX_HEADINGS[0]:
            scan.boilerplate[number] = INDEX
            close()
            list_kind = INDEX
        elif line in LIST_ENDS:
            scan.boilerplate[number] = KEYWORD_LIST
        elif line == SEE_ALSO:
            if current is None or current.closed:
                scan.rejects.append((number, raw, "SEE ALSO block outside any rule section"))
                i += 1
                continue
            current.see_also.append(number)
            j = page.next_nonblank(i)
            while j is not None and j < len(page) and page.clean[j]:
                m = _REFERENCE.match(page.clean[j])
                if m:
                    current.references.append((j + 1, clean_line(m["title"]), m["section"]))
                else:
                    scan.rejects.append(
                        (
                            j + 1,
                            page.raw[j],
                            "SEE ALSO entry without a section number (expected 'Title 06.02.01')",
                        )
                    )
                j += 1
            current.closed = True
            i = j if j is not None else len(page)
            continue
        elif page.is_heading(i):
            if _starts_rule(page, i, current):
                close()
                current = _Block(number, line, None, heading_style(raw) or "title")
            else:
                assert current is not None  # _starts_rule is True when no section is open
                current.add(number, raw)
                current.sub_headings.append(len(current.body) - 1)
                current.last_was_title_sub = heading_style(raw) == "title"
        elif current is not None and not current.closed:
            current.add(number, raw)
        else:
            scan.rejects.append(
                (number, raw, "text outside any rule section (no header before it)")
            )
        i += 1
    close()
    return scan


def _sub_blocks(block: _Block) -> list[tuple[str, str]]:
    """(heading, text) of each sub-heading of a block, for spotting repeated blocks."""
    out = []
    starts = block.sub_headings + [len(block.body)]
    for start, end in zip(starts, starts[1:], strict=False):
        heading = clean_line(block.body[start][1])
        out.append((heading.casefold(), _render(block.body[start + 1 : end])))
    return out


def _table_gaps(block: _Block, rule_key: str, source: Source) -> list[DataGap]:
    """DataGaps for table rows that lost their numbers (the page printed them as images)."""
    noun = re.sub(r"\s+rolls?$", "", block.title.lower())
    plus_rows, unmodified_rows = [], []
    for number, raw in block.body:
        if "\t" not in raw:
            continue
        cells = [c for c in (clean_line(x) for x in raw.split("\t")) if c]
        if "+" in cells:
            plus_rows.append(number)
        if cells and cells[0] == "Unmodified" and len(cells) > 1:
            unmodified_rows.append(number)
    gaps = []
    if plus_rows:
        gaps.append(
            DataGap(
                source_id=source.source_id,
                locator=f"line {plus_rows[0]}",
                table_name=TABLE,
                entity_key=rule_key,
                field=f"{noun} table required results",
                reason=(
                    f"{len(plus_rows)} table rows print '+' without its number (lines "
                    f"{', '.join(map(str, plus_rows))}): the numbers were images on the page"
                ),
            )
        )
    if unmodified_rows:
        gaps.append(
            DataGap(
                source_id=source.source_id,
                locator=f"line {unmodified_rows[0]}",
                table_name=TABLE,
                entity_key=rule_key,
                field=f"{noun} table unmodified roll values",
                reason=(
                    f"{len(unmodified_rows)} table rows print 'Unmodified' without the roll value "
                    f"(lines {', '.join(map(str, unmodified_rows))}): "
                    "the numbers were images on the page"
                ),
            )
        )
    return gaps


def _stratagem(block: _Block, source: Source) -> list[Record] | Reject:
    """The Stratagem of a card block (``block.card`` is set) and its flags (``assemble_stratagem``)."""
    assert block.card is not None
    cp_line, category_line = block.card
    lines = {n: clean_line(raw) for n, raw in block.body if raw}
    category = split_category(lines[category_line])
    if category is None:
        return Reject(
            source_id=source.source_id,
            locator=f"line {category_line}",
            table_name="stratagems",
            raw_text=lines[category_line],
            reason=(
                "unreadable Stratagem category "
                "(expected e.g. 'Core Stratagem' or 'Core – Battle Tactic')"
            ),
        )
    legend: list[str] = []
    fields: dict[str, list[str]] = {}
    current: str | None = None
    for n, raw in block.body:
        if not raw or n in block.card:
            continue
        line = render_line(raw)
        m = _FIELD.match(line)
        if m and m["label"] in STRATAGEM_FIELDS:
            current = STRATAGEM_FIELDS[m["label"]]
            fields[current] = [m["value"]] if m["value"] else []
        elif current is None:
            legend.append(line)
        else:
            fields[current].append(line)
    group, kind = category

    def joined(name: str) -> str | None:
        return "\n".join(fields.get(name, [])) or None

    printed = PrintedStratagem(
        f"line {block.line}", block.title, lines[cp_line], kind, group=group,
        legend="\n".join(legend) or None, when=joined("when"), target=joined("target"),
        effect=joined("effect"), restrictions=joined("restrictions"),
    )
    sid = f"{source.edition}e-{slug(group)}-{slug(block.title)}"
    try:
        assembled = assemble_stratagem(printed, source.source_id, sid, source.edition)
    except ValueError as e:  # a cost of more digits than a number may have
        return Reject(source_id=source.source_id, locator=f"line {cp_line}", table_name="stratagems",
                      raw_text=lines[cp_line], reason=str(e))
    return [*assembled.records, *(
        DataFlag(source_id=source.source_id, locator=printed.locator, table_name=n.table, entity_key=n.entity,
                 flag=n.code, detail=n.detail) for n in assembled.notes)]


def line_dispositions(text: str) -> dict[int, str]:
    """Where each non-blank line of the page ends: ``{line number: disposition}``.

    A disposition is ``rule_texts``, ``rule_references``, ``duplicate``, ``reject`` or
    ``boilerplate: <kind>``. Used to check that nothing is dropped silently.
    """
    scan = _scan(text)
    out = {n: f"boilerplate: {kind}" for n, kind in scan.boilerplate.items()}
    out.update({n: "reject" for n, _, _ in scan.rejects})
    for block, duplicate in _kept_and_duplicate(scan.blocks):
        for n in block.lines():
            out[n] = "duplicate" if duplicate else "rule_texts"
        if not duplicate:
            for n in block.see_also:
                out[n] = "rule_references"
            for n, _, _ in block.references:
                out[n] = "rule_references"
    return dict(sorted(out.items()))


def _kept_and_duplicate(blocks: list[_Block]) -> list[tuple[_Block, bool]]:
    """Each block with True when it repeats an earlier section or sub-heading block."""
    seen: set[tuple[str, str]] = set()
    out = []
    for block in blocks:
        key = (block.title.casefold(), block.text())
        duplicate = key in seen
        out.append((block, duplicate))
        if not duplicate:
            seen.add(key)
            seen.update(_sub_blocks(block))
    return out


def parse(text: str, source: Source) -> ParseResult:
    """Parse a Wahapedia 11th-edition page text into rule texts, references and Stratagems.

    ``text``: the whole page as saved (see the module docstring for the forms read).
    ``source``: the manifest entry; gives ``source_id``, ``edition``, ``game_mode`` and the
    effective date (``version_date``). Never raises on bad input: unreadable lines are rejects.
    """
    scan = _scan(text)
    result = ParseResult()
    result.boilerplate.update(Counter(scan.boilerplate.values()))
    for number, raw, reason in scan.rejects:
        result.rejects.append(
            Reject(
                source_id=source.source_id,
                locator=f"line {number}",
                table_name=TABLE,
                raw_text=raw,
                reason=reason,
            )
        )
    references: set[tuple] = set()
    for block, duplicate in _kept_and_duplicate(scan.blocks):
        if duplicate:
            result.duplicates[TABLE] += 1
            if block.references:
                result.duplicates["rule_references"] += len(block.references)
            continue
        rule_key = slug(block.title)
        records: list[Record] = [
            source_rule_text(source, f"line {block.line}", rule_key, block.title, block.text(), block.section)
        ]
        for number, title, section in block.references:
            ref = RuleReference(
                source_id=source.source_id,
                locator=f"line {number}",
                rule_key=rule_key,
                referenced_title=title,
                referenced_section=section,
            )
            if ref.key() in references:
                result.duplicates["rule_references"] += 1
                continue
            references.add(ref.key())
            records.append(ref)
        records.extend(_table_gaps(block, rule_key, source))
        if block.card is not None:
            stratagem = _stratagem(block, source)
            if isinstance(stratagem, Reject):
                result.rejects.append(stratagem)
            else:
                records.extend(stratagem)
        result.records.extend(records)
    return result
