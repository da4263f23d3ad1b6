"""The export's link tables kept as columns (``LinkColumns``) from the parse through the merge to
the load give the database their records give: the same rows, duplicates, rejects, agreement
counts and accounting."""

from __future__ import annotations

import datetime as dt

import duckdb

import pipeline.build
from pipeline.build import account, build, validate
from pipeline.extractors import LinkColumns, ParseResult
from schemas.records import Datasheet, DatasheetEnhancement, DatasheetStratagem, Source
from tests.conftest import GOLDEN

INPUTS = GOLDEN / "inputs"


def _tables(path) -> dict[str, list[tuple]]:
    con = duckdb.connect(str(path), read_only=True)
    try:
        names = [r[0] for r in con.execute(
            "SELECT table_name FROM information_schema.tables WHERE table_schema = 'main' AND table_type = 'BASE TABLE'"
        ).fetchall()]
        return {name: con.execute(f'SELECT * FROM "{name}"').fetchall() for name in names}
    finally:
        con.close()


def test_a_build_with_link_columns_writes_the_database_of_their_records(tmp_path, monkeypatch):
    build(INPUTS, tmp_path / "columns.duckdb")
    monkeypatch.setattr(pipeline.build, "LINK_COLUMN_FORMATS", frozenset())  # every row a record
    build(INPUTS, tmp_path / "records.duckdb")
    columns, records = _tables(tmp_path / "columns.duckdb"), _tables(tmp_path / "records.duckdb")
    assert len(columns["datasheet_stratagems"]) > 0 and len(columns["datasheet_enhancements"]) > 0
    assert columns.keys() == records.keys()
    assert [t for t in columns if columns[t] != records[t]] == []  # row for row, in the same order


def _source(sid: str, kind: str) -> Source:
    return Source(source_id=sid, title=sid, file=f"{sid}.txt", format="x", publisher="p", edition=10,
                  kind=kind, game_mode=None, version=None, version_date=dt.date(2025, 1, 1), origin="test")


def _sheet(sid: str, did: str) -> Datasheet:
    return Datasheet(source_id=sid, locator="line 1", datasheet_id=did, name=did.rsplit("/", 1)[1], faction_id="x",
                     edition=10, game_mode=None, starting_strength=5)


def _links(sid: str, rows: list[tuple[str, str]], record_type=DatasheetStratagem) -> LinkColumns:
    return LinkColumns(record_type, [sid] * len(rows), [f"line {i + 2}" for i in range(len(rows))],
                       [d for d, _ in rows], [t for _, t in rows])


def test_link_columns_merge_as_their_records_do():
    """Across sources: a key the other source gave too is a duplicate (of the later source),
    a link to a datasheet no source defines an orphan, the link rows' source first or second in
    precedence (``merge.source_order``)."""
    export_rows = [("10e/x/a", "s1"), ("10e/x/a", "s2"), ("10e/x/gone", "s1")]
    page_rows = [("10e/x/a", "s2"), ("10e/x/b", "s3")]
    enhancement_rows = [("10e/x/b", "e1")]

    def results(as_columns: bool) -> dict[str, ParseResult]:
        export = _links("export", export_rows)
        enhancements = _links("export", enhancement_rows, DatasheetEnhancement)
        page = _links("page", page_rows)
        return {
            "export": ParseResult(records=[_sheet("export", "10e/x/a")] + ([] if as_columns else
                                                                           export.records() + enhancements.records()),
                                  links=[export, enhancements] if as_columns else []),
            "page": ParseResult(records=[_sheet("page", "10e/x/b"), *page.records()]),
        }

    for kinds in (("export", "codex"), ("codex", "export")):
        order = [_source("export", kinds[0]), _source("page", kinds[1])]
        by_records, by_columns = validate(order, results(False)), validate(order, results(True))
        kept = sorted((r.__table__, r.model_dump_json()) for r in by_records.records)
        assert sorted((r.__table__, r.model_dump_json()) for r in by_columns.records) == sorted(
            (t, j) for t, j in kept if t not in ("datasheet_stratagems", "datasheet_enhancements"))
        assert sorted((t, j) for t, j in kept if t in ("datasheet_stratagems", "datasheet_enhancements")) == sorted(
            (r.__table__, r.model_dump_json()) for links in by_columns.links for r in links.records())
        assert len([r for r in by_records.records if r.__table__ == "datasheet_stratagems"]) == 3
        assert by_columns.duplicates == by_records.duplicates
        assert sum(n for (_, table), n in by_columns.duplicates.items() if table == "datasheet_stratagems") == 1
        assert [(r.reason, r.raw_text) for r in by_columns.rejects] == [(r.reason, r.raw_text) for r in by_records.rejects]
        assert [r.reason for r in by_columns.rejects] == ["orphan: datasheet 10e/x/gone is not defined by any source"]
        assert by_columns.agreement == by_records.agreement
        assert account(order, results(True), by_columns) == account(order, results(False), by_records)


def test_moved_datasheet_ids_move_the_link_rows():
    links = _links("s", [("10e/x/old", "s1"), ("10e/x/a", "s2")])
    assert links.moved({"10e/x/old": "10e/x/new"}).datasheet_ids == ["10e/x/new", "10e/x/a"]
    assert links.moved({"10e/x/other": "10e/x/new"}) is links


def test_rows_made_later_are_loaded_after_the_others_and_counted(tmp_path):
    """``load_database(..., later=...)``: the records it makes when called (the build's rules'
    effects) go into the same tables as the others, in the same database, and are counted."""
    import duckdb

    from pipeline.load import load_database
    from schemas.records import Faction, Source

    source = Source(source_id="s", title="t", file="f.txt", format="x", publisher="p", edition=10,
                    kind="index", game_mode=None, version=None, version_date=None, origin="o")
    calls = []

    def later():
        calls.append(1)
        return [Faction(source_id="s", locator="Factions.csv line 3", faction_id="orks", name="Orks")]

    first = Faction(source_id="s", locator="Factions.csv line 2", faction_id="necrons", name="Necrons")
    db = tmp_path / "x.duckdb"
    rows = load_database([source, first], db, later=later)
    assert calls == [1] and rows["factions"] == 2 and rows["sources"] == 1
    con = duckdb.connect(str(db), read_only=True)
    assert con.execute("SELECT faction_id FROM factions ORDER BY 1").fetchall() == [("necrons",), ("orks",)]
    con.close()
    sqlite = tmp_path / "x.sqlite"
    assert load_database([source, first], f"sqlite:///{sqlite}", later=later)["factions"] == 2
    assert calls == [1, 1]


def test_the_last_sources_link_tables_alone_merge_as_every_link_row_does(monkeypatch):
    """``build._links_alone``: the link tables that the last source alone gives, no key twice,
    are taken whole at the end of the merge (orphans rejected): the same rows, in the same
    order, rejects and counts as the merge row by row. A table another source gives too, or
    one with a key twice, goes row by row."""
    from pipeline.build import _links_alone

    def results(export_rows, page_rows):
        return {
            "export": ParseResult(records=[_sheet("export", "10e/x/a")],
                                  links=[_links("export", export_rows),
                                         _links("export", [("10e/x/a", "e1"), ("10e/x/nope", "e2")],
                                                DatasheetEnhancement)]),
            "page": ParseResult(records=[_sheet("page", "10e/x/b")], links=[_links("page", page_rows)] if page_rows else []),
        }

    cases = [  # (export rows, page rows, taken whole)
        ([("10e/x/a", "s1"), ("10e/x/gone", "s1"), ("10e/x/a", "s2")], [], True),
        ([("10e/x/a", "s1"), ("10e/x/a", "s1")], [], False),  # a key twice
        ([("10e/x/a", "s1")], [("10e/x/b", "s3")], False),  # another source gives the table
    ]
    order = [_source("page", "codex"), _source("export", "export")]
    for export_rows, page_rows, whole in cases:
        ordered = pipeline.build.source_order(order)
        assert [s.source_id for s in ordered] == ["page", "export"]
        taken = results(export_rows, page_rows)
        batches = [taken[s.source_id].records for s in ordered]
        assert bool(_links_alone(batches, [taken[s.source_id].links for s in ordered])[1]) is whole
        fast = validate(order, taken)
        monkeypatch.setattr(pipeline.build, "_links_alone", lambda b, link_batches: (link_batches, []))
        slow = validate(order, results(export_rows, page_rows))
        monkeypatch.undo()
        assert [(l.table, l.source_ids, l.locators, l.datasheet_ids, l.targets) for l in fast.links] == [
            (l.table, l.source_ids, l.locators, l.datasheet_ids, l.targets) for l in slow.links]
        assert [(r.reason, r.raw_text, r.locator) for r in fast.rejects] == [
            (r.reason, r.raw_text, r.locator) for r in slow.rejects]
        assert fast.duplicates == slow.duplicates and fast.records == slow.records
    assert len(fast.rejects) >= 1
