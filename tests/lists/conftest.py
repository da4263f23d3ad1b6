"""A database for the list tests: the committed seeds plus the corpus's 11th-edition Game
Datacards datasheets (the source of the units the real 11th-edition lists name) and the
Wahapedia 10th-edition export (the 10th-edition lists' units), fetched from the corpus and built
once per test session (about 40 s with the 11th-edition source alone, 70 s with both, on two
shared cores)."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from pipeline.build import build
from pipeline.fetch import fetch_sources, read_folder_files
from pipeline.manifest import read_manifest
from tests.conftest import CORPUS, RAW

LISTS = CORPUS / "lists"

#: The fetch-only sources the list tests build.
LIST_SOURCES = {"gdc-11e", "wahapedia-10e-export"}


@pytest.fixture(scope="session")
def lists_db(tmp_path_factory) -> Path:
    if not CORPUS.exists():
        pytest.skip("the shared corpus is not beside the checkout")
    raw = tmp_path_factory.mktemp("lists") / "raw"
    shutil.copytree(RAW, raw)
    fetch_sources([s for s in read_manifest(raw) if s.source_id in LIST_SOURCES], raw, mirror=str(CORPUS),
                  folder_files=read_folder_files(raw), delay_seconds=0)
    path = raw.parent / "lists.duckdb"
    build(raw, path)
    return path
