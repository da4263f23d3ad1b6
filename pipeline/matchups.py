"""Every weapon profile of a database against every target: the ``matchups`` tables.

``compute_matchups(db)`` reads the database (read-only, in its sandbox), resolves with the batch
engine (``pipeline.engine.batch``) and ``write_matchups`` writes three tables declared in
``schemas.records`` (``MatchupWeapon``, ``MatchupTarget``, ``Matchup``), replacing their rows:

- ``matchup_weapons``: every weapon profile with a Strength (ranged and melee) of every
  datasheet, per edition, with its ``weapon_key``;
- ``matchup_targets``: every datasheet of that edition as a target (as ``wh40k attack`` reads it:
  its Bodyguard model line, its smallest unit size) and the standard profiles of
  ``pipeline.engine.inputs`` (GEQ, MEQ, TEQ, VEHICLE, MONSTER), with its ``target_key``;
- ``matchups``: one row per distinct (weapon, target) pair of an edition, joined to the other
  two on ``(edition, weapon_key)`` and ``(edition, target_key)``.

Defaults (stated in the README): the weapon's unit at its smallest size, every model firing the
profile once (``Weapon.models`` = that size); no situational option (no cover, not stationary,
not charged, full range); in the 11th edition the better of the Lethal Hits choices (the exact
engine's default). A datasheet with no model count or no characteristics is left out, counted in
the summary with the first reason. Storing distinct pairs (and not the full cross product) keeps
the table to the pairs that differ; the join gives every pair.
"""

from __future__ import annotations

import sys
import time
from concurrent.futures import ProcessPoolExecutor
from dataclasses import dataclass, field, replace
from multiprocessing import get_context
from pathlib import Path
from typing import Callable

import duckdb
import numpy as np
import pyarrow as pa

from pipeline.database import open_database
from pipeline.engine import batch, from_db
from pipeline.engine.inputs import STANDARD_PROFILES
from pipeline.engine.profiles import Context, Target, Weapon
from pipeline.errors import DatabaseError, InputError
from schemas.records import Matchup, MatchupTarget, MatchupWeapon
from schemas.tables import TABLES, column_values

#: The tables ``write_matchups`` replaces, in order.
MATCHUP_TABLES = (MatchupWeapon.__table__, MatchupTarget.__table__, Matchup.__table__)


@dataclass
class EditionMatchups:
    """The matchups of one edition: the rows of the three tables and the counts of the summary."""

    edition: int
    weapons: list[MatchupWeapon] = field(default_factory=list)
    targets: list[MatchupTarget] = field(default_factory=list)
    #: the columns of the ``matchups`` rows (one per distinct pair), as Arrow arrays
    matchups: dict[str, pa.Array] = field(default_factory=dict)
    weapon_profiles: int = 0
    target_count: int = 0
    left_out: dict[str, int] = field(default_factory=dict)
    result: batch.BatchResult | None = None
    seconds: float = 0.0
    #: seconds per phase: reading the weapons and the targets, then the batch's (``BatchResult.seconds``)
    phases: dict[str, float] = field(default_factory=dict)

    def summary(self) -> dict:
        """JSON-ready counts of this edition."""
        r = self.result
        return {
            "edition": self.edition,
            "weapon_profiles": self.weapon_profiles,
            "targets": self.target_count,
            "pairs": self.weapon_profiles * self.target_count,
            "distinct_weapons": len(r.distinct_weapons) if r else 0,
            "distinct_targets": len(r.distinct_targets) if r else 0,
            "distinct_pairs": r.distinct_pairs if r else 0,
            "batched_pairs": r.vectorised_pairs if r else 0,
            "devastating_wounds_pairs": r.devastating_pairs if r else 0,
            "refused_pairs": r.refused_pairs if r else 0,
            "datasheets_left_out": sum(self.left_out.values()),
            "seconds": round(self.seconds, 3),
            "pairs_per_second": round(self.weapon_profiles * self.target_count / self.seconds) if self.seconds else 0,
            "seconds_by_phase": {name: round(value, 3) for name, value in self.phases.items()},
        }


def _rows(cur) -> list[dict]:
    names = [d[0] for d in cur.description]
    return [dict(zip(names, row)) for row in cur.fetchall()]


def compute_matchups(db: Path, editions: tuple[int, ...] = (10, 11),
                     progress: Callable[[str], None] | None = None, workers: int = 2) -> list[EditionMatchups]:
    """The matchups of each of ``editions`` from the database at ``db`` (opened read-only).

    Returns one ``EditionMatchups`` per edition. With ``workers`` > 1 and several editions, the
    editions are computed at once in worker processes (one per edition, at most ``workers``),
    whose progress goes to stderr instead of ``progress``. Raises ``DatabaseError`` when the
    database cannot be opened (``pipeline.database.open_database``).
    """
    say = progress or (lambda text: None)
    open_database(db).close()  # the error of a missing or unreadable database, here and once
    if workers > 1 and len(editions) > 1:
        with ProcessPoolExecutor(max_workers=min(workers, len(editions)), mp_context=get_context("spawn")) as pool:
            return list(pool.map(_edition_alone, [db] * len(editions), editions))
    return [_edition_alone(db, edition, say) for edition in editions]


def _edition_alone(db: Path, edition: int, say: Callable[[str], None] | None = None) -> EditionMatchups:
    """The matchups of one edition, from a connection of its own (a worker's task)."""
    say = say or (lambda text: print(text, file=sys.stderr, flush=True))
    con = open_database(db)
    try:
        start = time.perf_counter()
        profiles = _weapon_profiles(con, edition)
        read = time.perf_counter() - start
        part = _edition(con, edition, profiles, say)
        part.phases = {"read weapons": read, **part.phases}
        part.seconds += read
        return part
    finally:
        con.close()


def edition_inputs(con: duckdb.DuckDBPyConnection, edition: int) -> tuple[list[Weapon], list[Target]]:
    """The weapon profiles (each fired by its unit at its smallest size) and the targets (the
    standard profiles, then every datasheet) of ``edition``, as ``wh40k matchups`` reads them."""
    weapons, _, targets, _ = _inputs(con, edition, _weapon_profiles(con, edition), EditionMatchups(edition))
    return weapons, targets


def _edition(con: duckdb.DuckDBPyConnection, edition: int, profiles: list[tuple[tuple, Weapon]],
             say: Callable[[str], None]) -> EditionMatchups:
    start = time.perf_counter()
    out = EditionMatchups(edition)
    weapons, keys, targets, ids = _inputs(con, edition, profiles, out)
    out.phases["read targets"] = time.perf_counter() - start
    out.weapon_profiles, out.target_count = len(weapons), len(targets)
    say(f"edition {edition}: {len(weapons)} weapon profiles x {len(targets)} targets")

    def tick(done: int, total: int) -> None:
        if done % 100 == 0 or done == total:
            say(f"edition {edition}: resolved {done}/{total} distinct weapons")

    result = batch.resolve_batch(weapons, targets, Context(edition=edition), progress=tick)
    out.result = result
    out.phases.update(result.seconds)
    out.weapons = [MatchupWeapon(edition=edition, datasheet_id=k[0], weapon_name=k[1], profile_name=k[2],
                                 is_melee=k[3], faction_id=k[4], models=w.models, weapon_key=int(i))
                   for k, w, i in zip(keys, weapons, result.weapon_index)]
    out.targets = [MatchupTarget(edition=edition, target_id=t_id, target_name=name, kind=kind, faction_id=faction,
                                 models=t.models, target_key=int(j))
                   for (t_id, name, kind, faction), t, j in zip(ids, targets, result.target_index)]
    out.matchups = _matchup_rows(edition, result)
    out.seconds = time.perf_counter() - start
    return out


def _inputs(con: duckdb.DuckDBPyConnection, edition: int, profiles: list[tuple[tuple, Weapon]],
            out: EditionMatchups) -> tuple[list[Weapon], list[tuple], list[Target], list[tuple]]:
    """(weapons, their keys, targets, their ids) of ``edition``; the datasheets left out are
    counted in ``out.left_out`` by reason."""
    sheets = _rows(con.execute("SELECT * FROM datasheets WHERE edition = ? ORDER BY datasheet_id", [edition]))
    rows = from_db.read_datasheet_rows(con, edition=edition)
    sizes: dict[str, int] = {}
    targets: list[Target] = list(STANDARD_PROFILES.values())
    ids: list[tuple[str, str, str, str | None]] = [(name, name, "standard", None) for name in STANDARD_PROFILES]
    for sheet in sheets:
        mine = rows[sheet["datasheet_id"]]
        count, why = from_db.model_count(con, sheet, mine)
        if count is None:
            out.left_out[why] = out.left_out.get(why, 0) + 1
        else:
            sizes[sheet["datasheet_id"]] = count
            try:
                targets.append(from_db.target_from_datasheet(con, sheet, models=count, rows=mine))
                ids.append((sheet["datasheet_id"], sheet["name"], "datasheet", sheet["faction_id"]))
            except InputError as error:
                reason = str(error).split(";")[0].split(") ", 1)[-1]
                out.left_out[reason] = out.left_out.get(reason, 0) + 1
    faction = {sheet["datasheet_id"]: sheet["faction_id"] for sheet in sheets}
    weapons = [replace(weapon, models=sizes[key[0]]) for key, weapon in profiles if key[0] in sizes]
    keys = [key + (faction.get(key[0]),) for key, _ in profiles if key[0] in sizes]
    return weapons, keys, targets, ids


def _weapon_profiles(con: duckdb.DuckDBPyConnection, edition: int) -> list[tuple[tuple, Weapon]]:
    """Every weapon profile with a Strength of ``edition`` (ranged then melee), each with its key
    (datasheet_id, weapon_name, profile_name, is_melee)."""
    out: list[tuple[tuple, Weapon]] = []
    for is_melee in (False, True):
        profiles = from_db.all_weapon_profiles(con, is_melee, edition)
        # the same rows in the same order as all_weapon_profiles reads them
        rows = con.execute("SELECT datasheet_id, weapon_name, profile_name FROM weapon_profiles "
                           "WHERE is_melee = ? AND strength IS NOT NULL AND datasheet_id IN "
                           "(SELECT datasheet_id FROM datasheets WHERE edition = ?) "
                           "ORDER BY datasheet_id, weapon_name, profile_name", [is_melee, edition]).fetchall()
        if len(rows) != len(profiles):
            raise DatabaseError("the weapon profiles changed while they were read; run the command again")
        out.extend(((ds_id, weapon_name, profile_name, is_melee), weapon)
                   for (ds_id, weapon_name, profile_name), weapon in zip(rows, profiles))
    return out


def _matchup_rows(edition: int, result: batch.BatchResult) -> dict[str, pa.Array]:
    """The columns of one ``Matchup`` row per distinct pair of ``result`` (the record's fields,
    in order, as Arrow arrays; NaN figures of a refused pair become NULL)."""
    figures = result.distinct_figures
    n_w, n_t = figures.shape[1:]
    resolution = np.isnan(figures).any(axis=0).astype(np.int8)  # indices into _RESOLUTIONS
    size = n_w * n_t
    columns: dict[str, pa.Array] = {
        "edition": pa.array(np.full(size, edition, dtype=np.int64)),
        "weapon_key": pa.array(np.repeat(np.arange(n_w, dtype=np.int64), n_t)),
        "target_key": pa.array(np.tile(np.arange(n_t, dtype=np.int64), n_w)),
    }
    for name, values in zip(batch.FIGURES, figures):
        flat = values.ravel()
        columns[name] = pa.array(flat, mask=np.isnan(flat))
    columns["resolution"] = pa.DictionaryArray.from_arrays(
        pa.array(resolution.ravel()), pa.array(_RESOLUTIONS)).cast(pa.string())
    if list(columns) != list(Matchup.model_fields):
        raise AssertionError("the matchups columns differ from the Matchup record")  # a bug, not an input
    return columns


#: The values of ``matchups.resolution``: resolved by the batch engine, or refused by the exact engine's limits.
_RESOLUTIONS = ("batched", "refused")


def write_matchups(db: Path, editions: list[EditionMatchups]) -> dict[str, int]:
    """Replace the rows of the matchup tables of ``db`` for the given editions (one transaction).

    Returns the rows written per table. Raises ``DatabaseError`` when the file cannot be opened
    for writing (another process holds it).
    """
    try:
        con = duckdb.connect(str(db))
    except duckdb.Error as error:
        raise DatabaseError(f"{db}: cannot open the database for writing ({str(error).splitlines()[0]}); "
                            "close the other program using it and run the command again") from None
    counts = dict.fromkeys(MATCHUP_TABLES, 0)
    try:
        con.execute("BEGIN TRANSACTION")
        for table, record, attr in ((MatchupWeapon.__table__, MatchupWeapon, "weapons"),
                                    (MatchupTarget.__table__, MatchupTarget, "targets"),
                                    (Matchup.__table__, Matchup, "matchups")):
            for part in editions:
                con.execute(f'DELETE FROM "{table}" WHERE edition = ?', [part.edition])
                rows = getattr(part, attr)
                columns = rows if isinstance(rows, dict) else column_values(record, rows) if rows else {}
                size = len(next(iter(columns.values()), []))
                if not size:
                    continue
                schema = pa.schema([pa.field(c.name, _ARROW[type(c.type).__name__]) for c in TABLES[table].columns])
                con.register("_batch", pa.Table.from_pydict(columns, schema=schema))
                con.execute(f'INSERT INTO "{table}" SELECT * FROM _batch')
                con.unregister("_batch")
                counts[table] += size
        con.execute("COMMIT")
        con.execute("CHECKPOINT")
    finally:
        con.close()
    return counts


_ARROW = {"String": pa.string(), "Integer": pa.int64(), "Boolean": pa.bool_(), "Double": pa.float64()}
