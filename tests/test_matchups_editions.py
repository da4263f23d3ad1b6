"""The matchups' inputs and figures over the database of both editions (``tests/editions_db.py``):
the targets read in bulk are those read one datasheet at a time, and the batch engine's figures
over every weapon profile and target equal the exact engine's on a seeded random sample."""

from __future__ import annotations

import re

import numpy as np
import pytest

from pipeline.database import open_database
from pipeline.engine import batch, exact, from_db
from pipeline.engine.profiles import Context
from pipeline.errors import InputError
from pipeline.matchups import edition_inputs
from tests.editions_db import editions_db


@pytest.fixture(scope="module")
def con():
    connection = open_database(editions_db())
    yield connection
    connection.close()


def _sheets(con, edition: int) -> list[dict]:
    cur = con.execute("SELECT * FROM datasheets WHERE edition = ? ORDER BY datasheet_id", [edition])
    names = [d[0] for d in cur.description]
    return [dict(zip(names, row)) for row in cur.fetchall()]


@pytest.mark.parametrize("edition", [10, 11])
def test_targets_read_in_bulk_are_those_read_one_datasheet_at_a_time(con, edition):
    rows = from_db.read_datasheet_rows(con, edition=edition)
    sheets = _sheets(con, edition)
    assert set(rows) == {s["datasheet_id"] for s in sheets}
    read = 0
    for sheet in sheets:
        mine = rows[sheet["datasheet_id"]]
        assert from_db.model_count(con, sheet, mine) == from_db.model_count(con, sheet)
        count = from_db.model_count(con, sheet)[0] or 5
        one, bulk = [], []
        try:
            expected = from_db.target_from_datasheet(con, sheet, models=count, notes=one)
        except InputError as error:
            with pytest.raises(InputError, match=re.escape(str(error))):
                from_db.target_from_datasheet(con, sheet, models=count, rows=mine)
            continue
        assert from_db.target_from_datasheet(con, sheet, models=count, notes=bulk, rows=mine) == expected
        assert bulk == one
        read += 1
    assert read >= 5


@pytest.mark.parametrize("edition", [10, 11])
def test_the_batch_equals_the_exact_engine_on_a_random_sample_of_every_profile_and_target(con, edition):
    weapons, targets = edition_inputs(con, edition)
    assert len(weapons) >= 10 and len(targets) >= 8
    context = Context(edition=edition)
    result = batch.resolve_batch(weapons, targets, context)
    rng = np.random.default_rng(14 + edition)
    checked = 0
    for i, j in zip(rng.integers(0, len(weapons), 150).tolist(), rng.integers(0, len(targets), 150).tolist()):
        got = tuple(result.figures(i, j).values())
        try:
            r = exact.resolve([weapons[i]], targets[j], context)
        except exact.EngineInputError:
            assert all(np.isnan(got))
            continue
        expected = (r.damage.mean, r.models_destroyed.mean, 1.0 - float(r.models_destroyed.pmf[0]), r.target_destroyed)
        assert got == pytest.approx(expected, abs=1e-9, rel=0)
        checked += 1
    assert checked >= 100  # pairs drawn with repeats: a small edition is checked nearly in full
