"""Fuzzing ``attack``: inline target profiles, the engine's inputs, the service's requests, the CLI.

The property everywhere: a result, or one of the project's own errors (``Wh40kError``: the CLI
prints ``Error: ...``), never another exception, and never longer than the deadline. Values are
drawn both small (as in the game) and hostile: zero, negative, just over each limit of
``pipeline.limits``, 10^21, numbers of 5,000 digits, names of 100,000 characters, odd unicode.
Hypothesis runs derandomized (a fixed seed); the budgets are the ``max_examples`` below.
"""

from __future__ import annotations

from datetime import timedelta
from pathlib import Path

import pytest
from hypothesis import HealthCheck, event, given, settings
from hypothesis import strategies as st
from typer.testing import CliRunner

from pipeline import limits
from pipeline.build import build
from pipeline.cli import app, register_commands
from pipeline.engine import exact
from pipeline.engine.inputs import parse_target
from pipeline.engine.profiles import Anti, Context, Target, Weapon
from pipeline.engine.result import AttackResult
from pipeline.engine.service import AttackRequest, attack
from pipeline.errors import Wh40kError
from pipeline.normalise.characteristics import dice, make_dice
from schemas.types import DiceExpr
from tests.conftest import RAW

#: Inputs tried: inline target profiles, engine calls, service requests, command lines.
TARGET_EXAMPLES = 200
ENGINE_EXAMPLES = 120
REQUEST_EXAMPLES = 80
CLI_EXAMPLES = 30

#: A guard against a hang (an input the work limits let through), not a speed test: the slowest
#: example allowed by ``pipeline.limits`` takes a few seconds on a quiet machine, several times that
#: on a shared one.
FUZZ = settings(derandomize=True, database=None, deadline=timedelta(seconds=60),
                suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large,
                                       HealthCheck.function_scoped_fixture])

HUGE = 10**21
#: Numbers at and around the edges: the game's own, each limit and one past it, absurd ones.
EDGES = [0, 1, 2, 3, 6, 7, -1, limits.MAX_MODELS_PER_WEAPON, limits.MAX_MODELS_PER_WEAPON + 1,
         limits.MAX_TARGET_WOUNDS, limits.MAX_TARGET_WOUNDS + 1, limits.MAX_DICE_SIDES + 1, 10**6, HUGE]
counts = st.one_of(st.integers(0, 12), st.sampled_from(EDGES))
ODD = ["", " ", "\x00", "\ufeff", "\u202e", "e\u0301", "\U0001F480", "ᵀ4", "٣", "T٤", "x" * 100_000,
       "9" * 5000, "T" + "9" * 5000, "x" + "9" * 30, "Sv0+", "Sv9+", "inv1+", "fnp7+", "4++", "---", ",,,"]


@st.composite
def target_text(draw) -> str:
    """An inline profile: stat tokens with drawn values (or odd ones) and keywords, any order."""
    token = st.one_of(
        st.builds(lambda k, n: f"{k}{n}", st.sampled_from(["T", "t", "W", "x", "Sv", "inv", "fnp", "fnpm"]),
                  st.one_of(counts, st.integers(-10, 10**30))),
        st.builds(lambda k, n: f"{k}{n}+", st.sampled_from(["Sv", "inv", "fnp", "fnpm"]), counts),
        st.builds(lambda n: f"{n}x", counts),
        st.sampled_from(["INFANTRY", "stealth", "VEHICLE", "MEQ", "Sv-", "Sv7+", "4++"] + ODD),
        st.text(max_size=12),
    )
    tokens = draw(st.lists(token, max_size=10))
    return draw(st.sampled_from([" ", ",", ", ", "\t"])).join(tokens)


#: A profile as a player types one.
game_target_text = st.builds(
    lambda t, sv, w, x, extra: f"T{t} Sv{sv}+ W{w} x{x} {extra}".strip(), st.integers(1, 14), st.integers(2, 7),
    st.integers(1, 12), st.integers(1, 20),
    st.sampled_from(["", "inv4+", "fnp5+", "INFANTRY", "stealth VEHICLE", "fnpm6+ MONSTER"]))


@settings(FUZZ, max_examples=TARGET_EXAMPLES)
@given(text=st.one_of(game_target_text, target_text(), st.text(max_size=300)))
def test_inline_target_profiles_give_a_target_or_an_input_error(text):
    try:
        target = parse_target(text)
    except Wh40kError:
        event("refused")
        return
    event("a target")
    assert isinstance(target, Target)


def _dice(count: int, sides: int, modifier: int) -> DiceExpr:
    """A dice expression as given through the Python API, unvalidated (``D0`` included)."""
    return DiceExpr.model_construct(text=f"{count}D{sides}{modifier:+d}", dice_count=count, dice_sides=sides,
                                    modifier=modifier)


def dice_exprs() -> st.SearchStrategy[DiceExpr]:
    fixed = st.builds(lambda n: make_dice(0, 0, n), st.one_of(counts, st.integers(-10, 10)))
    rolled = st.builds(_dice, st.one_of(st.integers(1, 3), st.sampled_from([limits.MAX_DICE_COUNT + 1, 10**6])),
                       st.one_of(st.sampled_from([3, 6]), st.sampled_from([0, 1, limits.MAX_DICE_SIDES + 1, 10**6])),
                       st.one_of(st.integers(-2, 3), st.sampled_from([10**6, -(10**6)])))
    return st.one_of(fixed, rolled)


GAME_DICE = st.sampled_from(["1", "2", "3", "D3", "D6", "2D6", "D3+1", "D6+2"]).map(dice)
#: Weapons and targets as the game has them (so that most examples reach a result) ...
game_weapons = st.builds(
    Weapon, name=st.just("w"), attacks=GAME_DICE, skill=st.one_of(st.none(), st.integers(2, 6)),
    strength=st.integers(1, 16), armour_penetration=st.integers(-4, 0), damage=GAME_DICE,
    is_melee=st.booleans(), models=st.integers(1, 20), sustained_hits=st.sampled_from([None, dice("1"), dice("D3")]),
    lethal_hits=st.booleans(), devastating_wounds=st.booleans(), twin_linked=st.booleans(),
    anti=st.sampled_from([(), (Anti("INFANTRY", 4),)]), blast=st.sampled_from([None, 1, 2]),
    melta=st.sampled_from([None, dice("2")]), rapid_fire=st.sampled_from([None, dice("1")]),
)
game_targets = st.builds(
    Target, toughness=st.integers(1, 14), save=st.one_of(st.none(), st.integers(2, 7)), wounds=st.integers(1, 12),
    models=st.integers(1, 20), invulnerable_save=st.one_of(st.none(), st.integers(2, 6)),
    feel_no_pain=st.one_of(st.none(), st.integers(4, 6)), keywords=st.just(frozenset({"INFANTRY"})),
)
# ... and hostile ones: every field drawn past its bounds as well.
weapons = st.builds(
    Weapon, name=st.sampled_from(["w", "x" * 300, "\u202e"]), attacks=dice_exprs(),
    skill=st.one_of(st.none(), st.integers(0, 8)), strength=st.one_of(st.integers(0, 20), st.sampled_from([HUGE])),
    armour_penetration=st.integers(-7, 1), damage=dice_exprs(), is_melee=st.booleans(), models=counts,
    sustained_hits=st.one_of(st.none(), dice_exprs()), lethal_hits=st.booleans(), devastating_wounds=st.booleans(),
    anti=st.lists(st.builds(Anti, st.sampled_from(["INFANTRY", "VEHICLE"]), st.integers(1, 7)), max_size=2).map(tuple),
    torrent=st.booleans(), twin_linked=st.booleans(), rapid_fire=st.one_of(st.none(), dice_exprs()),
    blast=st.one_of(st.none(), counts), melta=st.one_of(st.none(), dice_exprs()), heavy=st.booleans(),
    lance=st.booleans(), hazardous=st.booleans(), psychic=st.booleans(),
)
targets = st.builds(
    Target, toughness=st.one_of(st.integers(0, 14), st.sampled_from([HUGE])), save=st.one_of(st.none(), st.integers(1, 8)),
    wounds=counts, models=counts, invulnerable_save=st.one_of(st.none(), st.integers(1, 8)),
    feel_no_pain=st.one_of(st.none(), st.integers(1, 8)), feel_no_pain_mortal=st.one_of(st.none(), st.integers(1, 8)),
    keywords=st.sets(st.sampled_from(["INFANTRY", "VEHICLE", "MONSTER"])).map(frozenset), stealth=st.booleans(),
)
contexts = st.builds(
    Context, edition=st.sampled_from([10, 11, 10, 11, 9]), half_range=st.booleans(), stationary=st.booleans(),
    charged=st.booleans(), cover=st.booleans(), overwatch=st.booleans(),
    reroll_hits=st.sampled_from([None, "ones", "failed", "all", "sixes"]),
    reroll_wounds=st.sampled_from([None, "ones", "failed", "all"]),
    hit_modifier=st.one_of(st.integers(-3, 3), st.sampled_from([HUGE, -HUGE])), wound_modifier=st.integers(-3, 3),
    critical_hit_on=st.integers(1, 7), critical_wound_on=st.integers(2, 6),
    damage_reduction=st.sampled_from([None, "one", "half", "two"]),
    damage_modifier=st.one_of(st.integers(-2, 2), st.sampled_from([HUGE])),
    lethal_hits_choice=st.sampled_from([None, True, False]),
)


@settings(FUZZ, max_examples=ENGINE_EXAMPLES)
@given(weapon_list=st.one_of(st.lists(game_weapons, min_size=1, max_size=3), st.lists(weapons, max_size=3)),
       target=st.one_of(game_targets, targets), context=st.one_of(st.just(Context()), contexts))
def test_the_engine_gives_a_result_or_an_input_error(weapon_list, target, context):
    try:
        result = exact.resolve(weapon_list, target, context)
    except Wh40kError:
        event("refused")
        return
    event("a result")
    assert isinstance(result, AttackResult)
    assert abs(sum(result.damage.pmf) - 1) < 1e-9


@pytest.fixture(scope="module")
def db(tmp_path_factory) -> Path:
    path = tmp_path_factory.mktemp("fuzz-db") / "wh40k.duckdb"
    build(RAW, path)
    return path


UNITS = ["Battle Sisters Squad", "Celestian Sacresants", "Canoness Adalya", "Arco-flagellants",
         "cp-sanctuary-guardians/battle-sisters-squad", "battle sisters", "Intercessor Squad"]
WEAPON_NAMES = ["boltgun", "Bolt pistol", "hallowed mace", "2 boltguns", "1000000 boltguns", "0 boltguns",
                f"{limits.MAX_MODELS_PER_WEAPON + 1} boltguns", "ministorum flamer (supercharge)", "plasma pistol",
                "9" * 5000 + " boltguns"]
game_requests = st.builds(
    AttackRequest, attacker=st.sampled_from(UNITS[:4]), target=st.one_of(st.sampled_from(["MEQ", "GEQ", "TEQ"]),
                                                                         game_target_text),
    phase=st.sampled_from(["shooting", "fight"]), weapons=st.sampled_from([(), ("boltgun",), ("2 boltguns",)]),
    context=st.builds(Context, half_range=st.booleans(), cover=st.booleans(),
                      reroll_hits=st.sampled_from([None, "ones", "all"])),
    edition=st.sampled_from([None, 10, 11]),
)
requests = st.builds(
    AttackRequest,
    attacker=st.one_of(st.sampled_from(UNITS[:4]), st.sampled_from(UNITS + ODD), st.text(max_size=30)),
    target=st.one_of(st.sampled_from(["MEQ", "GEQ", "TEQ", "VEHICLE", "MONSTER", "Celestian Sacresants"] + UNITS),
                     game_target_text, target_text(), st.sampled_from(ODD)),
    phase=st.sampled_from(["shooting", "fight"]),
    weapons=st.one_of(st.just(()), st.lists(st.one_of(st.sampled_from(WEAPON_NAMES + ODD), st.text(max_size=20)),
                                            max_size=3).map(tuple)),
    models=st.one_of(st.none(), st.none(), counts), target_models=st.one_of(st.none(), st.none(), counts),
    feel_no_pain=st.one_of(st.none(), st.integers(2, 6)), context=st.one_of(st.just(Context()), contexts),
    edition=st.sampled_from([None, 10, 11]),
)


@settings(FUZZ, max_examples=REQUEST_EXAMPLES)
@given(request=st.one_of(game_requests, requests))
def test_attack_requests_give_an_outcome_or_the_projects_error(db, request):
    try:
        outcome = attack(request, db)
    except Wh40kError:
        event("refused")
        return
    event("an outcome")
    assert isinstance(outcome.result, AttackResult)


OPTION_VALUES = st.one_of(st.sampled_from([str(n) for n in EDGES] + ["abc", "", "-5", "1e3", "9" * 5000, "½"]),
                          st.text(max_size=8))
options = st.one_of(
    st.tuples(st.sampled_from(["--models", "--target-models", "--hit-mod", "--wound-mod", "--crit-hits-on", "--fnp",
                               "--edition", "--phase", "--reroll-hits", "--reroll-wounds", "--damage-reduction",
                               "--weapon", "--target", "--format"]), OPTION_VALUES),
    st.tuples(st.sampled_from(["--half-range", "--stationary", "--charged", "--cover", "--overwatch", "--explain"])),
)


@settings(FUZZ, max_examples=CLI_EXAMPLES)
@given(attacker=st.sampled_from(UNITS[:3] + ["x" * 100_000, ""]), target=st.sampled_from(["MEQ", "T4 Sv3+ W2 x10"]),
       extra=st.lists(options, max_size=4))
def test_the_attack_command_exits_with_a_result_or_an_error_line(db, attacker, target, extra):
    register_commands()
    args = ["attack", attacker, "--target", target, "--db", str(db)] + [part for option in extra for part in option]
    result = CliRunner().invoke(app, args)
    # CliRunner calls the typer app itself: a Wh40kError reaches it as the exception that
    # ``pipeline.cli.main`` prints as ``Error: ...``; a usage error is exit status 2.
    if result.exception is not None and not isinstance(result.exception, SystemExit):
        assert isinstance(result.exception, Wh40kError), repr(result.exception)
    assert result.exit_code in (0, 1, 2)
    event(f"exit status {result.exit_code}")
