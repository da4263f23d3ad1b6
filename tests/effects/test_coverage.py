"""``wh40k effects coverage`` / ``unread`` on the seed database (counts checked by hand)."""

from __future__ import annotations

import json

from tests.effects.test_build_effects import seed_db  # noqa: F401  (the module's database fixture)
from tests.test_build_and_cli import wh40k


def test_coverage_counts_per_edition_and_kind(seed_db):
    done = wh40k("effects", "coverage", "--db", str(seed_db), "--format", "json")
    assert done.returncode == 0, done.stderr
    rows = {(r["edition"], r["kind"]): r for r in json.loads(done.stdout)}
    # the 6 Orders of seed 004: Move! Move! Move! and Duty and Honour! change no attack
    assert rows[(11, "order")] == {"edition": 11, "kind": "order", "rules": 6, "change_an_attack": 4, "read": 4,
                                   "hand_kept": 0, "unread": 0, "read_share": 100.0}
    # the 11 stratagems of the Combat Patrol page: Command Re-roll, Epic Challenge, Go to Ground,
    # Holy Radiance, Ascetic Discipline change an attack (the reader reads 4; Command Re-roll and Fire
    # Overwatch have hand-kept entries)
    assert rows[(10, "stratagem")] == {"edition": 10, "kind": "stratagem", "rules": 11, "change_an_attack": 6,
                                       "read": 4, "hand_kept": 2, "unread": 0, "read_share": 100.0}
    assert rows[(11, "stratagem")]["hand_kept"] == 1  # Fire Overwatch (snap shooting)


def test_unread_lists_nothing_when_every_rule_is_covered_and_rejects_an_unknown_faction(seed_db):
    done = wh40k("effects", "unread", "--kind", "stratagem", "--db", str(seed_db), "--format", "json")
    assert (done.returncode, json.loads(done.stdout)) == (0, [])
    bad = wh40k("effects", "unread", "--faction", "Adepta Sororitass", "--db", str(seed_db))
    assert bad.returncode == 1
    assert bad.stderr.strip().startswith("Error: --faction 'Adepta Sororitass': no such faction; close names: "
                                         "Adepta Sororitas")
