"""Engine targets from names and inline text: the standard profiles and ``parse_target``.

``STANDARD_PROFILES`` are the usual reference targets of 10th-edition math (GEQ, MEQ, TEQ,
VEHICLE, MONSTER). ``parse_target`` reads an inline profile such as
``"T4 Sv3+ W2 x10 inv4+ fnp5+ INFANTRY"`` typed on the command line.
"""

from __future__ import annotations

import re

from pipeline.engine.profiles import Target
from pipeline.errors import InputError
from pipeline.limits import MAX_NUMBER_DIGITS, check_name, limit_error

#: Reference targets by name (upper case).
STANDARD_PROFILES: dict[str, Target] = {
    "GEQ": Target(toughness=3, save=5, wounds=1, models=10, keywords=frozenset({"INFANTRY"}), name="GEQ"),
    "MEQ": Target(toughness=4, save=3, wounds=2, models=10, keywords=frozenset({"INFANTRY"}), name="MEQ"),
    "TEQ": Target(
        toughness=5, save=2, wounds=3, models=5, invulnerable_save=4, keywords=frozenset({"INFANTRY"}), name="TEQ"
    ),
    "VEHICLE": Target(toughness=10, save=3, wounds=12, models=1, keywords=frozenset({"VEHICLE"}), name="VEHICLE"),
    "MONSTER": Target(toughness=9, save=3, wounds=10, models=1, keywords=frozenset({"MONSTER"}), name="MONSTER"),
}

EXAMPLE = "T4 Sv3+ W2 x10 inv4+ fnp5+ INFANTRY"

#: Stat tokens: (field, pattern). Matched case-insensitively against the whole token.
_STAT_TOKENS: tuple[tuple[str, re.Pattern[str]], ...] = (
    ("toughness", re.compile(r"t(\d+)", re.IGNORECASE)),
    ("save", re.compile(r"sv(\d)\+?|sv(-)", re.IGNORECASE)),
    ("wounds", re.compile(r"w(\d+)", re.IGNORECASE)),
    ("models", re.compile(r"x(\d+)|(\d+)x", re.IGNORECASE)),
    ("invulnerable_save", re.compile(r"inv(\d)\+?|(\d)\+\+", re.IGNORECASE)),
    ("feel_no_pain_mortal", re.compile(r"fnpm(\d)\+?", re.IGNORECASE)),
    ("feel_no_pain", re.compile(r"fnp(\d)\+?", re.IGNORECASE)),
)
_ROLL_FIELDS = {"save", "invulnerable_save", "feel_no_pain", "feel_no_pain_mortal"}
_KEYWORD = re.compile(r"[A-Za-z][A-Za-z'\-]*")


def parse_target(text: str) -> Target:
    """Read an inline target profile: ``"T4 Sv3+ W2 x10 inv4+ fnp5+ INFANTRY"``.

    Tokens, in any order, separated by spaces or commas; stat tokens are case-insensitive:
    ``T4`` Toughness, ``Sv3+`` save (``Sv-`` or ``Sv7+`` for no armour save, as printed for
    Daemonettes), ``W2`` Wounds per model, ``x10`` (or
    ``10x``) models (default 1), ``inv4+`` (or ``4++``) invulnerable save, ``fnp5+`` Feel No Pain,
    ``fnpm5+`` Feel No Pain against mortal wounds only, ``stealth``. Any other bare word is a
    keyword, upper-cased (``infantry`` -> ``INFANTRY``). A standard profile name alone (``MEQ``)
    gives that profile. T, Sv and W are required.

    >>> t = parse_target("T4 Sv3+ W2 x10 inv4+ fnp5+ INFANTRY")
    >>> (t.toughness, t.save, t.wounds, t.models, t.invulnerable_save, t.feel_no_pain, sorted(t.keywords))
    (4, 3, 2, 10, 4, 5, ['INFANTRY'])
    >>> parse_target("w12 t10 sv3 vehicle").keywords
    frozenset({'VEHICLE'})
    >>> parse_target("T3 Sv7+ W1 inv5+").save is None
    True

    Raises ``InputError`` naming the token that cannot be read, a repeated or missing stat, a
    value out of range, or a profile over the limits of ``pipeline.limits`` (``MAX_NAME_LENGTH``
    characters, numbers of ``MAX_NUMBER_DIGITS`` digits), with an example of a valid profile.
    """
    check_name(text, "target profile")
    tokens = [t for t in re.split(r"[\s,]+", text.strip()) if t]
    if len(tokens) == 1 and tokens[0].upper() in STANDARD_PROFILES:
        return STANDARD_PROFILES[tokens[0].upper()]
    if not tokens:
        raise InputError(f"empty target profile; write e.g. {EXAMPLE!r}")
    values: dict[str, int | None] = {}
    keywords: set[str] = set()
    stealth = False
    for token in tokens:
        field, value = _read_token(token)
        if field == "stealth":
            stealth = True
        elif field == "keyword":
            keywords.add(token.upper())
        else:
            if field in values:
                raise InputError(f"target profile {text!r}: {_LABELS[field]} given twice (token {token!r}); write e.g. {EXAMPLE!r}")
            values[field] = value
    missing = [_LABELS[f] for f in ("toughness", "save", "wounds") if f not in values]
    if missing:
        raise InputError(
            f"target profile {text!r}: missing {', '.join(missing)}; write e.g. {EXAMPLE!r} "
            f"(or a standard profile: {', '.join(STANDARD_PROFILES)})"
        )
    return Target(
        toughness=values["toughness"],  # type: ignore[arg-type]
        save=values["save"],
        wounds=values["wounds"],  # type: ignore[arg-type]
        models=values.get("models") or 1,
        invulnerable_save=values.get("invulnerable_save"),
        feel_no_pain=values.get("feel_no_pain"),
        feel_no_pain_mortal=values.get("feel_no_pain_mortal"),
        keywords=frozenset(keywords),
        stealth=stealth,
        name=" ".join(tokens),
    )


_LABELS = {
    "toughness": "Toughness (T4)",
    "save": "save (Sv3+)",
    "wounds": "Wounds (W2)",
    "models": "model count (x10)",
    "invulnerable_save": "invulnerable save (inv4+)",
    "feel_no_pain": "Feel No Pain (fnp5+)",
    "feel_no_pain_mortal": "Feel No Pain against mortal wounds (fnpm5+)",
}


#: Names and allowed values of the stats, for messages about a value out of range.
_NAMES = {"toughness": "Toughness", "save": "a save of", "wounds": "Wounds", "models": "a model count of",
          "invulnerable_save": "an invulnerable save of", "feel_no_pain": "Feel No Pain",
          "feel_no_pain_mortal": "Feel No Pain against mortal wounds"}
_ALLOWED = {
    "toughness": "T1 or more (T4)",
    "save": "Sv2+ to Sv6+, or Sv7+ or Sv- for no armour save",
    "wounds": "W1 or more (W2)",
    "models": "x1 or more (x10)",
    "invulnerable_save": "inv2+ to inv6+ (or leave it out)",
    "feel_no_pain": "fnp2+ to fnp6+ (or leave it out)",
    "feel_no_pain_mortal": "fnpm2+ to fnpm6+ (or leave it out)",
}


def _read_token(token: str) -> tuple[str, int | None]:
    """(field, value) of one token; ``keyword`` and ``stealth`` have no value."""
    if token.lower() == "stealth":
        return "stealth", None
    for field, pattern in _STAT_TOKENS:
        m = pattern.fullmatch(token)
        if not m:
            continue
        raw = next(g for g in m.groups() if g is not None)
        if raw == "-":
            return field, None
        if len(raw) > MAX_NUMBER_DIGITS:
            raise limit_error(f"target token {token!r}: a number of {len(raw)} digits",
                              f"at most {MAX_NUMBER_DIGITS} digits", f"write e.g. {EXAMPLE!r}")
        value = int(raw)
        if field == "save" and value == 7:
            return field, None  # Sv7+: no armour save (as printed for Daemonettes, Makari)
        if field in _ROLL_FIELDS and not 2 <= value <= 6:
            raise InputError(f"target token {token!r}: {_NAMES[field]} {value}+ is not allowed; "
                             f"use {_ALLOWED[field]}; write e.g. {EXAMPLE!r}")
        if field not in _ROLL_FIELDS and value < 1:
            raise InputError(f"target token {token!r}: {_NAMES[field]} {value} is not allowed; "
                             f"use {_ALLOWED[field]}; write e.g. {EXAMPLE!r}")
        return field, value
    if _KEYWORD.fullmatch(token):
        return "keyword", None
    raise InputError(f"cannot read target token {token!r}; write e.g. {EXAMPLE!r}")
