"""``wh40k list show``: every unit of a real list matched with its score, the three output
formats, and one-line errors for files that are no list."""

from __future__ import annotations

import csv
import io
import json

import pytest

from pipeline.cli import run
from tests.lists.conftest import LISTS


def _run(capsys, *args):
    status = run(list(args))
    out, err = capsys.readouterr()
    return status, out, err


def test_show_json_matches_every_tau_unit_to_its_11th_edition_datasheet(lists_db, capsys):
    status, out, err = _run(capsys, "list", "show", str(LISTS / "11e" / "Test-TAU-GWAPP-English"),
                            "--db", str(lists_db), "--format", "json")
    assert status == 0, err
    data = json.loads(out)
    assert (data["format"], data["edition"], data["faction_id"], data["declared_points"]) == (
        "gw-app", 11, "tau-empire", 2000)
    assert data["unmatched"] == []
    assert [u["datasheet_id"] for u in data["units"][:3]] == [
        "11e/tau-empire/commander-farsight", "11e/tau-empire/crisis-sunforge-battlesuits",
        "11e/tau-empire/commander-in-enforcer-battlesuit"]
    assert {u["score"] for u in data["units"]} == {1.0}
    assert [(a["leader"], a["bodyguard"], a["allowed"]) for a in data["attachments"]] == [
        (1, 2, True), (3, 4, True), (5, 6, True), (7, 8, True), (9, 10, True)]
    sunforge = data["units"][1]["models"][0]
    assert (sunforge["printed"], sunforge["matched"], sunforge["count"]) == (
        "Crisis Sunforge Shas’vre", "Crisis Sunforge Shas’vre", 1)
    assert [(w["printed"], w["count"], w["kind"]) for w in sunforge["wargear"]] == [
        ("Battlesuit fists", 1, "weapon"), ("Fusion blaster", 2, "weapon"), ("Gun Drone", 1, "wargear"),
        ("Shield Drone", 1, "wargear")]


def test_show_csv_names_an_unmatched_unit_and_weapon(lists_db, capsys, tmp_path):
    text = (LISTS / "11e" / "Test-WE-GWAPP-English").read_text(encoding="utf-8")
    text = text.replace("Maulerfiend (140 points)", "Gorgonzola Walker (140 points)").replace(
        "1x Havoc launcher", "1x Cheese launcher", 1)
    path = tmp_path / "edited.txt"
    path.write_text(text, encoding="utf-8")
    status, out, err = _run(capsys, "list", "show", str(path), "--db", str(lists_db), "--format", "csv")
    assert status == 0, err
    rows = list(csv.DictReader(io.StringIO(out)))
    unmatched = [r["name"] for r in rows if r["section"] == "unmatched"]
    assert unmatched == ["wargear 'Cheese launcher' of 'Chaos Rhino' in 'Chaos Rhino' (line 86)",
                         "unit 'Gorgonzola Walker' (line 139)"]
    walker = [r for r in rows if r["section"] == "unit" and r["name"] == "Gorgonzola Walker"]
    assert walker[0]["matched"] == "" and walker[0]["points"] == "140"


def test_show_table_prints_the_units_and_the_unmatched_note(lists_db, capsys):
    status, out, err = _run(capsys, "list", "show", str(LISTS / "11e" / "Test-WE-NRGW-English"), "--db", str(lists_db))
    assert status == 0, err
    assert out.splitlines()[0] == ("Test-WE-NRGW-English: World Eaters (world-eaters), Berzerker Warband, edition 11 "
                                   "('FORCE DISPOSITION' in the header), format newrecruit-gw; points: 2000 declared, "
                                   "2000 summed")
    assert "11e/world-eaters/kharn-the-betrayer" in out


@pytest.mark.parametrize("content, message", [
    (b"hello\nworld\n", "line 1: not an army list of a known format"),
    (b"Mine (500 points)\n\nOrks\n\nBoyz (80 points)\n  \xff 10x Boy\n", "line 6: not UTF-8 text"),
])
def test_a_file_that_is_no_list_is_one_error_line_naming_the_file_and_line(lists_db, capsys, tmp_path, content, message):
    path = tmp_path / "army.txt"
    path.write_bytes(content)
    status, out, err = _run(capsys, "list", "show", str(path), "--db", str(lists_db))
    assert status == 1 and out == ""
    assert err.startswith(f"Error: {path}, {message}") and err.count("\n") == 1


def test_a_missing_file_is_one_error_line(capsys, tmp_path):
    status, out, err = _run(capsys, "list", "show", str(tmp_path / "none.txt"))
    assert (status, err) == (1, f"Error: {tmp_path / 'none.txt'}: no such file; give the path of an exported "
                                "army list\n")


def test_help_shows_an_example(capsys):
    status, out, err = _run(capsys, "list", "show", "--help")
    assert status == 0 and "Example: wh40k list show army.txt --format csv" in out
