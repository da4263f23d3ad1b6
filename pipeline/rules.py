"""Which wording of a rule applies (edition, game mode, date), and what changed between editions.

The precedence is data (``pipeline/precedence.toml``); ``governing_text`` walks it and returns
the winner with the chain of every candidate and why it won, lost or was excluded.
"""

from __future__ import annotations

import datetime as dt
import difflib
import re
from dataclasses import dataclass
from typing import Any, Iterable, Literal

import duckdb

from pipeline.aliases import PartOf, part_of, rule_key_from_name
from pipeline.errors import NotFoundError
from pipeline.limits import check_name
from pipeline.precedence import kind_ranks
from pipeline.query import _rows, fetch_hint, rule_keys_for, rule_texts

Mode = Literal["matched", "combat-patrol"]


@dataclass(frozen=True)
class Step:
    """One candidate text in the precedence chain and what happened to it."""

    source_id: str
    kind: str
    game_mode: str | None
    effective_date: dt.date | None
    verdict: str  # "governs", "outranked: ...", "excluded: ..."


@dataclass(frozen=True)
class Ruling:
    """The governing wording of a rule and the chain walked to pick it."""

    rule_key: str
    title: str
    section: str | None
    edition: int
    game_mode: Mode
    on: dt.date | None
    text: str
    source_id: str
    locator: str
    chain: tuple[Step, ...]
    part_of: str | None = None  # why the wording is another rule's (alias table ``part_of``)
    language: str = "en"
    note: str | None = None  # a fallback taken: English for a missing language, a Combat Patrol wording
    erratum_id: str | None = None

    def as_dict(self) -> dict[str, Any]:
        return {
            "language": self.language, "note": self.note, "erratum_id": self.erratum_id,
            "rule_key": self.rule_key, "title": self.title, "section": self.section,
            "edition": self.edition, "game_mode": self.game_mode,
            "on": self.on.isoformat() if self.on else None, "source_id": self.source_id,
            "locator": self.locator, "text": self.text, "part_of": self.part_of,
            "chain": [
                {"source_id": s.source_id, "kind": s.kind, "game_mode": s.game_mode,
                 "effective_date": s.effective_date.isoformat() if s.effective_date else None,
                 "verdict": s.verdict}
                for s in self.chain
            ],
        }


def _order_key(row: dict, mode: Mode, ranks: dict[str, int], asked_key: str, canonical: str = "") -> tuple:
    date = row["effective_date"]
    return (
        0 if row["rule_key"] == asked_key else 1,
        0 if row["rule_key"] == canonical else 1,  # the rule itself before a sub-rule found by its number
        0 if row["game_mode"] == mode else 1,
        -ranks.get(row["kind"], 0),
        0 if date else 1,
        -(date.toordinal() if date else 0),
        0 if (row.get("locator") or "").endswith(": before") else 1,  # undated: the original before a later one
        row["source_id"],
    )


def _why(winner: dict, loser: dict, mode: Mode, ranks: dict[str, int], asked_key: str) -> str:
    if winner["rule_key"] == asked_key and loser["rule_key"] != asked_key:
        return f"outranked: the same rule under another name ({loser['title']}); the name asked for wins"
    if winner["game_mode"] == mode and loser["game_mode"] != mode:
        return f"outranked: {winner['source_id']} is for {mode} games only"
    rw, rl = ranks.get(winner["kind"], 0), ranks.get(loser["kind"], 0)
    if rw != rl:
        return f"outranked: {winner['kind']} ({rw}) over {loser['kind']} ({rl})"
    if winner["effective_date"] != loser["effective_date"]:
        return f"outranked: later effective date {winner['effective_date']}"
    return f"outranked: same rank and date; {winner['source_id']} sorts first"


def governing_text(
    con: duckdb.DuckDBPyConnection,
    name: str,
    edition: int | None = None,
    mode: Mode = "matched",
    on: dt.date | None = None,
    language: str = "en",
    other_mode: bool = False,
) -> Ruling:
    """The wording of rule ``name`` that applies in ``edition``, ``mode`` games, on date ``on``,
    in ``language`` (``de``; English, with a ``note`` saying so, where the rule has no wording in
    that language in the edition). With ``other_mode``, a rule whose only wording in the edition
    is another game mode's gives that wording with a ``note`` (and the fetch hint) instead of the
    error (the 10th edition's Lethal Hits on a seed build: the Combat Patrol page).

    ``edition`` None means the newest edition that has the rule; ``on`` None means any date.
    A rule with no wording of its own in ``edition`` that the alias table says is part of
    another rule there gives that rule's wording, and ``part_of`` says so: ``Hazardous test``
    in the 10th edition is the Hazardous ability (10th edition, Hazardous), in the 11th the
    hazard roll (06.03 Hazard Rolls).
    Raises ``NotFoundError`` when the rule is unknown (with close names) or when no wording of
    it applies (saying which candidates were excluded and why).
    """
    asked = name
    rows, part = _wordings(con, name, edition)
    if part is not None:
        name = part.rule_name
    kinds = dict(con.execute("SELECT source_id, kind FROM sources").fetchall())
    for r in rows:
        r["kind"] = kinds.get(r["source_id"], "")
    if edition is None:
        edition = max(r["edition"] or 0 for r in rows)
    ranks = kind_ranks()
    chain: list[Step] = []
    candidates: list[dict] = []
    note = None
    other_mode_rows: list[dict] = []
    in_edition = [r for r in rows if r["edition"] == edition]
    if language != "en" and not any(r["language"] == language for r in in_edition):
        note = f"no {language} wording of {asked!r} is stored in edition {edition}: the English wording"
        language = "en"
    for r in in_edition:
        if r["language"] != language:
            continue
        reason = None
        if r["game_mode"] not in (None, mode):
            reason = f"excluded: for {r['game_mode']} games only"
        elif on is not None and r["effective_date"] is not None and r["effective_date"] > on:
            reason = f"excluded: not in force until {r['effective_date']}"
        if reason:
            chain.append(Step(r["source_id"], r["kind"], r["game_mode"], r["effective_date"], reason))
            if other_mode and reason.startswith("excluded: for ") and not (
                    on is not None and r["effective_date"] is not None and r["effective_date"] > on):
                other_mode_rows.append(r)
        else:
            candidates.append(r)
    if not candidates and other_mode_rows:
        # the only wording in this edition is another game mode's (the 10th edition's Lethal Hits
        # on a build without the fetched core rules is the Combat Patrol page's): give it, and say so
        modes = sorted({r["game_mode"] for r in other_mode_rows})
        note = ((note + "; ") if note else "") + (
            f"no {mode} wording of {asked!r} is stored in edition {edition}: the {' and '.join(modes)} wording")
        fetch = fetch_hint(con, edition)  # only when a fetch-only source of the edition is not in the database
        if fetch:
            note += f"; {fetch}"
        candidates = other_mode_rows
        chain = [s for s in chain if not any(s.source_id == r["source_id"] for r in other_mode_rows)]
        mode = modes[0]  # type: ignore[assignment]
    if not candidates:
        editions = sorted({r["edition"] for r in rows if r["edition"]})
        detail = "; ".join(f"{s.source_id}: {s.verdict}" for s in chain) or (
            f"its wordings are in edition {' and '.join(str(e) for e in editions)}")
        hints = []
        other_modes = {r["game_mode"] for r in rows if r["edition"] == edition and r["game_mode"] not in (None, mode)}
        if other_modes:
            hints.append(f"try --mode {sorted(other_modes)[0]}")
        elif not chain:
            hints.append(f"try --edition {editions[-1]}")
        fetch = fetch_hint(con, edition)  # only when a fetch-only source of the edition is not in the database
        if fetch:
            hints.append(fetch)
        asked_as = repr(asked) if part is None else f"{asked!r} (part of {part.rule_name} in edition {edition})"
        raise NotFoundError(
            f"no wording of {asked_as} applies in edition {edition}, {mode} games"
            + (f", on {on}" if on else "") + f" ({detail})" + (f"; {'; '.join(hints)}" if hints else "")
        )
    try:
        asked_key = rule_key_from_name(name)
    except ValueError:
        asked_key = ""
    canonical = rule_keys_for(name)[0]
    candidates.sort(key=lambda r: _order_key(r, mode, ranks, asked_key, canonical))
    winner = candidates[0]
    ordered = [Step(winner["source_id"], winner["kind"], winner["game_mode"], winner["effective_date"], "governs")]
    ordered += [
        Step(r["source_id"], r["kind"], r["game_mode"], r["effective_date"], _why(winner, r, mode, ranks, asked_key))
        for r in candidates[1:]
    ]
    section = winner["section"]
    if section is None and edition == 11:
        # the section number is known from the alias table even when this source omits it
        numbers = [key for (key,) in con.execute(
            "SELECT alias_key FROM rule_aliases WHERE edition = 11 AND rule_key = ?", [rule_keys_for(name)[0]],
        ).fetchall() if re.fullmatch(r"[0-9]{2}(\.[0-9]{2})+", key)]
        section = min(numbers) if numbers else None
    return Ruling(
        language=language, note=note, erratum_id=winner.get("erratum_id"),
        rule_key=winner["rule_key"], title=winner["title"], section=section,
        edition=edition, game_mode=mode, on=on, text=winner["text"],
        source_id=winner["source_id"], locator=winner["locator"], chain=tuple(ordered + chain),
        part_of=None if part is None else (
            f"{asked!r} in edition {edition}: part of {part.rule_name}" + (f"; {part.note}" if part.note else "")
        ),
    )


def _wordings(con: duckdb.DuckDBPyConnection, name: str, edition: int | None) -> tuple[list[dict], PartOf | None]:
    """Every stored wording of ``name`` (all editions), or, when it has none in ``edition`` and
    the alias table says it is part of another rule there, that rule's wordings and the entry.
    Raises ``InputError`` for a name over ``MAX_NAME_LENGTH`` characters (before any alias match)."""
    check_name(name, "rule name")
    part = None if edition is None else part_of(name, edition)
    try:
        rows = rule_texts(con, name)
    except NotFoundError:
        if part is None:
            raise
        rows = []
    if part is None or any(r["edition"] == edition for r in rows):
        return rows, None
    return rule_texts(con, part.rule_name), part


_TOKEN = re.compile(r"\s+|[^\s]+")


@dataclass(frozen=True)
class RuleDiff:
    """Word-level differences between two rulings: ``ops`` are (tag, old words, new words)."""

    old: Ruling
    new: Ruling
    ops: tuple[tuple[str, str, str], ...]

    def marked(self) -> str:
        """The new text with ``[-removed-]`` and ``{+added+}`` marks (``mark_ops``)."""
        return mark_ops(self.ops)

    def as_dict(self) -> dict[str, Any]:
        return {
            "from": self.old.as_dict(), "to": self.new.as_dict(),
            "changes": [{"op": t, "from": a, "to": b} for t, a, b in self.ops if t != "equal"],
            "marked": self.marked(),
        }


def mark_ops(ops: Iterable[tuple[str, str, str]]) -> str:
    """The new text of ``word_diff`` opcodes with ``[-removed-]`` and ``{+added+}`` marks.

    >>> mark_ops(word_diff("a Critical Hit automatically wounds", "a Critical Hit can wound"))
    'a Critical Hit [-automatically-] {+can+} [-wounds-] {+wound+}'
    """
    out = []
    for tag, a, b in ops:
        if tag == "equal":
            out.append(a)
        else:
            if a.strip():
                out.append(f"[-{a.strip()}-]")
            if b.strip():
                out.append(f"{{+{b.strip()}+}}")
            if a.endswith(" ") or b.endswith(" "):
                out.append(" ")
    return re.sub(r"(\]|\})(\[|\{)", r"\1 \2", "".join(out))


def word_diff(old: str, new: str) -> tuple[tuple[str, str, str], ...]:
    """Word-level opcodes (difflib) between two texts; whitespace runs count as tokens.

    >>> [op for op in word_diff("a Critical Hit automatically wounds", "a Critical Hit can wound") if op[0] != "equal"]
    [('replace', 'automatically', 'can'), ('replace', 'wounds', 'wound')]
    """
    a, b = _TOKEN.findall(old), _TOKEN.findall(new)
    matcher = difflib.SequenceMatcher(a=a, b=b, autojunk=False)
    return tuple((tag, "".join(a[i1:i2]), "".join(b[j1:j2])) for tag, i1, i2, j1, j2 in matcher.get_opcodes())


def rule_diff(
    con: duckdb.DuckDBPyConnection, name: str, from_edition: int, to_edition: int,
    mode: Mode = "matched", on: dt.date | None = None,
) -> RuleDiff:
    """The governing wordings of ``name`` in two editions and their word-level differences."""
    old = governing_text(con, name, from_edition, mode, on)
    new = governing_text(con, name, to_edition, mode, on)
    return RuleDiff(old, new, word_diff(old.text, new.text))


def rule_sources(con: duckdb.DuckDBPyConnection) -> list[dict]:
    """Sources that hold rule texts, with their kind, game mode and date (for listings)."""
    return _rows(con.execute(
        "SELECT s.source_id, s.kind, s.game_mode, s.version_date, s.edition, count(*) AS rules "
        "FROM rule_texts r JOIN sources s USING (source_id) "
        "GROUP BY s.source_id, s.kind, s.game_mode, s.version_date, s.edition ORDER BY s.source_id"))


def rule_history(
    con: duckdb.DuckDBPyConnection, name: str, edition: int | None = None, mode: Mode = "matched",
    language: str = "en",
) -> tuple[Ruling, list[dict]]:
    """Every wording of a rule in one edition and language, from the original to the one in force.

    Returns the ruling in force (``governing_text``) and the wordings, oldest first: those derived
    as the wording before an erratum (undated), then by effective date (undated first); each row
    has the ``rule_texts`` columns, ``in_force`` (the governing one) and, for a wording an erratum
    gives, ``erratum`` (publication, header and change). Raises ``NotFoundError`` as
    ``governing_text`` does.
    """
    ruling = governing_text(con, name, edition, mode, None, language, other_mode=True)
    rows = [r for r in rule_texts(con, name, ruling.edition)
            if r["language"] == ruling.language and r["game_mode"] in (None, ruling.game_mode)]
    errata = {e["erratum_id"]: e for e in _rows(con.execute(
        "SELECT erratum_id, publication, heading, text FROM errata WHERE language = ?", [ruling.language]))}

    def order(r: dict) -> tuple:
        # a chain of errata on one wording: the original (": before"), each wording between
        # (", change i of k: after"), then the one in force, dated, among the other dated ones
        earlier = r["erratum_id"] is not None and r["locator"].endswith((": before", ": after"))
        step = re.search(r", change (\d+) of \d+: after$", r["locator"] or "")
        date = r["effective_date"]
        return (0 if earlier else 1, int(step.group(1)) if step else 0, date.toordinal() if date else 0,
                r["source_id"], r["locator"])

    out = []
    for r in sorted(rows, key=order):
        e = errata.get(r["erratum_id"]) if r["erratum_id"] else None
        out.append({**r, "in_force": r["source_id"] == ruling.source_id and r["locator"] == ruling.locator,
                    "erratum": None if e is None else f"{e['publication']}: {e['heading']}: {e['text']}"})
    return ruling, out


def errata_for(con: duckdb.DuckDBPyConnection, target_types: tuple[str, ...], keys: tuple[str, ...]) -> list[dict]:
    """The errata and FAQ entries (English) that target one of ``keys`` (``ErratumTarget.target_key``:
    a rule key, the slug of a datasheet's or stratagem's name) of the given target types, in
    document order: erratum_id, kind, publication, heading, text, derivation, derivation_note."""
    if not keys:
        return []
    return _rows(con.execute(
        f"""SELECT DISTINCT e.erratum_id, e.kind, e.publication, e.heading, e.text, e.derivation,
                   e.derivation_note, e.position
            FROM errata e JOIN erratum_targets t USING (erratum_id)
            WHERE e.language = 'en' AND t.target_type IN ({', '.join('?' * len(target_types))})
              AND t.target_key IN ({', '.join('?' * len(keys))})
            ORDER BY e.position""", [*target_types, *keys]))


def errata_for_rule(con: duckdb.DuckDBPyConnection, ruling: Ruling) -> list[dict]:
    """The errata and FAQ entries that target the rule of ``ruling``: a core rule by its key or
    one of its aliases, a stratagem, enhancement or ability by the slug of its title."""
    from pipeline.normalise.text import slug

    keys = {ruling.rule_key, *(k for (k,) in con.execute(
        "SELECT alias_key FROM rule_aliases WHERE rule_key = ?", [ruling.rule_key]).fetchall())}
    english = con.execute("SELECT DISTINCT title FROM rule_texts WHERE rule_key = ? AND language = 'en'",
                          [ruling.rule_key]).fetchall()
    names = {slug(t) for (t,) in english} | {ruling.rule_key}
    return (errata_for(con, ("ruleContainer",), tuple(sorted(keys)))
            + errata_for(con, ("stratagem", "enhancement", "armyRule", "detachment"), tuple(sorted(names))))


def changed_rules(
    con: duckdb.DuckDBPyConnection, from_edition: int, to_edition: int, mode: Mode = "matched",
) -> list[dict]:
    """Every core rule (section or core ability of a core-rules source, English) of either
    edition, with what happened between them: ``changed``, ``added``, ``removed`` or ``same``.

    Rules are joined across editions by canonical key (the alias table: a rule key or section
    number that is an alias counts as its rule). In each edition the wording is picked as
    ``governing_text`` picks it (game mode, then kind, then date; another game mode's wording
    when it is the only one), from one read of the rule texts. Each row: rule_key, title,
    section, status, from_source, to_source, changes (count of changed word runs). The
    word-level diff of one is ``rule_diff(con, rule_key, ...)``.
    """
    aliases = dict(con.execute("SELECT alias_key, rule_key FROM rule_aliases").fetchall())
    ranks = kind_ranks()
    rows = _rows(con.execute(
        """SELECT r.rule_key, r.title, r.section, r.edition, r.game_mode, r.effective_date, r.source_id,
                  r.locator, r.text, s.kind
           FROM rule_texts r JOIN sources s USING (source_id)
           WHERE r.language = 'en' AND r.edition IN (?, ?)""", [from_edition, to_edition]))
    by_key: dict[tuple[str, int], list[dict]] = {}
    wanted: set[str] = set()
    for r in rows:
        key = aliases.get(r["rule_key"]) or (aliases.get(r["section"]) if r["section"] else None) or r["rule_key"]
        by_key.setdefault((key, r["edition"]), []).append(r)
        if r["kind"] == "core-rules" and (r["section"] is not None or r["edition"] != 11):
            wanted.add(key)

    def pick(key: str, edition: int) -> dict | None:
        found = by_key.get((key, edition), [])
        same_mode = [r for r in found if r["game_mode"] in (None, mode)]
        candidates = same_mode or found
        if not candidates:
            return None
        return min(candidates, key=lambda r: _order_key(r, mode, ranks, key, key))

    out = []
    for key in sorted(wanted):
        old, new = pick(key, from_edition), pick(key, to_edition)
        if old is None and new is None:
            continue
        if old is None or new is None:
            status, changes = ("added" if old is None else "removed"), None
        else:
            changes = sum(1 for tag, _, _ in word_diff(old["text"], new["text"]) if tag != "equal")
            status = "changed" if changes else "same"
        shown = new or old
        out.append({"rule_key": key, "title": shown["title"], "section": new["section"] if new else None,
                    "status": status, "from_source": old["source_id"] if old else None,
                    "to_source": new["source_id"] if new else None, "changes": changes})
    return out


def unit_errata(con: duckdb.DuckDBPyConnection, name: str) -> list[dict]:
    """The errata and FAQ entries (English, document order) that target the datasheet named
    ``name`` (compared by slug: the errata file's ids are not the faction files')."""
    from pipeline.normalise.text import slug

    return errata_for(con, ("datasheet",), (slug(name),))
