"""Full-text search over the wordings of the database, in plain SQL (no DuckDB extension).

The documents are the rule texts (every language), datasheet abilities, stratagems,
enhancements and datasheets (by name). A document matches when it contains every word asked
for (case folded); the score adds, per word, its occurrences in the text, weighted by how rare
the word is among the documents (an inverse document frequency), and a bonus when the word is in
the name; shorter texts rank first among equals. The passage shown is the line of the text around
the first word found.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

import duckdb

from pipeline.errors import InputError
from pipeline.limits import check_name

#: The searchable documents: kind, name, edition, language, source, locator and text of each.
DOCUMENTS = """
    SELECT 'rule' AS kind, r.title AS name, r.edition, r.language, r.source_id, r.locator, r.text
    FROM rule_texts r
    UNION ALL
    SELECT 'ability', a.name, s.edition, 'en', a.source_id, a.locator, a.text
    FROM abilities a JOIN sources s USING (source_id) WHERE a.text IS NOT NULL
    UNION ALL
    SELECT 'stratagem', st.name, st.edition, 'en', st.source_id, st.locator,
           concat_ws(' ', st."when", st.target, st.effect, st.restrictions)
    FROM stratagems st
    UNION ALL
    SELECT 'enhancement', e.name, s.edition, 'en', e.source_id, e.locator, e.text
    FROM enhancements e JOIN sources s USING (source_id)
    UNION ALL
    SELECT 'datasheet', d.name, s.edition, 'en', d.source_id, d.locator, d.name
    FROM datasheets d JOIN sources s USING (source_id)
"""


@dataclass(frozen=True)
class Hit:
    """One document found: what it is, its name, edition, language, source, locator, score and
    the passage (the line around the first word found)."""

    kind: str
    name: str
    edition: int | None
    language: str
    source_id: str
    locator: str
    score: float
    passage: str


def words_of(text: str) -> list[str]:
    """The words of a search text, case folded, each at least 2 characters (at most 10 words).

    >>> words_of("Lethal  HITS, wound!")
    ['lethal', 'hits', 'wound']
    """
    return [w for w in re.findall(r"\w[\w'’-]*", text.casefold()) if len(w) >= 2][:10]


def passage(text: str, words: list[str], width: int = 200) -> str:
    """The line of ``text`` with the first of ``words``, cut to about ``width`` characters around it.

    >>> passage("Intro line.\\nEach time a critical hit is scored, it wounds.", ["critical"])
    'Each time a critical hit is scored, it wounds.'
    """
    lowered = text.casefold()
    at = min((i for w in words if (i := lowered.find(w)) >= 0), default=0)
    start = text.rfind("\n", 0, at) + 1
    end = text.find("\n", at)
    line = text[start:end if end >= 0 else len(text)]
    if len(line) <= width:
        return line.strip()
    offset = max(0, at - start - width // 3)
    return ("..." if offset else "") + line[offset:offset + width].strip() + "..."


def search(
    con: duckdb.DuckDBPyConnection, text: str, edition: int | None = None, language: str | None = None,
    limit: int = 20,
) -> list[Hit]:
    """The documents that contain every word of ``text``, best first (at most ``limit``).

    ``edition`` and ``language`` (``de``) narrow the documents; without ``language`` every
    language is searched. Raises ``InputError`` for a text with no word of two characters or more
    and for one over the name length limit.
    """
    check_name(text, "search text")
    words = words_of(text)
    if not words:
        raise InputError(f"search text {text!r} has no word of two letters or more; give a word such as 'lethal'")
    # strpos: DuckDB's and PostgreSQL's; the SQLite connection defines it (pipeline.sql_connection)
    where = " AND ".join(["strpos(lower(text), ?) > 0"] * len(words))
    count = " + ".join(
        [f"(length(lower(text)) - length(replace(lower(text), ?, ''))) / {len(w)} * ln(1 + CAST(n AS DOUBLE PRECISION) / (1 + df{i}))"
         for i, w in enumerate(words)])
    bonus = " + ".join([f"CASE WHEN strpos(lower(name), ?) > 0 THEN 3 * ln(1 + CAST(n AS DOUBLE PRECISION) / (1 + df{i})) ELSE 0 END"
                        for i in range(len(words))])
    dfs = ", ".join(f"count(*) FILTER (WHERE strpos(lower(text), ?) > 0) AS df{i}" for i in range(len(words)))
    sql = f"""
        WITH docs AS ({DOCUMENTS}),
        scoped AS (SELECT * FROM docs WHERE (? IS NULL OR edition = ?) AND (? IS NULL OR language = ?)),
        stats AS (SELECT count(*) AS n, {dfs} FROM scoped)
        SELECT kind, name, edition, language, source_id, locator, text,
               ({count}) + ({bonus}) AS score
        FROM scoped, stats
        WHERE {where}
        ORDER BY score DESC, length(text), kind, name, source_id, locator
        LIMIT ?
    """
    params = [edition, edition, language, language, *words, *words, *words, *words, limit]
    rows = con.execute(sql, params).fetchall()
    return [Hit(kind, name, ed, lang, sid, loc, round(float(score), 3), passage(body, words))
            for kind, name, ed, lang, sid, loc, body, score in rows]
