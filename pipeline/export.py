"""Reading a whole built database out: a checksum of every table, exports, the data dictionary.

``table_checksums`` gives each table's row count and a checksum of its rows that does not
depend on the backend (DuckDB, SQLite, PostgreSQL) or on the order of the rows: the same
database built into each gives the same figures. ``export_database`` writes every table to a
folder as Parquet, CSV or JSON Lines, with the data dictionary (``data_dictionary``: each table
and column with its meaning, from the record declarations of ``schemas.records``) beside it.
"""

from __future__ import annotations

import csv
import datetime as dt
import hashlib
import json
from pathlib import Path
from typing import Any, Iterable

from pipeline.errors import InputError

#: The formats of ``export_database``, with the file extension of each.
FORMATS = {"parquet": "parquet", "csv": "csv", "jsonl": "jsonl"}


def canonical(value: Any) -> str:
    """A value as one backend-independent text: NULL, booleans, dates, numbers, text.

    >>> [canonical(v) for v in (None, True, 3, "3", dt.date(2024, 6, 1), 1.5)]
    ['\\\\N', 't', '3', "'3'", '2024-06-01', '1.5']
    """
    if value is None:
        return "\\N"
    if isinstance(value, bool):
        return "t" if value else "f"
    if isinstance(value, (int, float)):
        return repr(value)
    if isinstance(value, dt.date):
        return value.isoformat()
    if isinstance(value, (list, tuple)):
        return "[" + ",".join(canonical(v) for v in value) + "]"
    return "'" + str(value).replace("'", "''") + "'"


def rows_checksum(rows: Iterable[Iterable[Any]]) -> tuple[int, str]:
    """(row count, the first 16 hex digits of the SHA-256 of the rows' ``canonical`` texts, sorted).

    >>> rows_checksum([(1, "a"), (2, None)]) == rows_checksum([(2, None), (1, "a")])
    True
    >>> rows_checksum([])
    (0, 'e3b0c44298fc1c14')
    """
    lines = sorted("\t".join(canonical(v) for v in row) for row in rows)
    digest = hashlib.sha256("\n".join(lines).encode("utf-8")).hexdigest()[:16]
    return len(lines), digest


def table_checksums(con: Any) -> dict[str, tuple[int, str]]:
    """Each declared table of the database (a connection from ``open_database``, any backend):
    ``{table: (rows, checksum)}`` (``rows_checksum`` over its columns in declared order)."""
    from schemas.catalog import declared_tables

    out = {}
    for table, columns in declared_tables().items():
        names = ", ".join(f'"{c.name}"' for c in columns)
        out[table] = rows_checksum(con.execute(f'SELECT {names} FROM "{table}"').fetchall())
    return out


#: Meanings of the columns many tables share, for a column whose own declaration says nothing.
SHARED_MEANINGS = {
    "source_id": "the source (a row of `sources`) this row was read from",
    "locator": "where in that source the row was read (`line 120`, `row 000000001`, `section 24.23`)",
    "datasheet_id": "the datasheet (a row of `datasheets`): `<edition>e/<faction>/<unit>`",
    "faction_id": "the faction (a row of `factions`)",
    "edition": "the edition of the game: 10 or 11",
    "game_mode": "`matched` or `combat-patrol`; null: every game mode",
    "name": "the name as printed",
    "text": "the wording as printed (HTML removed)",
    "line": "the row's number in print order, from 1",
    "position": "the order in which the source prints it, from 0",
    "language": "the language of the wording (`en`, `de`, ...)",
    "is_melee": "true for a melee weapon, false for a ranged one",
    "weapon_name": "the weapon's name as printed",
    "profile_name": "the profile of a weapon with several (`supercharge`); empty for one profile",
    "rule_key": "the rule's key: its name folded (`lethal-hits`)",
    "rule_name": "the rule's name as printed",
    "table_name": "the name of a table of this database",
    "model_name": "the model's name as printed",
    "erratum_id": "the erratum (a row of `errata`)",
    "parameter": "the ability's parameter as printed (`D3` of `Deadly Demise D3`); null: none",
    "raw_text": "the text as printed, before it was read",
    # a model's characteristics and a weapon's, as the datasheet prints them
    "move_inches": "Move (M) in inches; null when not a number (`move_text`)",
    "move_text": "Move (M) as printed (`6\"`, `20+\"`, `-`)",
    "toughness": "Toughness (T)",
    "save": "Save (Sv): the roll needed, 3 for `3+`",
    "invulnerable_save": "the invulnerable save: the roll needed, 4 for `4++`; null: none",
    "wounds": "Wounds (W)",
    "leadership": "Leadership (Ld): the roll needed, 6 for `6+`",
    "objective_control": "Objective Control (OC)",
    "strength": "Strength (S); null when not a number (see `data_flags`)",
    "armour_penetration": "Armour Penetration (AP): 0 or negative (`-1` for `-1`)",
    "cost_points": "the cost in points",
    "legend": "the source's flavour text, as printed",
    "title": "the title as printed",
    "version": "the source's version as it states it",
    "note": "a note on the row, in words",
    "sha256": "the SHA-256 of the file's bytes, in hex",
    "bytes": "the file's size in bytes",
    "reason": "why, in words",
    "field": "a column (or printed field) of the row",
    "entity_key": "the key of the row it is about, `|`-joined (`10e/adepta-sororitas/canoness|Blessed halberd|melee|`)",
    "keyword": "the keyword as printed, upper-cased (`INFANTRY`)",
    "is_faction_keyword": "true for a faction keyword (`ADEPTA SORORITAS`), false for a keyword",
    "kind": "the kind of the row (see the table's description)",
    "is_default": "true when the source marks it as the default choice",
    "detachment": "the detachment's name as printed",
    "detachment_id": "the detachment (a row of `detachments`)",
    "stratagem_id": "the Stratagem (a row of `stratagems`)",
    "enhancement_id": "the Enhancement (a row of `enhancements`)",
    "detachment_ability_id": "the detachment ability (a row of `detachment_abilities`)",
    "effective_date": "the date from which the wording applies; null: undated",
    "version_date": "the date of the source's version",
    "publisher": "who publishes the source",
    "origin": "where the snapshot came from (a URL, a repository and commit)",
    "url": "the URL `wh40k fetch` downloads it from; null: kept in git only",
    "min_models": "the fewest models of the line",
    "max_models": "the most models of the line",
    "model_count": "the number of models the row is for",
    "equipment": "the wargear, as printed",
    "description": "the row's text as printed",
    "when": "the Stratagem's WHEN section, as printed",
    "target": "the Stratagem's TARGET section, as printed",
    "effect": "the Stratagem's EFFECT section, as printed",
    "restrictions": "the Stratagem's RESTRICTIONS section, as printed; null: none",
    "cp_cost": "the Command Points it costs",
    "role": "the battlefield role the source prints (`Battleline`, `Character`); null: none",
    "external_id": "the source's own id of the datasheet",
    "alias_key": "another name of the rule (or its section number), folded",
    "type": "the kind of publication, as the source names it",
    "ability_kind": "the kind of the ability that gives it (core, faction, datasheet, wargear)",
    "ability_name": "the name of the ability that gives it",
    "leader_datasheet_id": "the Leader's datasheet (a row of `datasheets`)",
    "bodyguard_datasheet_id": "the datasheet of the unit it can lead; null when only its name is printed",
    "bodyguard_name": "the name of the unit it can lead, as printed",
    "objective_id": "the source's id of the secondary objective",
    "group": "the group the source lists it under",
    "publication_id": "the publication (a row of `publications`)",
    "errata_url": "the URL of the publication's errata document",
    "referenced_title": "the title of the rule it refers to (SEE ALSO), as printed",
    "referenced_section": "the section number of the rule it refers to; null: none printed",
    "part_of_rule_key": "the rule whose wording holds this one (a `rule_key`)",
    "value_a": "the value of the source kept (`source_id_a`)",
    "value_b": "the other source's value",
    "source_id_a": "the source kept, first in precedence",
    "source_id_b": "the other source",
    "chosen_source_id": "the source whose value the database holds",
    "input_rows": "the rows the source gave the stage (= loaded + duplicates + rejected)",
    "loaded": "the rows loaded",
    "duplicates": "the rows collapsed into an identical one (or merged into another source's)",
    "rejected": "the rows rejected (each a row of `rejects`)",
    "target_type": "what the erratum changes: a rule, a Stratagem, a datasheet, ...",
    "target_id": "the id of what the erratum changes",
    "target_name": "the name of what the erratum changes, as printed",
}

#: The four columns of a dice field (``schemas.types.DiceExpr``), by suffix.
_DICE_MEANINGS = {
    "text": "as printed, canonical (`3`, `D6`, `2D6+1`)",
    "dice_count": "the number of dice (2 of `2D6+1`); 0 for a fixed value",
    "dice_sides": "the faces of each die (6 of `2D6+1`); 0 for a fixed value",
    "modifier": "the number added (1 of `2D6+1`; 3 of a fixed `3`)",
}


def _field_comments(record: type) -> dict[str, str]:
    """The ``# comment`` after each field of a record class's declaration, by field name."""
    import inspect
    import io
    import tokenize

    comments: dict[str, str] = {}
    try:
        source = inspect.getsource(record)
    except (OSError, TypeError):
        return comments
    line_field: dict[int, str] = {}
    for number, text in enumerate(source.splitlines(), start=1):
        stripped = text.strip()
        if text.startswith("    ") and not text.startswith("     ") and ":" in stripped:
            name = stripped.split(":", 1)[0]
            if name.isidentifier():
                line_field[number] = name
    for token in tokenize.generate_tokens(io.StringIO(source).readline):
        if token.type == tokenize.COMMENT and token.start[0] in line_field:
            comments[line_field[token.start[0]]] = token.string.lstrip("#").strip()
    return comments


def _docstring_mention(doc: str, field: str) -> str | None:
    """The first sentence of a docstring that names ``field`` in double backquotes, or None.

    >>> _docstring_mention("A unit. ``starting_strength`` is the model count stated. Other.", "starting_strength")
    '``starting_strength`` is the model count stated.'
    """
    import re

    flat = " ".join(doc.split())
    for sentence in re.split(r"(?<=[.;])\s+(?=[`A-Z(])", flat):
        if f"``{field}``" in sentence:
            return sentence
    return None


def _meaning_of(field: str, comments: dict[str, str], doc: str) -> tuple[str, str]:
    """(meaning, where it comes from: ``comment``, ``docstring``, ``shared``, or ``none``)."""
    if field in comments:
        return comments[field], "comment"
    mention = _docstring_mention(doc, field)
    if mention:
        return mention.replace("``", "`"), "docstring"
    if field in SHARED_MEANINGS:
        return SHARED_MEANINGS[field], "shared"
    return "", "none"


def data_dictionary() -> list[dict[str, Any]]:
    """Every table with its meaning and its columns, from the record declarations of ``schemas.records``.

    One dict per table, in load order: ``table``, ``record`` (the class), ``description`` (the
    class docstring; a line naming the record when it has none), ``primary_key`` (column names), ``columns``: one dict per
    column with ``name``, ``type`` (DuckDB's name), ``nullable``, ``primary_key``,
    ``description`` (the field's ``# comment`` in the declaration, else the docstring's
    sentence that names it, else the meaning of a column many tables share; the four columns
    of a dice field say which part they are) and ``described_by`` (``comment``, ``docstring``,
    ``shared``, ``dice`` or ``none``).

    >>> tables = {t["table"]: t for t in data_dictionary()}
    >>> [c["description"] for c in tables["sources"]["columns"] if c["name"] == "file"]
    ['path relative to the raw directory']
    >>> tables["weapon_profiles"]["primary_key"][:2], len(tables) == len({t for t in tables})
    (['datasheet_id', 'weapon_name'], True)
    """
    import inspect

    from schemas.catalog import column_specs, unwrap
    from schemas.records import ALL_RECORDS
    from schemas.types import DiceExpr

    out = []
    for record in ALL_RECORDS:
        own = record.__dict__.get("__doc__")  # not a base's (Provenanced's) docstring
        doc = inspect.cleandoc(own) if own else f"{record.__name__} records, one per row, as the sources print them."
        comments: dict[str, str] = {}
        for klass in reversed(record.__mro__):
            if isinstance(klass, type) and klass.__module__ == record.__module__:
                comments.update(_field_comments(klass))
        dice = {name for name, f in record.model_fields.items() if unwrap(f.annotation)[0] is DiceExpr}
        columns = []
        for spec in column_specs(record):
            field, part = spec.name, None
            for name in dice:
                if spec.name.startswith(name + "_") and spec.name[len(name) + 1:] in _DICE_MEANINGS:
                    field, part = name, spec.name[len(name) + 1:]
            meaning, by = _meaning_of(field, comments, doc)
            if part is not None:
                meaning, by = (f"{field} ({meaning}): " if meaning else f"{field}: ") + _DICE_MEANINGS[part], "dice"
            columns.append({"name": spec.name, "type": spec.sql_type, "nullable": spec.nullable,
                            "primary_key": spec.primary_key, "description": meaning, "described_by": by})
        out.append({"table": record.__table__, "record": record.__name__, "description": doc,
                    "primary_key": list(record.__key__), "columns": columns})
    return out


def dictionary_markdown(tables: list[dict[str, Any]]) -> str:
    """The data dictionary as Markdown: a heading, the description and a column table per table.

    >>> print(dictionary_markdown([{"table": "t", "record": "T", "description": "One row.", "primary_key": ["a"],
    ...     "columns": [{"name": "a", "type": "VARCHAR", "nullable": False, "primary_key": True,
    ...                  "description": "the key | id", "described_by": "comment"}]}]))
    # Data dictionary
    <BLANKLINE>
    ## `t`
    <BLANKLINE>
    One row.
    <BLANKLINE>
    Record `T`; primary key: `a`.
    <BLANKLINE>
    | column | type | null | meaning |
    |---|---|---|---|
    | `a` | VARCHAR | no (key) | the key \\| id |
    <BLANKLINE>
    """
    lines = ["# Data dictionary", ""]
    for t in tables:
        lines += [f"## `{t['table']}`", ""]
        if t["description"]:
            lines += [t["description"], ""]
        lines += [f"Record `{t['record']}`; primary key: " + ", ".join(f"`{k}`" for k in t["primary_key"]) + ".", ""]
        lines += ["| column | type | null | meaning |", "|---|---|---|---|"]
        for c in t["columns"]:
            null = "no (key)" if c["primary_key"] else ("yes" if c["nullable"] else "no")
            meaning = " ".join(c["description"].split()).replace("|", "\\|")
            lines.append(f"| `{c['name']}` | {c['type']} | {null} | {meaning} |")
        lines.append("")
    return "\n".join(lines)


#: The data dictionary's files beside an export.
DICTIONARY_FILES = ("data_dictionary.json", "data_dictionary.md")


def export_database(con: Any, folder: Path, fmt: str, progress: Any = None) -> dict[str, int]:
    """Write every declared table of the database (a connection from ``open_database``, any
    backend) into ``folder`` (created) as ``<table>.<fmt>``, with the data dictionary beside
    them (``data_dictionary.json``, ``data_dictionary.md``); return rows per table.

    ``fmt``: ``parquet`` (typed as declared, written by pyarrow), ``csv`` (a header row; NULL
    is an empty field, booleans ``true``/``false``, dates ISO), ``jsonl`` (one JSON object per
    line). ``progress``: called with each table's name as it is written (None: nothing).
    Raises ``InputError`` for another format, or when ``folder`` is a file or cannot be
    written.
    """
    if fmt not in FORMATS:
        raise InputError(f"--format {fmt}: not an export format; give one of {', '.join(FORMATS)}")
    if folder.exists() and not folder.is_dir():
        raise InputError(f"{folder} is a file; give the export a folder (it is created)")
    try:
        folder.mkdir(parents=True, exist_ok=True)
    except OSError as exc:
        raise InputError(f"cannot create the folder {folder}: {exc.strerror}; choose another folder") from None
    from schemas.catalog import declared_tables

    rows_per_table: dict[str, int] = {}
    try:
        for table, columns in declared_tables().items():
            if progress is not None:
                progress(table)
            names = [c.name for c in columns]
            quoted = ", ".join(f'"{n}"' for n in names)
            rows = con.execute(f'SELECT {quoted} FROM "{table}"').fetchall()
            path = folder / f"{table}.{FORMATS[fmt]}"
            _WRITERS[fmt](path, names, [c.sql_type for c in columns], rows)
            rows_per_table[table] = len(rows)
        tables = data_dictionary()
        (folder / DICTIONARY_FILES[0]).write_text(json.dumps(tables, indent=2, ensure_ascii=False) + "\n",
                                                  encoding="utf-8")
        (folder / DICTIONARY_FILES[1]).write_text(dictionary_markdown(tables), encoding="utf-8")
    except OSError as exc:
        raise InputError(f"cannot write the export into {folder}: {exc.strerror}; choose another folder") from None
    return rows_per_table


def _csv_value(value: Any) -> Any:
    """A value as a CSV field.

    >>> [_csv_value(v) for v in (None, True, dt.date(2024, 6, 1), 3)]
    ['', 'true', '2024-06-01', 3]
    """
    if value is None:
        return ""
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, dt.date):
        return value.isoformat()
    return value


def _write_csv(path: Path, names: list[str], _types: list[str], rows: list[tuple]) -> None:
    with path.open("w", encoding="utf-8", newline="") as file:
        writer = csv.writer(file)
        writer.writerow(names)
        writer.writerows([_csv_value(v) for v in row] for row in rows)


def _write_jsonl(path: Path, names: list[str], _types: list[str], rows: list[tuple]) -> None:
    with path.open("w", encoding="utf-8") as file:
        for row in rows:
            file.write(json.dumps(dict(zip(names, row)), ensure_ascii=False, default=str) + "\n")


def _write_parquet(path: Path, names: list[str], types: list[str], rows: list[tuple]) -> None:
    import pyarrow as pa
    import pyarrow.parquet as pq

    arrow = {"VARCHAR": pa.string(), "INTEGER": pa.int32(), "BOOLEAN": pa.bool_(), "DOUBLE": pa.float64(),
             "DATE": pa.date32()}
    schema = pa.schema([(n, arrow[t]) for n, t in zip(names, types)])
    columns = list(zip(*rows)) if rows else [[] for _ in names]
    pq.write_table(pa.Table.from_arrays([pa.array(list(c), type=f.type) for c, f in zip(columns, schema)],
                                        schema=schema), path)


_WRITERS = {"parquet": _write_parquet, "csv": _write_csv, "jsonl": _write_jsonl}
