"""Fuzzing the whole build: a raw folder with one file mutated builds, or fails with the project's
own error and writes no database; never a traceback, never a hang.

The raw folder is the committed golden inputs (``tests/golden/inputs``: an export folder, saved
pages, BattleScribe files; no checksums in its manifest, so a mutated file is parsed, not refused
for its sha256). Each example mutates one file (``tests.test_fuzz_parsers.mutated_text``) or the
manifest itself, and runs ``pipeline.build.build`` into a fresh database path. Hypothesis runs
derandomized with ``EXAMPLES`` inputs.
"""

from __future__ import annotations

import shutil
import tempfile
from datetime import timedelta
from pathlib import Path

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from pipeline.build import build
from pipeline.errors import Wh40kError
from tests.conftest import GOLDEN
from tests.test_fuzz_parsers import mutated_text

INPUTS = GOLDEN / "inputs"
FILES = sorted(p.relative_to(INPUTS).as_posix() for p in INPUTS.rglob("*") if p.is_file())
#: Builds tried (the README's figure).
EXAMPLES = 25


@settings(max_examples=EXAMPLES, derandomize=True, database=None, deadline=timedelta(seconds=30),
          suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])
@given(data=st.data())
def test_a_raw_folder_with_a_mutated_file_builds_or_fails_with_the_projects_error(data):
    name = data.draw(st.sampled_from(FILES))
    with tempfile.TemporaryDirectory() as tmp:
        raw = Path(tmp) / "raw"
        shutil.copytree(INPUTS, raw)
        path = raw / name
        try:
            text = path.read_text(encoding="utf-8")
        except UnicodeDecodeError:
            text = path.read_bytes().decode("latin-1")
        path.write_text(data.draw(mutated_text(text)), encoding="utf-8")
        db = Path(tmp) / "db" / "fuzz.duckdb"
        try:
            report = build(raw, db, progress=lambda _msg: None)
        except Wh40kError:
            assert not db.exists()  # a failed build writes nothing
            return
        assert report.inconsistent == []
        assert db.exists()
