"""Work run ahead in a forked process (``pipeline.forked``), and the build's read-ahead of the
rules' wordings: the same effects with it or without it."""

from __future__ import annotations

import os

import pytest

from pipeline.build import parse_snapshot, validate
from pipeline.effects.reader import read_text
from pipeline.effects.rules import effect_rows, read_wordings, rules_of
from pipeline.extract import is_present, read_snapshot
from pipeline.forked import ForkedCall
from pipeline.manifest import read_folder_files, read_manifest
from schemas.records import Effect
from tests.conftest import RAW


def test_the_value_comes_back(monkeypatch):
    monkeypatch.delenv("WH40K_JOBS", raising=False)
    call = ForkedCall.start(lambda: {"a": (1, 2), "b": ()})
    assert call is not None
    assert call.result() == {"a": (1, 2), "b": ()}


def test_one_process_runs_nothing_ahead(monkeypatch):
    monkeypatch.setenv("WH40K_JOBS", "1")
    assert ForkedCall.start(lambda: 1) is None


def test_a_process_that_dies_gives_none(monkeypatch):
    monkeypatch.delenv("WH40K_JOBS", raising=False)
    call = ForkedCall.start(lambda: os._exit(3))
    assert call is not None
    assert call.result() is None


def test_abort_stops_the_process(monkeypatch):
    import time

    monkeypatch.delenv("WH40K_JOBS", raising=False)
    call = ForkedCall.start(lambda: time.sleep(60))
    assert call is not None
    started = time.monotonic()
    call.abort()
    assert not call._process.is_alive()
    assert time.monotonic() - started < 10


@pytest.fixture(scope="module")
def seed_parse():
    members = read_folder_files(RAW)
    sources = [s for s in read_manifest(RAW) if is_present(RAW, s, members.get(s.source_id, ()))]
    snapshots = [read_snapshot(RAW, s, members.get(s.source_id, ())) for s in sources]
    return [s.source for s in snapshots], {s.source.source_id: parse_snapshot(s) for s in snapshots}


def test_the_effects_are_the_same_with_the_wordings_read_ahead(seed_parse, monkeypatch):
    monkeypatch.delenv("WH40K_JOBS", raising=False)
    sources, results = seed_parse
    by_id = {s.source_id: s for s in sources}
    ahead = ForkedCall.start(lambda: read_wordings([r for res in results.values() for r in res.records], by_id))
    assert ahead is not None
    with_ahead = [r for r in validate(sources, results, ahead).filled if isinstance(r, Effect)]
    alone = [r for r in validate(sources, results).filled if isinstance(r, Effect)]
    assert len(alone) == 20
    assert with_ahead == alone
    # left for later (the build makes them while the other rows go in): the same rows, none in filled
    later_ahead = ForkedCall.start(lambda: read_wordings([r for res in results.values() for r in res.records], by_id))
    deferred = validate(sources, results, later_ahead, effects_later=True)
    assert not [r for r in deferred.filled if isinstance(r, Effect)]
    assert deferred.effects is not None and deferred.effects() == alone


def test_a_wording_read_ahead_is_taken_as_read(seed_parse):
    sources, results = seed_parse
    by_id = {s.source_id: s for s in sources}
    records = [r for res in results.values() for r in res.records]
    rule = next(r for r in rules_of(records, by_id) if r.kind == "stratagem" and read_text(r.text))
    read = [e for e in effect_rows(records, by_id) if e.rule_id == rule.rule_id and e.origin == "reader"]
    assert read  # the reader reads something there: told that the wording says nothing, it gives nothing
    told = [e for e in effect_rows(records, by_id, {rule.text: ()}) if e.rule_id == rule.rule_id and e.origin == "reader"]
    assert told == []
