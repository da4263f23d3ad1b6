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


def test_wordings_read_from_when_the_rules_are_parsed_and_the_rest_after_are_all_the_wordings(seed_parse, monkeypatch):
    """``Readings``: a reading started by a parser once it has read its rules (``rules_parsed``:
    the records so far), then ``read_ahead`` for the others only: together, every wording."""
    import pipeline.build
    from pipeline.build import Readings, read_ahead

    monkeypatch.delenv("WH40K_JOBS", raising=False)
    monkeypatch.setattr(pipeline.build, "READ_AHEAD_MIN_RECORDS", 0)
    sources, results = seed_parse
    by_id = {s.source_id: s for s in sources}
    records = [r for res in results.values() for r in res.records]
    every = read_wordings(records, by_id)
    worded = [sid for sid, res in results.items() if rules_of(res.records, by_id)]
    assert len(worded) >= 2 and len(every) > 10
    first = worded[0]
    half = len(results[first].records) // 2
    readings = Readings(sources)
    readings.rules_parsed(by_id[first])(results[first].records[:half])
    assert readings.early == {first: half}
    assert read_ahead(sources, results, readings) is readings and len(readings._calls) == 2
    early, late = readings._calls
    early_read, late_read = early.result(), late.result()
    assert set(early_read).isdisjoint(late_read) and {**early_read, **late_read} == every


def test_no_second_reading_when_the_first_read_every_rule(seed_parse, monkeypatch):
    import pipeline.build
    from pipeline.build import Readings, read_ahead

    monkeypatch.delenv("WH40K_JOBS", raising=False)
    monkeypatch.setattr(pipeline.build, "READ_AHEAD_MIN_RECORDS", 0)
    sources, results = seed_parse
    by_id = {s.source_id: s for s in sources}
    sid = next(sid for sid, res in results.items() if rules_of(res.records, by_id))
    alone = {sid: results[sid]}
    readings = Readings(sources)
    readings.rules_parsed(by_id[sid])(alone[sid].records)
    assert read_ahead(sources, alone, readings) is readings and len(readings._calls) == 1
    assert readings.result() == read_wordings(alone[sid].records, by_id)


def test_the_export_says_when_its_rules_are_read_before_its_link_tables():
    from pathlib import Path

    from pipeline.build import _WORDED
    from pipeline.extractors.wahapedia_csv import parse_export
    from schemas.records import Source

    export = Path(__file__).resolve().parent.parent.parent / "shared" / "corpus" / "wahapedia-10e"
    if not export.is_dir():
        pytest.skip("the shared corpus is not beside the checkout")
    files = {p.stem: p.read_text(encoding="utf-8-sig") for p in export.glob("*.csv")}
    source = Source(source_id="t", format="wahapedia-csv", title="t", publisher="p", edition=10, kind="export",
                    game_mode=None, version=None, origin="o", file="f", version_date=None)
    told: list[int] = []
    result = parse_export(files, source, link_columns=True, rules_parsed=lambda records: told.append(len(records)))
    assert len(told) == 1 and result.links  # the link tables came after
    n = told[0]
    assert n > 20_000 and not any(isinstance(r, _WORDED) for r in result.records[n:])
    assert {type(r).__name__ for r in result.records[:n] if isinstance(r, _WORDED)} >= {
        "Ability", "DetachmentAbility", "Enhancement", "Stratagem"}


def test_with_one_job_no_reading_is_started_nor_taken_as_done(seed_parse, monkeypatch):
    import pipeline.build
    from pipeline.build import Readings, read_ahead

    monkeypatch.setenv("WH40K_JOBS", "1")
    monkeypatch.setattr(pipeline.build, "READ_AHEAD_MIN_RECORDS", 0)
    sources, results = seed_parse
    by_id = {s.source_id: s for s in sources}
    sid = next(sid for sid, res in results.items() if rules_of(res.records, by_id))
    readings = Readings(sources)
    readings.rules_parsed(by_id[sid])(results[sid].records)
    assert readings.early == {} and read_ahead(sources, results, readings) is readings
    assert readings.result() is None  # validate reads every wording itself
