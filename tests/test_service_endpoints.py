"""``wh40k serve``'s army-list import (``POST /api/list``) and matchups (``GET /api/matchups``)
against a real server on 127.0.0.1, and the body limits of every endpoint that takes a body.

The list is a made-up War Organ export of Adepta Sororitas units that the test database of both
editions (``tests/editions_db.py``) has; the answer is compared with ``wh40k list show --format
json``. The matchups are those ``wh40k matchups`` writes into a copy of that database."""

from __future__ import annotations

import json
import re
import shutil
from pathlib import Path

import duckdb
import httpx
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from pipeline.cli import run
from pipeline.limits import MAX_LIST_BYTES
from pipeline.service.app import MAX_JSON_BODY_BYTES
from tests.editions_db import editions_db
from tests.service_server import served

ARMY = """Test Sisters (1000 points)

Adepta Sororitas
Strike Force (2000 Point)
Hallowed Martyrs

CHARACTER

Canoness (60 points)
  • Warlord
  • 1x Blessed blade

BATTLELINE

Battle Sisters Squad (110 points)
  • 9x Battle Sister
  • 1x Sister Superior

OTHER DATASHEETS

Seraphim Squad (80 points)
  • 5x Seraphim
"""


@pytest.fixture(scope="module")
def api():
    with served(editions_db()) as base, httpx.Client(base_url=base, timeout=60) as client:
        yield client


@pytest.fixture(scope="module")
def shown(tmp_path_factory) -> dict:
    """``wh40k list show ARMY --format json`` over the test database (in this process)."""
    file = tmp_path_factory.mktemp("army") / "army.txt"
    file.write_text(ARMY, encoding="utf-8")
    return {"file": file}


def list_show(capsys, file: Path, *args: str) -> dict:
    capsys.readouterr()
    assert run(["list", "show", str(file), "--format", "json", "--db", str(editions_db()), *args]) == 0
    return json.loads(capsys.readouterr().out)


def test_a_list_as_text_as_bytes_and_uploaded_is_the_list_commands_json(api, shown, capsys):
    expected = list_show(capsys, shown["file"])
    as_text = api.post("/api/list", content=ARMY.encode(), headers={"content-type": "text/plain; charset=utf-8"})
    assert as_text.status_code == 200, as_text.text
    assert as_text.json() == expected
    assert [(u["name"], u["datasheet_id"]) for u in expected["units"]][:2] == [
        ("Canoness", "11e/adepta-sororitas/canoness"),
        ("Battle Sisters Squad", "11e/adepta-sororitas/battle-sisters-squad")]
    assert "unit 'Seraphim Squad' (line 21)" in expected["unmatched"]  # not in the test database
    as_bytes = api.post("/api/list", content=ARMY.encode(), headers={"content-type": "application/octet-stream"})
    assert as_bytes.json() == expected
    uploaded = api.post("/api/list", files={"file": ("army.txt", ARMY.encode(), "text/plain")})
    assert uploaded.status_code == 200 and uploaded.json() == expected
    tenth = api.post("/api/list", params={"edition": 10}, content=ARMY.encode())
    assert tenth.json() == list_show(capsys, shown["file"], "--edition", "10")
    assert tenth.json()["units"][0]["datasheet_id"] == "10e/adepta-sororitas/canoness"


@pytest.mark.parametrize(("request_args", "status", "detail"), [
    ({"content": b"", "headers": {"content-type": "text/plain"}}, 422,
     "the army list is empty; send the list's text as exported from the Warhammer app, New Recruit, ListForge or "
     "War Organ, or a BattleScribe roster"),
    ({"content": b"hello there\n", "headers": {"content-type": "text/plain"}}, 422, None),
    ({"content": b"\xff\xfe army", "headers": {"content-type": "text/plain"}}, 422,
     "line 1: not UTF-8 text (byte 0); save the list as UTF-8"),
    ({"json": {"list": ARMY}}, 415,
     "content-type application/json: send the army list as text/plain, application/octet-stream or the field 'file' "
     "of a multipart/form-data form"),
    ({"files": {"army": ("army.txt", b"x")}}, 422,
     "the form has no file field 'file'; upload the list as the field 'file', e.g. curl -F file=@army.txt"),
    ({"content": b"x" * (MAX_LIST_BYTES + 65 * 1024), "headers": {"content-type": "text/plain"}}, 413,
     f"the request body has {MAX_LIST_BYTES + 65 * 1024} bytes: at most {MAX_LIST_BYTES + 64 * 1024} bytes for "
     "POST /api/list (an army list and its form); send a smaller body"),
])
def test_a_list_that_cannot_be_read_is_a_4xx_that_says_why(api, request_args, status, detail):
    got = api.post("/api/list", **request_args)
    assert got.status_code == status, got.text
    assert set(got.json()) == {"detail"} and "\n" not in got.json()["detail"]
    if detail is not None:
        assert got.json()["detail"] == detail
    else:
        assert got.json()["detail"].startswith("line 1: not an army list of a known format")


def test_a_body_without_a_length_is_cut_at_the_limit(api):
    """A chunked body (no content-length) is refused once the bytes received pass the limit."""
    def chunks():
        for _ in range(100):
            yield b"x" * 1024
    got = api.post("/api/attack", content=chunks(), headers={"content-type": "application/json"})
    assert got.status_code == 413
    assert re.fullmatch(rf"the request body has (over )?\d+ bytes: at most {MAX_JSON_BODY_BYTES} bytes for POST "
                        r"/api/attack \(a JSON request\); send a smaller body", got.json()["detail"])


def test_an_attack_body_over_the_limit_is_a_413(api):
    body = {"attacker": "Battle Sisters Squad", "target": "MEQ", "weapons": ["x" * 100] * 1000}
    got = api.post("/api/attack", json=body)
    assert got.status_code == 413
    assert "at most 65536 bytes for POST /api/attack" in got.json()["detail"]


def test_matchups_of_an_empty_table_are_a_409_that_names_the_command(api):
    got = api.get("/api/matchups")
    assert got.status_code == 409
    assert got.json()["detail"] == (
        "the matchups table is empty: fill it with `wh40k matchups` (every weapon profile against every target; "
        "a few minutes), then ask again")


@pytest.fixture(scope="module")
def filled(tmp_path_factory) -> Path:
    """A copy of the test database with its matchups tables filled by ``wh40k matchups``."""
    path = tmp_path_factory.mktemp("matchups") / "editions.duckdb"
    shutil.copy(editions_db(), path)
    assert run(["matchups", "--db", str(path), "--edition", "10", "--format", "json"]) == 0
    return path


def test_matchups_filtered_by_weapon_attacker_target_and_edition(filled):
    con = duckdb.connect(str(filled), read_only=True)
    expected = con.execute(
        """SELECT w.weapon_name, w.profile_name, m.expected_models_destroyed FROM matchup_weapons w
           JOIN matchups m USING (edition, weapon_key) JOIN matchup_targets t USING (edition, target_key)
           WHERE w.edition = 10 AND w.datasheet_id = '10e/adepta-sororitas/battle-sisters-squad'
             AND lower(w.weapon_name) LIKE '%boltgun%' AND t.target_id = 'MEQ'
           ORDER BY w.weapon_name, w.profile_name""").fetchall()
    (in_edition_10,) = con.execute(
        "SELECT count(*) FROM matchup_weapons w JOIN matchups m USING (edition, weapon_key) "
        "JOIN matchup_targets t USING (edition, target_key) WHERE w.edition = 10").fetchone()
    con.close()
    with served(filled) as base, httpx.Client(base_url=base, timeout=60) as client:
        got = client.get("/api/matchups", params={"weapon": "boltgun", "attacker": "battle sisters", "target": "meq",
                                                   "edition": 10})
        assert got.status_code == 200, got.text
        rows = got.json()["matchups"]
        assert got.json()["total"] == len(rows) == len(expected) >= 1 and got.json()["note"] is None
        assert {(r["attacker"], r["target_id"], r["target_kind"], r["is_melee"]) for r in rows} == {
            ("Battle Sisters Squad", "MEQ", "standard", False)}
        # part of the name: the Boltgun and the Condemnor boltgun
        assert sorted((r["weapon_name"], r["profile_name"], r["expected_models_destroyed"]) for r in rows) == expected
        assert [r[0] for r in expected] == ["Boltgun", "Condemnor boltgun"]
        every = client.get("/api/matchups", params={"edition": 10, "limit": 5}).json()
        assert every["total"] == in_edition_10 and len(every["matchups"]) == 5
        destroyed = [r["expected_models_destroyed"] for r in every["matchups"]]
        assert destroyed == sorted(destroyed, reverse=True)
        none = client.get("/api/matchups", params={"weapon": "lascannon", "target": "MEQ"}).json()
        assert none == {"matchups": [], "total": 0, "note": (
            "no matchup has weapon 'lascannon' and target 'MEQ'; loosen a filter (each is part of a name, "
            "ignoring case)")}


@settings(max_examples=40, derandomize=True, deadline=None, database=None,
          suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(body=st.one_of(st.binary(max_size=2048), st.text(max_size=2048).map(str.encode),
                      st.sampled_from(ARMY.splitlines(keepends=True)).map(str.encode),
                      st.lists(st.sampled_from(ARMY.splitlines(keepends=True)), max_size=40).map(
                          lambda lines: "".join(lines).encode())))
def test_any_body_sent_as_a_list_is_an_answer_or_a_422(api, body):
    got = api.post("/api/list", content=body, headers={"content-type": "text/plain"})
    assert got.status_code in (200, 422), got.text
    if got.status_code == 422:
        assert set(got.json()) == {"detail"} and "\n" not in got.json()["detail"]


SQUAD = """Test Sisters (1000 points)

Adepta Sororitas
Strike Force (2000 Point)
Hallowed Martyrs

BATTLELINE

Battle Sisters Squad (110 points)
  • 9x Battle Sister
    • 9x Boltgun
    • 9x Close combat weapon
  • 1x Sister Superior
    • 1x Bolt pistol
    • 1x Boltgun
"""


def test_a_matchup_of_two_lists_is_the_matchup_commands_json(api, tmp_path, capsys):
    mine, theirs = tmp_path / "mine.txt", tmp_path / "theirs.txt"
    mine.write_text(SQUAD, encoding="utf-8")
    theirs.write_text(ARMY, encoding="utf-8")
    capsys.readouterr()
    assert run(["matchup", str(mine), str(theirs), "--edition", "10", "--format", "json",
                "--db", str(editions_db())]) == 0
    expected = json.loads(capsys.readouterr().out)
    expected["summary"].pop("seconds")
    got = api.post("/api/matchup", json={"mine": SQUAD, "theirs": ARMY, "edition": 10})
    assert got.status_code == 200, got.text
    assert got.json() == expected
    fired = [r for r in expected["rows"] if r["method"] != "no weapon"]
    assert fired and all(r["attacker"] == "Battle Sisters Squad" for r in expected["rows"])
    assert {r["phase"] for r in fired} == {"shooting", "fight"}
    shooting = api.post("/api/matchup", json={"mine": SQUAD, "theirs": ARMY, "edition": 10, "phase": "shooting"})
    assert {r["phase"] for r in shooting.json()["rows"]} == {"shooting"}


@pytest.mark.parametrize(("body", "status", "detail"), [
    ({"mine": "hello there\n", "theirs": ARMY}, 422, None),
    ({"mine": SQUAD, "theirs": ARMY, "colour": "red"}, 422,
     "body field 'colour': Extra inputs are not permitted; see /docs for what the request takes"),
    ({"mine": SQUAD}, 422, "body field 'theirs': Field required; see /docs for what the request takes"),
])
def test_a_matchup_that_cannot_be_read_is_a_422_that_says_why(api, body, status, detail):
    got = api.post("/api/matchup", json=body)
    assert got.status_code == status, got.text
    if detail is None:
        assert got.json()["detail"].startswith("line 1: not an army list of a known format")
    else:
        assert got.json()["detail"] == detail


def test_a_matchup_body_over_two_lists_is_a_413(api):
    got = api.post("/api/matchup", content=b"x" * (2 * MAX_LIST_BYTES + 65 * 1024),
                   headers={"content-type": "application/json"})
    assert got.status_code == 413
    assert got.json()["detail"].endswith(f"at most {2 * MAX_LIST_BYTES + 64 * 1024} bytes for POST /api/matchup "
                                         "(two army lists); send a smaller body")


def test_matchup_plot_is_a_heatmap_whose_cells_are_the_rows(tmp_path, capsys):
    import xml.etree.ElementTree as ET

    mine, theirs = tmp_path / "mine.txt", tmp_path / "theirs.txt"
    mine.write_text(SQUAD, encoding="utf-8")
    theirs.write_text(ARMY, encoding="utf-8")
    path = tmp_path / "matchup.svg"
    capsys.readouterr()
    assert run(["matchup", str(mine), str(theirs), "--edition", "10", "--format", "json", "--plot", str(path),
                "--db", str(editions_db())]) == 0
    out = capsys.readouterr()
    assert f"chart written to {path}" in out.err.splitlines()
    rows = json.loads(out.out)["rows"]
    labels = list(dict.fromkeys(f"{r['attacker']} ({r['phase']})" for r in rows))
    targets = list(dict.fromkeys(r["target"] for r in rows))
    cells = {}
    for group in ET.parse(path).getroot().iter("{http://www.w3.org/2000/svg}g"):
        found = re.fullmatch(r"cell-(\d+)-(\d+)", group.get("id", ""))
        if found:
            cells[(int(found.group(1)), int(found.group(2)))] = "".join(
                t.text or "" for t in group.iter("{http://www.w3.org/2000/svg}text"))
    assert cells == {(labels.index(f"{r['attacker']} ({r['phase']})"), targets.index(r["target"])):
                     f"{r['expected_models_destroyed']:.2f}" for r in rows if r["expected_models_destroyed"] is not None}
    assert any(float(v) > 0 for v in cells.values())
