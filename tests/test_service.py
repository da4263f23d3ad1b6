"""``wh40k serve``: the HTTP JSON API, tested against a real server on 127.0.0.1 (a subprocess,
``tests/service_server.py``) with httpx, over the test database of both editions
(``tests/editions_db.py``). Each answer is compared with the command line's ``--format json``."""

from __future__ import annotations

import hashlib
import json
import re
from pathlib import Path

import httpx
import pytest

from pipeline.cli import run
from tests.editions_db import editions_db
from tests.service_server import served


@pytest.fixture(scope="module")
def db() -> Path:
    return editions_db()


@pytest.fixture(scope="module")
def api(db):
    with served(db) as base, httpx.Client(base_url=base, timeout=60) as client:
        yield client


def cli_json(capsys, *args: str):
    """The JSON that ``wh40k ARGS --format json`` prints (run in this process)."""
    capsys.readouterr()
    status = run([*args, "--format", "json"])
    out = capsys.readouterr()
    assert status == 0, out.err
    return json.loads(out.out)


def test_one_unit_is_the_unit_commands_json(api, db, capsys):
    got = api.get("/api/unit", params={"name": "Battle Sisters Squad"})
    assert got.status_code == 200
    answer = got.json()
    assert answer.pop("notes") == []
    assert answer == cli_json(capsys, "unit", "Battle Sisters Squad", "--db", str(db))
    assert answer["datasheet"]["datasheet_id"] == "11e/adepta-sororitas/battle-sisters-squad"
    tenth = api.get("/api/unit", params={"name": "Battle Sisters Squad", "edition": 10}).json()
    assert tenth["datasheet"]["datasheet_id"] == "10e/adepta-sororitas/battle-sisters-squad"


def test_a_unit_of_another_edition_only_comes_with_its_note(api):
    answer = api.get("/api/unit", params={"name": "Exorcist"}).json()
    assert answer["datasheet"]["edition"] == 10
    assert answer["notes"] == ["Exorcist: no datasheet of edition 11 (the latest in the database); "
                               "showing edition 10's (10e/adepta-sororitas/exorcist)"]


def test_units_and_weapons_lists(api, db, capsys):
    units = api.get("/api/units").json()
    assert units["edition"] == 11 and units["note"] is None
    assert units["units"] == cli_json(capsys, "units", "--db", str(db))
    assert [u["name"] for u in units["units"]] == [
        "Battle Sisters Squad", "Canoness", "Penitent Walker", "Sister Squad", "Test Canoness", "Test Thurga"]
    every = api.get("/api/units", params={"name": "canoness", "every_edition": "true"}).json()
    assert {(u["name"], u["edition"]) for u in every["units"]} == {
        ("Canoness", 10), ("Canoness", 11), ("Test Canoness", 11)}
    none = api.get("/api/units", params={"name": "exorcist"}).json()
    assert none["units"] == [] and "edition 10 has 1 matching unit (--edition 10)" in none["note"]
    weapons = api.get("/api/weapons", params={"name": "bolt", "edition": 10}).json()
    shown = cli_json(capsys, "weapons", "--name", "bolt", "--edition", "10", "--db", str(db))
    # the command shows some columns; the API gives every one (with datasheet_id and source_id)
    assert [{k: w[k] for k in shown[0]} for w in weapons["weapons"]] == shown
    assert weapons["weapons"] and all("bolt" in w["weapon_name"].lower() for w in weapons["weapons"])


def test_attack_is_the_attack_commands_json(api, db, capsys):
    body = {"attacker": "Battle Sisters Squad", "target": "MEQ", "half_range": True, "reroll_hits": "ones"}
    got = api.post("/api/attack", json=body)
    assert got.status_code == 200
    # the API gives each step with its wording, as the command does with --explain
    expected = cli_json(capsys, "attack", "Battle Sisters Squad", "--target", "MEQ", "--half-range",
                        "--reroll-hits", "ones", "--explain", "--db", str(db))
    assert got.json() == expected
    assert sum(got.json()["models_destroyed"]["pmf"]) == pytest.approx(1.0, abs=1e-12)
    # the cached answer is the same
    assert api.post("/api/attack", json=body).json() == expected
    damaged = api.post("/api/attack", json={**body, "damaged": True, "cover": True})
    assert damaged.json() == cli_json(capsys, "attack", "Battle Sisters Squad", "--target", "MEQ", "--half-range",
                                      "--reroll-hits", "ones", "--damaged", "--cover", "--explain", "--db", str(db))
    assert damaged.json()["hits"]["mean"] < expected["hits"]["mean"]


def test_attack_in_the_fight_phase_with_an_inline_target_and_edition_10(api, db, capsys):
    body = {"attacker": "Canoness", "target": "T4 Sv3+ W2 x5 inv5+ INFANTRY", "phase": "fight", "edition": 10,
            "charged": True, "feel_no_pain": 6}
    got = api.post("/api/attack", json=body)
    assert got.status_code == 200, got.text
    assert got.json() == cli_json(capsys, "attack", "Canoness", "--target", "T4 Sv3+ W2 x5 inv5+ INFANTRY",
                                  "--phase", "fight", "--edition", "10", "--charged", "--fnp", "6",
                                  "--explain", "--db", str(db))
    assert got.json()["target"]["feel_no_pain"] == 6 and got.json()["target"]["invulnerable_save"] == 5


def test_rule_rule_diff_and_search_are_the_commands_json(api, db, capsys):
    rule = api.get("/api/rule", params={"name": "Lethal Hits", "edition": 10}).json()
    assert rule.pop("notes") == []
    assert rule == cli_json(capsys, "rule", "Lethal Hits", "--edition", "10", "--db", str(db))
    assert (rule["source_id"], rule["edition"]) == ("bsdata_gst_xml_10e", 10)
    diff = api.get("/api/rule-diff", params={"name": "Lethal Hits"}).json()
    assert diff == cli_json(capsys, "rule-diff", "Lethal Hits", "--db", str(db))
    assert diff["from"]["edition"] == 10 and diff["to"]["edition"] == 11
    hits = api.get("/api/search", params={"text": "lethal hits", "limit": 5}).json()
    assert hits["hits"] == cli_json(capsys, "search", "lethal hits", "--limit", "5", "--db", str(db))
    assert hits["hits"][0]["name"] == "Lethal Hits"


@pytest.mark.parametrize(("method", "path", "params", "status", "detail"), [
    ("get", "/api/unit", {"name": "Battle Sister Squad"}, 404,
     "no unit named 'Battle Sister Squad'; did you mean: Battle Sisters Squad, Sister Squad?"),
    ("get", "/api/unit", {"name": "Exorcist", "edition": 11}, 404,
     "no unit named 'Exorcist' in edition 11; it is in: edition 10 (matched); change or drop --edition / --mode"),
    ("get", "/api/units", {"edition": "eleven"}, 422,
     "query parameter 'edition': Input should be a valid integer, unable to parse string as an integer; "
     "see /docs for what the request takes"),
    ("get", "/api/units", {"edition": 9}, 422,
     "query parameter 'edition': Input should be greater than or equal to 10; see /docs for what the request takes"),
    ("get", "/api/unit", {}, 422, "query parameter 'name': Field required; see /docs for what the request takes"),
    ("get", "/api/rule", {"name": "Lethal Hits", "on": "15/01/2025"}, 422,
     "query parameter 'on': Input should be a valid date or datetime, invalid character in year; "
     "see /docs for what the request takes"),
    ("get", "/api/search", {"text": "!!"}, 422,
     "search text '!!' has no word of two letters or more; give a word such as 'lethal'"),
    ("post", "/api/attack", {"attacker": "Battle Sisters Squad", "target": "T4 W2 x10"}, 422, None),
    ("post", "/api/attack", {"attacker": "Battle Sisters Squad", "target": "MEQ", "models": 5000}, 422,
     "body field 'models': Input should be less than or equal to 1000; see /docs for what the request takes"),
    ("post", "/api/attack", {"attacker": "Battle Sisters Squad", "target": "MEQ", "weapons": ["lascannon"]}, 404, None),
    ("post", "/api/attack", {"attacker": "Battle Sisters Squad", "target": "MEQ", "colour": "red"}, 422,
     "body field 'colour': Extra inputs are not permitted; see /docs for what the request takes"),
])
def test_errors_say_what_and_how_to_fix(api, method, path, params, status, detail):
    got = api.get(path, params=params) if method == "get" else api.post(path, json=params)
    assert got.status_code == status, got.text
    body = got.json()
    assert set(body) == {"detail"} and "\n" not in body["detail"]
    if detail is not None:
        assert body["detail"] == detail


def test_the_inline_profile_error_and_the_unknown_weapon_are_the_commands(api, db, capsys):
    bad = api.post("/api/attack", json={"attacker": "Battle Sisters Squad", "target": "T4 W2 x10"}).json()
    capsys.readouterr()
    assert run(["attack", "Battle Sisters Squad", "--target", "T4 W2 x10", "--db", str(db)]) == 1
    assert capsys.readouterr().err.strip() == f"Error: {bad['detail']}"
    missing = api.post("/api/attack", json={"attacker": "Battle Sisters Squad", "target": "MEQ",
                                            "weapons": ["lascannon"]}).json()
    assert missing["detail"].startswith("no weapon 'lascannon'") or "lascannon" in missing["detail"]


def test_a_body_that_is_not_json_is_a_400_that_says_so(api):
    got = api.post("/api/attack", content=b"\x1f\xff", headers={"content-type": "application/json"})
    assert got.status_code == 400
    assert got.json()["detail"] == (
        "the request body is not JSON (There was an error parsing the body); send a JSON object such as "
        '{"attacker": "Battle Sisters Squad", "target": "MEQ"} with the header content-type: application/json')


def test_no_endpoint_writes_and_only_attack_and_list_take_a_post(api, db):
    before = hashlib.sha256(db.read_bytes()).hexdigest()
    schema = api.get("/openapi.json").json()
    methods = {(path, method) for path, ops in schema["paths"].items() for method in ops}
    assert methods == {(p, "get") for p in ("/api/info", "/api/units", "/api/unit", "/api/weapons", "/api/rule",
                                            "/api/rule-diff", "/api/rule-changes", "/api/search", "/api/matchups")} | {
        ("/api/attack", "post"), ("/api/list", "post"), ("/api/matchup", "post")}
    for path in ("/api/unit", "/api/units", "/api/rule"):
        assert api.delete(path).status_code == 405
        assert api.put(path, json={}).status_code == 405
    assert api.get("/api/rule-changes").status_code == 200
    assert hashlib.sha256(db.read_bytes()).hexdigest() == before


def test_info_and_the_page_are_served(api):
    info = api.get("/api/info").json()
    assert info["editions"] == [10, 11] and info["latest_edition"] == 11
    assert info["standard_profiles"]["MEQ"] == "T4 Sv3+ W2 x10 INFANTRY"
    page = api.get("/")
    assert page.status_code == 200 and page.headers["content-type"].startswith("text/html")
    assert '<script src="app.js"' in page.text
    script = api.get("/app.js")
    assert script.status_code == 200 and "fetch(" in script.text


def test_serve_refuses_a_missing_database_and_a_port_in_use(tmp_path, capsys, db):
    assert run(["serve", "--db", str(tmp_path / "none.duckdb")]) == 1
    assert capsys.readouterr().err.strip() == (
        f"Error: {tmp_path / 'none.duckdb'}: no database; build it with `make build-db` (or `wh40k build`)")
    import socket

    with socket.socket() as busy:
        busy.bind(("127.0.0.1", 0))
        busy.listen()
        port = busy.getsockname()[1]
        assert run(["serve", "--port", str(port), "--db", str(db)]) == 1
    err = capsys.readouterr().err.strip()
    assert err == f"Error: --port {port}: cannot listen on 127.0.0.1:{port} (Address already in use); choose another --port"


def test_the_documentation_page_names_no_other_host(api):
    page = api.get("/docs")
    assert page.status_code == 200 and page.headers["content-type"].startswith("text/html")
    assert "http://" not in page.text and "https://" not in page.text and "//cdn" not in page.text
    files = re.findall(r"""(?:src|href)=["']([^"']+)["']""", page.text)
    assert len(files) >= 2  # the script and the icon (and the style sheet of Swagger UI)
    for file in files:
        assert file.startswith("/static-offline-docs/"), file
        assert api.get(file).status_code == 200
    assert api.get("/redoc").status_code == 404  # ReDoc's page loads its logo from its vendor: not served
