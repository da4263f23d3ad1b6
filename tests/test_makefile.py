"""``make build-db``: the full data from a corpus mirror when it is there, else the seed with a hint
(read with ``make -n``, which prints the recipe without running it)."""

from __future__ import annotations

import shutil
import subprocess

import pytest

from tests.conftest import ROOT


def _dry_run(*args: str) -> str:
    return subprocess.run(["make", "-n", "build-db", *args], cwd=ROOT, capture_output=True, text=True,
                          check=True).stdout


@pytest.mark.skipif(shutil.which("make") is None, reason="make is not installed")
def test_build_db_fetches_from_the_mirror_and_then_builds(tmp_path):
    recipe = _dry_run(f"CORPUS={tmp_path}", "RAW=somewhere", "DB=x.duckdb")
    assert f"wh40k fetch --raw somewhere --mirror {tmp_path} --delay 0" in recipe
    assert recipe.index("wh40k fetch") < recipe.index("wh40k build --raw somewhere --db x.duckdb")
    assert f'if [ -d "{tmp_path}" ]' in recipe  # the fetch runs only when the mirror folder exists


@pytest.mark.skipif(shutil.which("make") is None, reason="make is not installed")
def test_build_db_without_a_mirror_says_it_builds_the_seed_only(tmp_path):
    recipe = _dry_run(f"CORPUS={tmp_path / 'none'}")
    assert ("else \\\n\techo \"no corpus at " + str(tmp_path / "none") + ": building the seed only (4 units; the "
            "README examples need the full data).\"") in recipe
    assert "Fetch the sources with '.venv/bin/wh40k fetch'" in recipe
