"""A reader for pipe-separated values as Wahapedia exports them (pure: text in, rows out).

The format: ``|`` between fields, no quoting, a header line naming the columns, and (in every
Wahapedia export) a ``|`` closing every line, header included. The reader

- strips a UTF-8 byte-order mark (``\\ufeff``) before the header;
- accepts CRLF or LF line ends (a CR that ends a physical line is dropped);
- drops the phantom empty column after the closing ``|`` (only when the header has one);
- keeps every value as text (ids keep their leading zeros) exactly as printed;
- splits records at the row terminator, the closing ``|`` followed by a line break, checking the
  column count: a field may hold a raw line break (the record then spans several physical
  lines and the break is kept in the value), but a line break is never a record end by itself;
- returns rows with a wrong column count as ``BadRow`` with the line number and the reason,
  never guessing where the missing or extra field is.

Line numbers are 1-based physical line numbers of the text, the header being line 1; a record
spanning several lines is numbered by its first line.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import NamedTuple

BOM = "\ufeff"


class Row(NamedTuple):
    """One record: its first physical ``line``, ``values`` by column, and the ``raw`` text.

    A named tuple: immutable, and quicker to build than a frozen dataclass (an export has some
    150,000 rows).
    """

    line: int
    values: dict[str, str]
    raw: str


@dataclass(frozen=True, slots=True)
class BadRow:
    """A record that could not be split into the header's columns."""

    line: int
    raw: str
    reason: str


@dataclass
class Table:
    """A whole table: ``columns`` from the header, good ``rows`` and ``bad_rows`` in file order.

    ``input_rows`` counts the logical records of the file (good and bad), not the header.
    """

    name: str
    columns: tuple[str, ...]
    rows: list[Row] = field(default_factory=list)
    bad_rows: list[BadRow] = field(default_factory=list)

    @property
    def input_rows(self) -> int:
        return len(self.rows) + len(self.bad_rows)


@dataclass
class Records:
    """A table split into records, before any value is read: the ``columns`` of the header, and
    for each good record its first physical line (``lines``) and its raw text (``raws``, the
    fields still joined by ``|``), in file order; ``bad_rows`` as in ``Table``."""

    columns: tuple[str, ...]
    lines: list[int] = field(default_factory=list)
    raws: list[str] = field(default_factory=list)
    bad_rows: list[BadRow] = field(default_factory=list)

    @property
    def input_rows(self) -> int:
        return len(self.raws) + len(self.bad_rows)

    def column_lists(self) -> dict[str, list[str]]:
        """The values of each column, as ``Table.rows`` would give them, one list per column.

        >>> split_records("a|b|\\n1|x|\\n2|y|\\n").column_lists()
        {'a': ['1', '2'], 'b': ['x', 'y']}
        """
        n = len(self.columns)
        cut = [raw.split("|", n)[:n] for raw in self.raws]
        return {c: list(values) for c, values in zip(self.columns, zip(*cut))} if cut else {c: [] for c in self.columns}


def read_table(text: str, name: str = "table") -> Table:
    """Read pipe-separated text into a ``Table``.

    ``name`` is only used in messages. An empty text gives a table with no columns and no rows.

    >>> t = read_table("\\ufeffid|name|faction_id|\\r\\n000000001|Captain|SM|\\r\\n")
    >>> t.columns, [r.values for r in t.rows]
    (('id', 'name', 'faction_id'), [{'id': '000000001', 'name': 'Captain', 'faction_id': 'SM'}])
    >>> t = read_table("id|legend|\\n7|line one\\nline two|\\n8|x|y|\\n")
    >>> [(r.line, r.values["legend"]) for r in t.rows], [(b.line, b.reason) for b in t.bad_rows]
    ([(2, 'line one\\nline two')], [(4, 'wrong column count: 3 fields, the header has 2')])
    """
    records = split_records(text)
    columns = records.columns
    new_row = tuple.__new__  # a Row without the call of its generated __new__ (150,000 rows)
    # zip stops at the last column: the empty text after a closing "|" is dropped.
    rows = [new_row(Row, (first, dict(zip(columns, raw.split("|"))), raw))
            for first, raw in zip(records.lines, records.raws)]
    return Table(name=name, columns=columns, rows=rows, bad_rows=records.bad_rows)


def split_records(text: str) -> Records:
    """Split pipe-separated text into its header's columns and its records (``Records``), as
    ``read_table`` reads them, without reading the values of each record into a dict.

    >>> r = split_records("id|legend|\\n7|line one\\nline two|\\n8|x|y|\\n")
    >>> r.columns, r.lines, r.raws, [b.line for b in r.bad_rows]
    (('id', 'legend'), [2], ['7|line one\\nline two|'], [4])
    """
    if text.startswith(BOM):
        text = text[1:]
    lines = text.split("\n")
    if "\r" in text:  # a CR before the LF belongs to the line terminator, not to the value
        lines = [line[:-1] if line.endswith("\r") else line for line in lines]
    if lines and lines[-1] == "":
        lines.pop()  # the final line break ends the last record, it does not start one
    if not lines:
        return Records(columns=())
    header = lines[0]
    trailing = header.endswith("|")
    names = header.split("|")
    if trailing:
        names.pop()
    columns = tuple(n.strip() for n in names)
    n_cols = len(columns)
    pipes = n_cols if trailing else n_cols - 1
    records = Records(columns=columns)

    def why(buf: str) -> str:
        count = buf.count("|")
        if trailing and count == pipes:
            return f"text after the closing '|': {buf.rsplit('|', 1)[1][:40]!r}"
        fields = count if trailing else count + 1
        return f"wrong column count: {fields} fields, the header has {n_cols}"

    i, total = 1, len(lines)
    firsts, raws, bad_rows = records.lines, records.raws, records.bad_rows
    while i < total:
        first = i + 1  # 1-based physical line number
        buf = lines[i]
        i += 1
        # the fast path: one physical line, one record
        if buf.count("|") == pipes and (not trailing or buf.endswith("|")):
            firsts.append(first)
            raws.append(buf)
            continue
        if buf.strip() == "":
            bad_rows.append(BadRow(first, buf, "blank line between records"))
            continue
        # Too few separators so far: the record may hold a raw line break. Join the following
        # lines while the count stays within the header's, and stop at the row terminator.
        # Each line is counted once and the parts joined once (linear in the record's length).
        parts, count, closed = [buf], buf.count("|"), False
        while count < pipes and i < total:
            nxt = lines[i]
            more = nxt.count("|")
            if count + more > pipes:
                break  # joining would overshoot: this record is short, the next line is its own
            parts.append(nxt)
            count += more
            i += 1
            closed = count == pipes and (not trailing or nxt.endswith("|"))
            if closed:
                break
        buf = "\n".join(parts)
        if closed:
            firsts.append(first)
            raws.append(buf)
        else:
            bad_rows.append(BadRow(first, buf, why(buf)))
    return records
