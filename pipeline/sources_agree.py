"""How the sources agree (``wh40k sources-agree``): per edition, pair of sources and field, the
rows both gave, the fields compared, agreeing and disagreeing, and the disagreements listed.

The counts are what the build's merge compared (``source_agreement``, written by
``pipeline.merge.AgreementTally``): each later source's row against the row kept from the first
source in precedence that gave it. The disagreements are the ``conflicts`` rows.
"""

from __future__ import annotations

import duckdb

from pipeline.errors import NotFoundError
from pipeline.query import Rows, _suggest

#: The per-pair summary: datasheets both sources gave, and the fields compared over every table.
_PAIRS_SQL = """
    SELECT edition, source_id_a, source_id_b,
           coalesce(max(rows) FILTER (WHERE table_name = 'datasheets'), 0) AS datasheets,
           sum(compared) AS fields_compared, sum(agreed) AS agreed, sum(disagreed) AS disagreed,
           sum(only_a) AS only_a, sum(only_b) AS only_b,
           round(100.0 * sum(agreed) / nullif(sum(compared), 0), 2) AS agreed_percent
    FROM source_agreement
    WHERE (? IS NULL OR edition = ?)
    GROUP BY edition, source_id_a, source_id_b
    ORDER BY edition NULLS LAST, source_id_a, source_id_b
"""

_FIELDS_SQL = """
    SELECT edition, source_id_a, source_id_b, table_name, field, rows, compared, agreed, disagreed,
           only_a, only_b, round(100.0 * agreed / nullif(compared, 0), 2) AS agreed_percent
    FROM source_agreement
    WHERE (? IS NULL OR edition = ?) AND (compared > 0 OR only_a > 0 OR only_b > 0)
    ORDER BY edition NULLS LAST, source_id_a, source_id_b, disagreed DESC, table_name, field
"""


def _rows(cursor: duckdb.DuckDBPyConnection) -> Rows:
    names = [d[0] for d in cursor.description or []]
    return Rows((dict(zip(names, row)) for row in cursor.fetchall()), columns=names)


def agreement_by_pair(con: duckdb.DuckDBPyConnection, edition: int | None = None) -> Rows:
    """One row per (edition, source a, source b): ``datasheets`` both gave, ``fields_compared``
    (fields of rows both gave, each given a value by both), ``agreed``, ``disagreed``,
    ``only_a`` / ``only_b`` (a value from one source alone) and ``agreed_percent`` (of those
    compared, rounded to 0.01; None when none were). ``edition`` None: every edition (a pair of
    sources of two editions, which share a table such as ``factions``, has edition None)."""
    return _rows(con.execute(_PAIRS_SQL, [edition, edition]))


def agreement_by_field(con: duckdb.DuckDBPyConnection, edition: int | None = None) -> Rows:
    """One row per (edition, source a, source b, table, field) that either source gave a value
    to: ``rows`` both gave, ``compared``, ``agreed``, ``disagreed``, ``only_a``, ``only_b``,
    ``agreed_percent``; the most disagreeing first within each pair."""
    return _rows(con.execute(_FIELDS_SQL, [edition, edition]))


def disagreements(con: duckdb.DuckDBPyConnection, field: str, edition: int | None = None) -> Rows:
    """The ``conflicts`` rows of ``field`` (``table.field``, e.g. ``weapon_profiles.skill``, or a
    field name alone for every table that has it), with the edition of the sources, ordered by
    edition, table and entity.

    Raises ``NotFoundError`` for a field that no pair of sources was compared on, with close
    names (the fields compared are those of ``source_agreement``).
    """
    table, _, name = field.rpartition(".")
    known = {(t, f) for t, f in con.execute("SELECT DISTINCT table_name, field FROM source_agreement").fetchall()}
    if not any(f == name and (not table or t == table) for t, f in known):
        names = sorted({f"{t}.{f}" for t, f in known})
        close = _suggest(field, names) or _suggest(name, sorted({f for _, f in known}))
        raise NotFoundError(
            f"no field {field!r} was compared between sources"
            + (f"; did you mean: {close}?" if close else "")
            + "; list the fields with `wh40k sources-agree` (as table.field, e.g. weapon_profiles.skill)")
    sql = """
        SELECT s.edition, c.table_name, c.field, c.entity_key, c.value_a, c.source_id_a, c.value_b,
               c.source_id_b, c.chosen_source_id, c.reason
        FROM conflicts c
        JOIN sources s ON s.source_id = c.source_id_a
        JOIN sources t ON t.source_id = c.source_id_b
        WHERE c.field = ? AND (? = '' OR c.table_name = ?)
          AND (? IS NULL OR (s.edition = ? AND t.edition = ?))
        ORDER BY s.edition, c.table_name, c.entity_key, c.source_id_a, c.source_id_b
    """
    return _rows(con.execute(sql, [name, table, table, edition, edition, edition]))
