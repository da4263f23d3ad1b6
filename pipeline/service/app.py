"""The HTTP JSON API of ``wh40k serve`` (FastAPI; its OpenAPI schema at ``/openapi.json``, the
interactive documentation at ``/docs``) and the web page (``/``).

Every endpoint reads; none writes. The database (a DuckDB file, ``sqlite:///FILE`` or
``postgresql://...``) is opened read-only through ``query.open_database`` (the sandbox and the
schema check of ``pipeline.database``) when the application starts; a DuckDB file is served from
a SQLite copy, each worker thread reads through its own connection, and a database file that is
replaced while the server runs is opened again on the next request (``pipeline.service.reader``).
Answers are those of the command line, from the same
functions: ``/api/unit`` is ``wh40k unit --format json``, ``/api/rule`` is ``wh40k rule
--format json``, ``POST /api/attack`` is ``wh40k attack --format json``.

Errors are JSON ``{"detail": "<what, where, how to fix>"}``: a name that matches nothing
(``NotFoundError``) is 404, an input that cannot be read or is over a limit (``InputError``,
or a value of the wrong type or range) is 422, a database that cannot be read is 503.

Because the database cannot change under a running server, answers are kept in a small cache
(``cache_size`` answers, least recently used first out), emptied when the file is replaced.
"""

from __future__ import annotations

import dataclasses
import datetime as dt
import hashlib
import json
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any, AsyncIterator, Callable, Literal, Optional

from fastapi import Body, FastAPI, Query, Request
from fastapi.concurrency import run_in_threadpool
from fastapi.exceptions import RequestValidationError
from fastapi.responses import FileResponse, JSONResponse, Response
from fastapi_offline import FastAPIOffline
from starlette.exceptions import HTTPException as StarletteHTTPException
from pydantic import BaseModel, ConfigDict, Field

from pipeline import limits, query
from pipeline.cli.output import _plain
from pipeline.errors import DatabaseError, InputError, NotFoundError, Wh40kError
from pipeline.service import DEFAULT_CACHE_SIZE, answers
from pipeline.service.reader import Database

STATIC = Path(__file__).resolve().parent / "static"


# --- response and request models (the OpenAPI schema) ---------------------------------------

class Open(BaseModel):
    """A JSON object that may carry more fields than those declared."""

    model_config = ConfigDict(extra="allow")


class ErrorBody(BaseModel):
    detail: str = Field(description="What went wrong, where, and how to fix it (one line).")


ERRORS = {404: {"model": ErrorBody, "description": "A name that matches nothing (with close names)"},
          422: {"model": ErrorBody, "description": "An input that cannot be read or is over a limit"},
          503: {"model": ErrorBody, "description": "The database cannot be read"}}
TOO_LARGE = {413: {"model": ErrorBody, "description": "A request body over the limit of its endpoint"}}
BODY_ERRORS = {400: {"model": ErrorBody, "description": "A request body that is not JSON"}, **ERRORS, **TOO_LARGE}
LIST_ERRORS = {**ERRORS, **TOO_LARGE,
               415: {"model": ErrorBody, "description": "A body of another media type than the list's"}}
MATCHUP_ERRORS = {**ERRORS, 409: {"model": ErrorBody, "description": "The matchups table is empty"}}

#: The request body of ``POST /api/list``: the exported list's text or file, as is, or uploaded.
LIST_BODY = {"required": True, "content": {
    "text/plain": {"schema": {"type": "string", "minLength": 1}},
    "application/octet-stream": {"schema": {"type": "string", "format": "binary"}},
    "multipart/form-data": {"schema": {"type": "object", "required": ["file"], "properties": {
        "file": {"type": "string", "format": "binary", "description": "The exported list's file"}}}},
}}

#: The example request of the attack's errors and documentation.
ATTACK_EXAMPLE = '{"attacker": "Battle Sisters Squad", "target": "MEQ"}'


class Info(BaseModel):
    database: str
    editions: list[int]
    latest_edition: int
    standard_profiles: dict[str, str]


class UnitRow(Open):
    name: str
    datasheet_id: str
    faction_id: Optional[str] = None
    edition: Optional[int] = None
    game_mode: Optional[str] = None
    starting_strength: Optional[int] = None
    source_id: str


class UnitList(BaseModel):
    edition: Optional[int] = Field(description="The edition listed (null: every edition)")
    units: list[UnitRow]
    note: Optional[str] = Field(None, description="Why nothing matched, when nothing did")


class UnitAnswer(Open):
    datasheet: dict[str, Any]
    model_profiles: list[dict[str, Any]]
    weapons: list[dict[str, Any]]
    abilities: list[dict[str, Any]]
    keywords: list[dict[str, Any]]
    loadout: list[dict[str, Any]]
    data_gaps: list[dict[str, Any]]
    errata: list[dict[str, Any]]
    notes: list[str]


class WeaponList(BaseModel):
    edition: int
    weapons: list[dict[str, Any]]
    note: Optional[str] = None


class ChainStep(BaseModel):
    source_id: str
    kind: str
    game_mode: Optional[str] = None
    effective_date: Optional[str] = None
    verdict: str


class RulingOut(Open):
    rule_key: str
    title: str
    section: Optional[str] = None
    edition: int
    game_mode: str
    on: Optional[str] = None
    text: str
    source_id: str
    locator: str
    part_of: Optional[str] = None
    language: str
    note: Optional[str] = None
    erratum_id: Optional[str] = None
    chain: list[ChainStep]


class RuleAnswer(RulingOut):
    errata: list[dict[str, Any]]
    notes: list[str]


class Change(BaseModel):
    op: str
    from_: str = Field(alias="from")
    to: str


class RuleDiffAnswer(BaseModel):
    from_: RulingOut = Field(alias="from")
    to: RulingOut
    changes: list[Change]
    marked: str = Field(description="The new text with [-removed-] and {+added+} words")


class RuleChanges(BaseModel):
    rules: list[dict[str, Any]]


class SearchHit(BaseModel):
    kind: str
    name: str
    edition: Optional[int] = None
    language: str
    source_id: str
    locator: str
    score: float
    passage: str


class SearchAnswer(BaseModel):
    hits: list[SearchHit]
    note: Optional[str] = None


class StageOut(BaseModel):
    mean: float
    pmf: list[float] = Field(description="P(exactly k), k = 0, 1, ...")


class ExplainOut(Open):
    rule_key: str
    summary: str
    edition: int
    title: Optional[str] = None
    section: Optional[str] = None
    source_id: Optional[str] = None
    locator: Optional[str] = None
    note: Optional[str] = None


class AttackAnswer(Open):
    """``wh40k attack --format json``: each stage's mean and pmf, the inputs used, the steps."""

    attacker: str
    weapons: list[dict[str, Any]]
    target: dict[str, Any]
    attacks: StageOut
    hits: StageOut
    wounds: StageOut
    unsaved: StageOut
    mortal_wounds: StageOut
    damage: StageOut
    models_destroyed: StageOut
    target_destroyed: float
    hazardous_mortal_wounds: float
    notes: list[str]
    steps: list[dict[str, Any]]
    choices: dict[str, Any]
    explain: list[ExplainOut]
    input_notes: list[str]


class ListAnswer(Open):
    """``wh40k list show --format json``: the list's facts, its units matched to datasheets."""

    format: str
    edition: Optional[int] = None
    units: list[dict[str, Any]]
    attachments: list[dict[str, Any]]
    unmatched: list[str]
    notes: list[str]


class MatchupRow(BaseModel):
    edition: int
    datasheet_id: str
    attacker: str
    weapon_name: str
    profile_name: str
    is_melee: bool
    models: int
    target_id: str
    target_name: str
    target_kind: str
    target_models: int
    expected_damage: Optional[float] = None
    expected_models_destroyed: Optional[float] = None
    p_any_destroyed: Optional[float] = None
    p_unit_destroyed: Optional[float] = None
    resolution: str


class MatchupList(BaseModel):
    matchups: list[MatchupRow]
    total: int = Field(description="Rows matching the filters (``matchups`` holds at most ``limit`` of them)")
    note: Optional[str] = Field(None, description="Why nothing matched, when nothing did")


class MatchupBody(BaseModel):
    """Two army lists as exported (text: Warhammer app, New Recruit, ListForge, War Organ, or a
    BattleScribe ``.ros`` roster's XML), the attacker's first."""

    model_config = ConfigDict(extra="forbid")

    mine: str = Field(min_length=1, max_length=limits.MAX_LIST_BYTES, description="The attacking army list")
    theirs: str = Field(min_length=1, max_length=limits.MAX_LIST_BYTES, description="The target army list")
    phase: Literal["shooting", "fight", "both"] = "both"
    edition: Optional[int] = Field(None, ge=10, le=11, description=(
        "The rules and datasheets (default: the edition mine shows, else theirs's, else the latest)"))


class MatchupPair(BaseModel):
    attacker: str
    target: str
    phase: str
    weapons: Any = Field(None, description="The weapons the attacking unit fires (as wh40k matchup gives them)")
    target_models: Optional[int] = None
    expected_models_destroyed: Optional[float] = None
    p_unit_destroyed: Optional[float] = None
    expected_damage: Optional[float] = None
    method: str


class MatchupAnswer(BaseModel):
    """``wh40k matchup --format json``: a row per (attacking unit, target unit, phase)."""

    summary: dict[str, Any]
    rows: list[MatchupPair]
    notes: list[str]


Reroll = Literal["ones", "failed", "all"]
Language = Literal["en", "de", "es", "fr", "it", "ja", "ko", "zh"]


class AttackBody(BaseModel):
    """The request of ``pipeline.engine.service.AttackRequest`` (and of ``wh40k attack``'s
    options) as JSON."""

    model_config = ConfigDict(extra="forbid", json_schema_extra={"examples": [
        {"attacker": "Battle Sisters Squad", "target": "MEQ", "half_range": True}]})

    attacker: str = Field(min_length=1, max_length=limits.MAX_NAME_LENGTH,
                          description="Attacking unit: name or datasheet id")
    target: str = Field(min_length=1, max_length=limits.MAX_NAME_LENGTH, description=(
        "A unit name, a standard profile (GEQ, MEQ, TEQ, VEHICLE, MONSTER) or an inline profile "
        "such as \"T4 Sv3+ W2 x10 inv4+ fnp5+ INFANTRY\""))
    phase: Literal["shooting", "fight"] = "shooting"
    weapons: list[str] = Field(default_factory=list, max_length=limits.MAX_WEAPONS_PER_ATTACK, description=(
        "Weapons to use, e.g. 'boltgun' or '2 heavy bolters' (default: the loadout)"))
    models: Optional[int] = Field(None, ge=1, le=limits.MAX_MODELS_PER_WEAPON)
    target_models: Optional[int] = Field(None, ge=1, le=limits.MAX_TARGET_WOUNDS)
    feel_no_pain: Optional[int] = Field(None, ge=2, le=6, description="The target's Feel No Pain (5 for 5+)")
    edition: Optional[int] = Field(None, ge=10, le=11, description="Default: the latest edition in the database")
    half_range: bool = False
    stationary: bool = False
    charged: bool = False
    cover: bool = False
    overwatch: bool = False
    damaged: bool = Field(False, description="The attacker is Damaged (-1 to hit)")
    indirect: bool = Field(False, description="Fire [INDIRECT FIRE] weapons indirectly")
    spotted: bool = Field(False, description="With indirect: the target is visible to a friendly unit")
    close_quarters: bool = Field(False, description="Close-quarters shooting (11th edition)")
    reroll_hits: Optional[Reroll] = None
    reroll_wounds: Optional[Reroll] = None
    hit_modifier: int = Field(0, ge=-6, le=6, description="Net hit roll modifier (the engine caps it at +/-1)")
    wound_modifier: int = Field(0, ge=-6, le=6, description="Net wound roll modifier (capped)")
    critical_hit_on: int = Field(6, ge=2, le=6, description="Unmodified hit roll that is a Critical Hit")
    damage_reduction: Optional[Literal["one", "half"]] = None

    def request(self):
        """The engine's ``AttackRequest``."""
        from pipeline.engine.profiles import Context
        from pipeline.engine.service import AttackRequest

        for weapon in self.weapons:
            limits.check_name(weapon, "weapon name")
        context = Context(
            half_range=self.half_range, stationary=self.stationary, charged=self.charged, cover=self.cover,
            overwatch=self.overwatch, damaged=self.damaged, indirect=self.indirect,
            target_visible_to_friendly_unit=self.spotted, close_quarters=self.close_quarters, reroll_hits=self.reroll_hits, reroll_wounds=self.reroll_wounds,
            hit_modifier=self.hit_modifier, wound_modifier=self.wound_modifier,
            critical_hit_on=self.critical_hit_on, damage_reduction=self.damage_reduction)
        return AttackRequest(
            attacker=self.attacker, target=self.target, phase=self.phase, weapons=tuple(self.weapons),
            models=self.models, target_models=self.target_models, feel_no_pain=self.feel_no_pain,
            context=context, edition=self.edition)


# --- the application ---------------------------------------------------------------------------

def _where(loc: tuple) -> str:
    """Where a validation error is, for people.

    >>> _where(("query", "edition")), _where(("body", "weapons", 2)), _where(("body",))
    ("query parameter 'edition'", "body field 'weapons.2'", 'the request body')
    """
    kind, *rest = loc
    if not rest:
        return "the request body" if kind == "body" else str(kind)
    path = ".".join(str(p) for p in rest)
    return f"{'query parameter' if kind == 'query' else 'body field' if kind == 'body' else kind} '{path}'"


#: The largest request body of each endpoint that takes one, in bytes (``BodyLimit``): an army
#: list (and a form's wrapping of it), a JSON request of names and options.
MAX_BODY_BYTES = {"/api/list": limits.MAX_LIST_BYTES + 64 * 1024, "/api/matchup": 2 * limits.MAX_LIST_BYTES + 64 * 1024}
MAX_JSON_BODY_BYTES = 64 * 1024


class BodyLimit:
    """ASGI middleware: a request whose body is over its endpoint's limit (``MAX_BODY_BYTES``,
    else ``MAX_JSON_BODY_BYTES``) is answered 413 without reading more of it: refused at once
    when its ``content-length`` says so, else when the bytes received pass the limit."""

    def __init__(self, app: Any) -> None:
        self.app = app

    async def __call__(self, scope: dict, receive: Callable, send: Callable) -> None:
        if scope["type"] != "http" or scope["method"] in ("GET", "HEAD", "OPTIONS"):
            await self.app(scope, receive, send)
            return
        limit = MAX_BODY_BYTES.get(scope["path"], MAX_JSON_BODY_BYTES)
        declared = dict(scope.get("headers") or ()).get(b"content-length")
        if declared is not None and declared.isdigit() and int(declared) > limit:
            await self._refuse(scope, send, int(declared), limit)
            return
        chunks, size, more = [], 0, True
        while more:
            message = await receive()
            if message["type"] == "http.disconnect":
                return
            chunks.append(message.get("body", b""))
            size += len(chunks[-1])
            more = message.get("more_body", False)
            if size > limit:
                await self._refuse(scope, send, size, limit, at_least=more)
                return
        body = b"".join(chunks)
        sent = False

        async def replay() -> dict:
            nonlocal sent
            if sent:
                return await receive()
            sent = True
            return {"type": "http.request", "body": body, "more_body": False}
        await self.app(scope, replay, send)

    @staticmethod
    async def _refuse(scope: dict, send: Callable, size: int, limit: int, at_least: bool = False) -> None:
        what = {"/api/list": "an army list and its form", "/api/matchup": "two army lists"}.get(
            scope["path"], "a JSON request")
        response = _error(413, f"the request body has {'over ' if at_least else ''}{size} bytes: at most {limit} bytes "
                               f"for {scope['method']} {scope['path']} ({what}); send a smaller body")
        await response(scope, _no_receive, send)


async def _no_receive() -> dict:
    return {"type": "http.disconnect"}


def _error(status: int, message: str) -> JSONResponse:
    return JSONResponse({"detail": message}, status_code=status)


def create_app(db: str | Path, cache_size: int = DEFAULT_CACHE_SIZE, copy: bool = True) -> FastAPI:
    """The FastAPI application over the database ``db`` (a DuckDB file path or a URL:
    ``pipeline.service.reader.Database``, opened read-only now: raises ``InputError`` for a
    URL of another kind, ``DatabaseError`` for a missing or foreign database). ``cache_size`` 0
    keeps no answers; ``copy`` False reads a DuckDB file itself rather than its SQLite copy."""
    database = Database(db, cache_size, copy)

    @asynccontextmanager
    async def lifespan(app: FastAPI) -> AsyncIterator[None]:
        yield
        database.close()  # removes the SQLite copy

    # Swagger UI at /docs with its files served here (fastapi-offline), no CDN and no validator
    # badge; no ReDoc (its page loads its logo from its vendor's CDN)
    app = FastAPIOffline(
        lifespan=lifespan, redoc_url=None, swagger_ui_parameters={"validatorUrl": None},
        title="wh40k rules database", version=_version(),
        description="Read-only answers of the Warhammer 40,000 rules database: units, weapons, rule "
                    "wordings with their sources, search, and exact attack distributions.")
    app.state.database = database
    app.add_middleware(BodyLimit)

    @app.exception_handler(NotFoundError)
    async def not_found(request: Request, exc: NotFoundError) -> JSONResponse:
        return _error(404, str(exc))

    @app.exception_handler(DatabaseError)
    async def database_error(request: Request, exc: DatabaseError) -> JSONResponse:
        return _error(503, str(exc))

    @app.exception_handler(Wh40kError)
    async def input_error(request: Request, exc: Wh40kError) -> JSONResponse:
        return _error(415 if isinstance(exc, UnsupportedMedia) else 409 if isinstance(exc, answers.EmptyTable)
                      else 422, str(exc))

    @app.exception_handler(StarletteHTTPException)
    async def http_error(request: Request, exc: StarletteHTTPException) -> JSONResponse:
        if exc.status_code == 400:  # a body that cannot be read as JSON
            return _error(400, f"the request body is not JSON ({exc.detail}); send a JSON object such as "
                               f"{ATTACK_EXAMPLE} with the header content-type: application/json")
        return _error(exc.status_code, str(exc.detail))

    @app.exception_handler(RequestValidationError)
    async def invalid(request: Request, exc: RequestValidationError) -> JSONResponse:
        first = exc.errors()[0]
        more = len(exc.errors()) - 1
        return _error(422, f"{_where(tuple(first.get('loc', ('request',))))}: {first.get('msg', 'invalid')}"
                           + (f" (and {more} more)" if more else "") + "; see /docs for what the request takes")

    async def ok(key: tuple, compute: Callable[[Any], Any]) -> Response:
        """The answer for ``key`` as a JSON response (its text is what is cached): from the cache
        on the event loop, else computed in a worker thread (the database and the engine block)."""
        body = database.cached(key)
        if body is None:
            body = await run_in_threadpool(database.answer, key, lambda con: json.dumps(
                _plain(compute(con)), ensure_ascii=False, allow_nan=False, separators=(",", ":")).encode())
        return Response(body, media_type="application/json")

    @app.get("/", include_in_schema=False)
    def page() -> FileResponse:
        return FileResponse(STATIC / "index.html", media_type="text/html")

    @app.get("/app.js", include_in_schema=False)
    def script() -> FileResponse:
        return FileResponse(STATIC / "app.js", media_type="text/javascript")

    @app.get("/api/info", response_model=Info, responses=ERRORS, summary="The database's editions")
    async def info() -> Response:
        from pipeline.engine.inputs import STANDARD_PROFILES

        def compute(con):
            return {"database": database.name, "editions": query.known_editions(con),
                    "latest_edition": query.latest_edition(con),
                    "standard_profiles": {k: _profile_text(t) for k, t in STANDARD_PROFILES.items()}}
        return await ok(("info",), compute)

    @app.get("/api/units", response_model=UnitList, responses=ERRORS, summary="Units (wh40k units)")
    async def units(
        name: Optional[str] = Query(None, max_length=limits.MAX_NAME_LENGTH, description="Part of the unit name"),
        faction: Optional[str] = Query(None, max_length=limits.MAX_NAME_LENGTH, description="Faction id"),
        edition: Optional[int] = Query(None, ge=10, le=11, description="10 or 11 (default: the latest in the database)"),
        every_edition: bool = Query(False, description="List the units of every edition"),
        limit: int = Query(1000, ge=1, le=100000, description="At most this many units"),
    ) -> Response:
        def compute(con):
            wanted = None if every_edition else query.resolve_edition(con, edition)
            rows = query.list_units(con, name=name, faction=faction, edition=wanted)
            note = None
            if not rows:
                note = (query.units_filter_note(con, name=name, faction=faction, edition=wanted)
                        if wanted is not None else "no unit matches")
            return {"edition": wanted, "units": list(rows)[:limit], "note": note}
        return await ok(("units", name, faction, edition, every_edition, limit), compute)

    @app.get("/api/unit", response_model=UnitAnswer, responses=ERRORS, summary="One unit (wh40k unit)")
    async def unit(
        name: str = Query(..., min_length=1, max_length=limits.MAX_NAME_LENGTH, description="Unit name or datasheet id"),
        edition: Optional[int] = Query(None, ge=10, le=11, description="10 or 11 (default: the latest in the database)"),
        mode: Optional[Literal["matched", "combat-patrol"]] = Query(None),
    ) -> Response:
        def compute(con):
            answer, notes = answers.unit_answer(con, name, edition, mode)
            return {**answer, "notes": notes}
        return await ok(("unit", name, edition, mode), compute)

    @app.get("/api/weapons", response_model=WeaponList, responses=ERRORS, summary="Weapons (wh40k weapons)")
    async def weapons(
        name: Optional[str] = Query(None, max_length=limits.MAX_NAME_LENGTH, description="Part of the weapon name"),
        ability: Optional[str] = Query(None, max_length=limits.MAX_NAME_LENGTH, description="A weapon ability"),
        edition: Optional[int] = Query(None, ge=10, le=11, description="10 or 11 (default: the latest in the database)"),
        limit: int = Query(1000, ge=1, le=100000),
    ) -> Response:
        def compute(con):
            wanted = query.resolve_edition(con, edition)
            rows = query.weapons(con, name=name, ability=ability, edition=wanted)
            note = None if rows else query.weapons_filter_note(con, name=name, ability=ability, edition=wanted)
            return {"edition": wanted, "weapons": list(rows)[:limit], "note": note}
        return await ok(("weapons", name, ability, edition, limit), compute)

    @app.get("/api/rule", response_model=RuleAnswer, responses=ERRORS, summary="The wording that applies (wh40k rule)")
    async def rule(
        name: str = Query(..., min_length=1, max_length=limits.MAX_NAME_LENGTH,
                          description="Rule name, alias or section number"),
        edition: Optional[int] = Query(None, ge=10, le=11, description="10 or 11 (default: the latest in the database)"),
        mode: Literal["matched", "combat-patrol"] = Query("matched"),
        on: Optional[dt.date] = Query(None, description="Date the game is played, YYYY-MM-DD"),
        lang: Optional[Language] = Query(None, description="The language of the wording (default: en, or the language of the name)"),
    ) -> Response:
        def compute(con):
            _, answer, notes = answers.rule_answer(con, name, edition, mode, on, lang)
            return {**answer, "notes": notes}
        return await ok(("rule", name, edition, mode, on, lang), compute)

    @app.get("/api/rule-diff", response_model=RuleDiffAnswer, responses=ERRORS,
             summary="A rule's changes between editions (wh40k rule-diff)")
    async def rule_diff(
        name: str = Query(..., min_length=1, max_length=limits.MAX_NAME_LENGTH),
        from_edition: int = Query(10, alias="from", ge=10, le=11),
        to_edition: int = Query(11, alias="to", ge=10, le=11),
        mode: Literal["matched", "combat-patrol"] = Query("matched"),
        on: Optional[dt.date] = Query(None, description="YYYY-MM-DD"),
    ) -> Response:
        from pipeline.rules import rule_diff as diff_of

        def compute(con):
            query.check_edition(con, from_edition, "from")
            query.check_edition(con, to_edition, "to")
            return diff_of(con, name, from_edition, to_edition, mode, on).as_dict()
        return await ok(("rule-diff", name, from_edition, to_edition, mode, on), compute)

    @app.get("/api/rule-changes", response_model=RuleChanges, responses=ERRORS,
             summary="Every core rule that changed between editions (wh40k rule-diff --all)")
    async def rule_changes(
        from_edition: int = Query(10, alias="from", ge=10, le=11),
        to_edition: int = Query(11, alias="to", ge=10, le=11),
        mode: Literal["matched", "combat-patrol"] = Query("matched"),
    ) -> Response:
        from pipeline.rules import changed_rules

        def compute(con):
            query.check_edition(con, from_edition, "from")
            query.check_edition(con, to_edition, "to")
            return {"rules": [r for r in changed_rules(con, from_edition, to_edition, mode) if r["status"] != "same"]}
        return await ok(("rule-changes", from_edition, to_edition, mode), compute)

    @app.get("/api/search", response_model=SearchAnswer, responses=ERRORS, summary="Find wordings (wh40k search)")
    async def search(
        text: str = Query(..., min_length=1, max_length=limits.MAX_NAME_LENGTH, description="Words to find"),
        edition: Optional[int] = Query(None, ge=10, le=11, description="10 or 11 (default: every edition)"),
        lang: Optional[Language] = Query(None, description="Only wordings in this language (default: every one)"),
        limit: int = Query(20, ge=1, le=500),
    ) -> Response:
        from pipeline.search import search as find

        def compute(con):
            answers.check_language(lang, "lang")
            query.check_edition(con, edition)
            hits = [dataclasses.asdict(h) for h in find(con, text, edition, lang, limit)]
            return {"hits": hits, "note": None if hits else f"nothing has every word of {text!r}"}
        return await ok(("search", text, edition, lang, limit), compute)

    @app.post("/api/list", response_model=ListAnswer, responses=LIST_ERRORS, openapi_extra={"requestBody": LIST_BODY},
              summary="An army list matched to the datasheets (wh40k list show --format json)")
    async def list_import(
        request: Request,
        edition: Optional[int] = Query(None, ge=10, le=11, description=(
            "Match to this edition's datasheets (default: the edition the list shows, else the latest)")),
    ) -> Response:
        """The body: the list as exported (Warhammer app, New Recruit, ListForge or War Organ text,
        a BattleScribe .ros or .rosz roster), as text/plain or application/octet-stream, or uploaded
        as the field ``file`` of a multipart/form-data form."""
        from pipeline.lists import parse_list

        data = await _list_bytes(request)
        army = parse_list(data)  # ArmyListError (an InputError: 422) naming the line

        def compute(con):
            from pipeline.lists.match import match_list
            from pipeline.lists.show import as_json

            query.check_edition(con, edition)
            return as_json(match_list(con, army, edition or army.edition or query.latest_edition(con)))
        return await ok(("list", hashlib.sha256(data).hexdigest(), edition), compute)

    @app.post("/api/matchup", response_model=MatchupAnswer, responses=BODY_ERRORS,
              summary="Every unit of one army list against every unit of another (wh40k matchup --format json)")
    async def list_matchup(body: MatchupBody = Body(...)) -> Response:
        from pipeline.lists import parse_list

        army, other = parse_list(body.mine.encode()), parse_list(body.theirs.encode())

        def compute(con):
            from pipeline.lists.match import match_list
            from pipeline.lists.matchup import matchup

            query.check_edition(con, body.edition)
            edition = body.edition or army.edition or other.edition or query.latest_edition(con)
            phases = ("shooting", "fight") if body.phase == "both" else (body.phase,)
            result = matchup(con, match_list(con, army, edition), match_list(con, other, edition), phases, edition)
            summary = result.summary()
            summary.pop("seconds", None)  # the same request, the same answer
            return {"summary": summary, "rows": result.rows, "notes": result.notes}
        key = ("matchup", hashlib.sha256(body.mine.encode()).hexdigest(), hashlib.sha256(body.theirs.encode()).hexdigest(),
               body.phase, body.edition)
        return await ok(key, compute)

    @app.get("/api/matchups", response_model=MatchupList, responses=MATCHUP_ERRORS,
             summary="Weapon profiles against targets, from the matchups table (filled by wh40k matchups)")
    async def matchups(
        weapon: Optional[str] = Query(None, max_length=limits.MAX_NAME_LENGTH, description="Part of the weapon name"),
        attacker: Optional[str] = Query(None, max_length=limits.MAX_NAME_LENGTH,
                                        description="Part of the attacking datasheet's name, or its id"),
        target: Optional[str] = Query(None, max_length=limits.MAX_NAME_LENGTH, description=(
            "Part of the target's name, its datasheet id, or a standard profile (GEQ, MEQ, TEQ, VEHICLE, MONSTER)")),
        edition: Optional[int] = Query(None, ge=10, le=11, description="10 or 11 (default: every edition)"),
        limit: int = Query(100, ge=1, le=10000, description="At most this many rows, the most models destroyed first"),
    ) -> Response:
        def compute(con):
            query.check_edition(con, edition)
            return answers.matchup_rows(con, weapon=weapon, attacker=attacker, target=target, edition=edition,
                                        limit=limit)
        return await ok(("matchups", weapon, attacker, target, edition, limit), compute)

    @app.post("/api/attack", response_model=AttackAnswer, responses=BODY_ERRORS,
              summary="Exact distributions of an attack (wh40k attack --format json)")
    async def attack(body: AttackBody = Body(...)) -> Response:
        from pipeline.cli.attack import outcome_as_dict
        from pipeline.engine.service import attack_with, check_request

        request = body.request()
        check_request(request)

        def compute(con):
            outcome = attack_with(con, request, explain=False)
            explained = _explained(database, outcome.result, _edition_of(con, request))
            return outcome_as_dict(dataclasses.replace(outcome, explained=explained))
        return await ok(("attack", request), compute)

    return app


async def _list_bytes(request: Request) -> bytes:
    """The army list a ``POST /api/list`` sends: the body itself, or the field ``file`` of a
    multipart form. Raises ``InputError`` (422) for an empty list or a form without the file,
    ``UnsupportedMedia`` (415) for a body of another media type."""
    kind = request.headers.get("content-type", "").split(";", 1)[0].strip().lower()
    if kind == "multipart/form-data":
        from starlette.datastructures import UploadFile

        try:
            form = await request.form(max_files=1, max_fields=1, max_part_size=limits.MAX_LIST_BYTES)
        except StarletteHTTPException as exc:  # starlette's answer to a malformed form
            raise InputError(f"the form cannot be read ({exc.detail}); upload the list as the field 'file' "
                             "of a multipart/form-data form, e.g. curl -F file=@army.txt") from None
        upload = form.get("file")
        if not isinstance(upload, UploadFile):
            raise InputError("the form has no file field 'file'; upload the list as the field 'file', "
                             "e.g. curl -F file=@army.txt")
        data = await upload.read()
    elif kind in ("", "text/plain", "application/octet-stream"):
        data = await request.body()
    else:
        raise UnsupportedMedia(f"content-type {kind}: send the army list as text/plain, application/octet-stream "
                               "or the field 'file' of a multipart/form-data form")
    if not data.strip():
        raise InputError("the army list is empty; send the list's text as exported from the Warhammer app, New "
                         "Recruit, ListForge or War Organ, or a BattleScribe roster")
    return data


class UnsupportedMedia(InputError):
    """A request body of a media type the endpoint does not read (415)."""


def _edition_of(con, request) -> int:
    """The edition of the rules an attack applies (``AttackRequest.edition``, else the latest)."""
    return query.latest_edition(con) if request.edition is None else request.edition


def _explained(database: Database, result, edition: int) -> tuple:
    """``engine.service.explain_steps`` with each rule's wording looked up once per database
    (``Database.wordings``: an attack's steps name some 10 to 30 rules of a few dozen)."""
    from pipeline.engine.service import explain_steps

    out = []
    for step in result.steps:
        key = (step.rule_key, edition)
        if key not in database.wordings:
            with database.reading() as con:
                database.wordings[key] = explain_steps(con, _Steps((step,)), edition)[0]
        found = database.wordings[key]
        out.append(dataclasses.replace(found, summary=step.summary))
    return tuple(out)


@dataclasses.dataclass(frozen=True)
class _Steps:
    """The part of an ``AttackResult`` that ``explain_steps`` reads."""

    steps: tuple


def _profile_text(target) -> str:
    """A standard target profile as its inline text (``T4 Sv3+ W2 x10 INFANTRY``)."""
    parts = [f"T{target.toughness}", f"Sv{target.save}+" if target.save else "Sv-", f"W{target.wounds}",
             f"x{target.models}"]
    if target.invulnerable_save:
        parts.append(f"inv{target.invulnerable_save}+")
    return " ".join(parts + sorted(target.keywords))


def _version() -> str:
    from importlib.metadata import PackageNotFoundError, version

    try:
        return version("wh40k-rules-db")
    except PackageNotFoundError:  # pragma: no cover - run from a checkout without install
        return "0"
