"""Engine targets from names and inline text: the standard profiles and ``parse_target``.

``STANDARD_PROFILES`` are the usual reference targets of 10th-edition math (GEQ, MEQ, TEQ,
VEHICLE, MONSTER). ``parse_target`` reads an inline profile such as
``"T4 Sv3+ W2 x10 inv4+ fnp5+ INFANTRY"`` typed on the command line.
"""

from __future__ import annotations

import re

from pipeline.engine.profiles import Target, Weapon
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


# ---------------------------------------------------------------------------------------------
# Custom weapon profiles: "A2 BS3+ S4 AP-1 D1 [LETHAL HITS, RAPID FIRE 1]"

WEAPON_EXAMPLE = "A2 BS3+ S4 AP-1 D1 [LETHAL HITS, RAPID FIRE 1]"

#: Characteristic tokens of a weapon profile: (label, pattern with the value as group ``v``),
#: matched case-insensitively against the whole token; AP before A, a ``:`` or ``=`` may
#: separate the label from its value (``D=D3``).
_WEAPON_TOKENS: tuple[tuple[str, re.Pattern[str]], ...] = (
    ("AP", re.compile(r"ap[:=]?(?P<v>[+\-\u2212\u2013]?\d+)", re.IGNORECASE)),
    ("A", re.compile(r"a[:=]?(?P<v>\S+)", re.IGNORECASE)),
    ("BS", re.compile(r"bs[:=]?(?P<v>\S+)", re.IGNORECASE)),
    ("WS", re.compile(r"ws[:=]?(?P<v>\S+)", re.IGNORECASE)),
    ("S", re.compile(r"s[:=]?(?P<v>\S+)", re.IGNORECASE)),
    ("D", re.compile(r"d[:=]?(?P<v>\S+)", re.IGNORECASE)),
    ("range", re.compile(r"(?P<v>\d+(?:\"|''|\u201d|\u2033|in))|(?P<melee>melee)", re.IGNORECASE)),
)
_WEAPON_LABELS = {"A": "Attacks (A2, AD6)", "BS": "Ballistic Skill (BS3+)", "WS": "Weapon Skill (WS3+)",
                  "S": "Strength (S4)", "AP": "Armour Penetration (AP-1, AP0)", "D": "Damage (D1, DD3+1)",
                  "range": "range (24\" or Melee)"}


def parse_weapon_profile(text: str, models: int = 1, edition: int | None = None) -> Weapon:
    """Read a weapon profile typed on the command line: ``"A2 BS3+ S4 AP-1 D1 [LETHAL HITS, RAPID FIRE 1]"``.

    Tokens, in any order, separated by spaces, case-insensitive: ``A`` Attacks (``A2``, ``AD6``,
    ``A2D6+1``), ``BS`` Ballistic Skill or ``WS`` Weapon Skill (``BS3+``, ``WS4``; ``BSN/A`` for
    a weapon without a hit roll; WS makes it a melee weapon), ``S`` Strength, ``AP`` Armour
    Penetration (``AP-1``, ``AP0``), ``D`` Damage (``D2``, ``DD3+1`` or ``D=D3+1``: the label
    then the dice), an optional range (``24"`` or ``Melee``), and the abilities in brackets as
    a datasheet prints them. Each value is read by the normaliser of the data
    (``pipeline.normalise.characteristics``: ``dice``, ``skill``, ``armour_penetration``,
    ``weapon_range``; ``pipeline.normalise.weapon_abilities``) and each ability means what the
    declaration says (``pipeline.engine.declarations``). A, S, AP, D and BS or WS are required
    (BS or WS may be left out for a [TORRENT] weapon). The weapon is named by the text and fired
    by ``models`` models; ``edition`` (10 or 11), when given, refuses an ability the edition
    does not have.

    >>> w = parse_weapon_profile("A2 BS3+ S4 AP-1 D1 [LETHAL HITS, RAPID FIRE 1]", models=5)
    >>> (w.attacks.text, w.skill, w.strength, w.armour_penetration, w.damage.text, w.is_melee, w.models)
    ('2', 3, 4, -1, '1', False, 5)
    >>> (w.lethal_hits, w.rapid_fire.text)
    (True, '1')
    >>> w = parse_weapon_profile("Melee AD6 WS2+ S8 AP-3 DD3+1 [anti-vehicle 4+]")
    >>> (w.attacks.text, w.skill, w.damage.text, w.is_melee, w.anti)
    ('D6', 2, 'D3+1', True, (Anti(keyword='VEHICLE', threshold=4),))

    Raises ``InputError`` naming the token that cannot be read (and how to write it), a missing
    or repeated characteristic, BS with ``Melee`` or WS with a range in inches, an unknown
    ability or one without its value, and a profile over ``MAX_NAME_LENGTH`` characters.
    """
    from pipeline.engine.declarations import grant_parsed, weapon_ability
    from pipeline.errors import NormaliseError
    from pipeline.normalise import characteristics as read
    from pipeline.normalise.weapon_abilities import KNOWN_ABILITIES, parse_abilities

    check_name(text, "weapon profile")
    where = f"weapon profile {text.strip()!r}"
    fix = f"write e.g. {WEAPON_EXAMPLE!r}"
    brackets = re.findall(r"\[([^\]]*)\]", text)
    rest = re.sub(r"\[[^\]]*\]", " ", text)
    if "[" in rest or "]" in rest:
        raise InputError(f"{where}: an unmatched bracket; put the abilities in one pair of brackets; {fix}")
    values: dict[str, object] = {}
    for token in (t for t in re.split(r"[\s,]+", rest.strip()) if t):
        label, raw = _weapon_token(token, where, fix)
        if label in values:
            raise InputError(f"{where}: {_WEAPON_LABELS[label]} given twice (token {token!r}); {fix}")
        if label in ("BS", "WS") and {"BS", "WS"} & set(values):
            raise InputError(f"{where}: both BS and WS given (token {token!r}): BS for a ranged weapon, WS for a "
                             f"melee one; {fix}")
        try:
            if label in ("A", "D"):
                value = read.dice(raw)
                if value.maximum < 1:
                    raise NormaliseError(f"{'Attacks' if label == 'A' else 'Damage'} {raw!r} is less than 1")
            elif label in ("BS", "WS"):
                value = read.skill(raw).value
            elif label == "S":
                value = read.characteristic_int(raw, "S")
                if value is None or value < 1:
                    raise NormaliseError(f"Strength {raw!r} (expected a whole number, at least 1)")
            elif label == "AP":
                ap = read.armour_penetration(raw)
                if ap.flags:
                    raise NormaliseError(f"Armour Penetration {raw!r} is positive, and AP is 0 or negative: "
                                         f"write AP-{raw.lstrip('+')} (or AP0)")
                value = ap.value
            else:
                value = read.weapon_range(raw)
        except NormaliseError as exc:
            raise InputError(f"{where}: token {token!r}: {exc}; {fix}") from None
        values[label] = value
    abilities = [a for item in brackets for a in parse_abilities(item)]
    torrent = any(a.name == "TORRENT" for a in abilities)
    needed = ["A", "S", "AP", "D"] + ([] if torrent else ["BS"])
    missing = [_WEAPON_LABELS[k] for k in needed if k not in values and not (k == "BS" and "WS" in values)]
    if missing:
        raise InputError(f"{where}: missing {', '.join(missing)}; {fix}")
    range_ = values.get("range")
    is_melee = "WS" in values or bool(range_ and range_.is_melee)
    if "BS" in values and range_ is not None and range_.is_melee:
        raise InputError(f"{where}: a Melee weapon has WS, not BS; write WS{_skill_text(values['BS'])}")
    if "WS" in values and range_ is not None and not range_.is_melee:
        raise InputError(f"{where}: a weapon with WS is a melee weapon, with no range in inches: "
                         "leave the range out or write Melee")
    weapon = Weapon.from_abilities(
        name=" ".join(text.split()), attacks=values["A"], skill=values.get("BS", values.get("WS")),
        strength=values["S"], armour_penetration=values["AP"], damage=values["D"], is_melee=is_melee,
        models=models)
    known = ", ".join(sorted({*KNOWN_ABILITIES, "ANTI-KEYWORD X+"}))
    for a in abilities:
        meaning = weapon_ability(a.name)
        if "unknown_weapon_ability" in a.flags or meaning is None:
            raise InputError(f"{where}: unknown weapon ability {a.raw_text!r}; known: {known}")
        bad = [f for f in a.flags if f != "threshold_without_plus"]
        if bad:
            hint = ("write it as ANTI-KEYWORD X+ (ANTI-INFANTRY 4+)" if a.name == "ANTI"
                    else f"{a.name} takes no value" if "unexpected_ability_value" in bad
                    else f"give its value ({a.name} 1)")
            raise InputError(f"{where}: weapon ability {a.raw_text!r}: {hint}")
        if edition is not None and edition not in meaning.editions:
            raise InputError(f"{where}: [{a.name}] is not a weapon ability of the {edition}th edition; "
                             f"use --edition {meaning.editions[-1]} or leave it out")
        try:
            weapon = grant_parsed(weapon, a)
        except InputError as exc:
            raise InputError(f"{where}: {exc}") from None
    return weapon


def _skill_text(value: object) -> str:
    return "N/A" if value is None else f"{value}+"


def _weapon_token(token: str, where: str, fix: str) -> tuple[str, str]:
    """(label, value text) of one token of a weapon profile."""
    if token.upper() in ("A", "AP", "BS", "WS", "S", "D"):
        raise InputError(f"{where}: {token!r} without its value (a space between them?); write the value next to "
                         f"its label, e.g. AP-1, A2, S4; {fix}")
    for label, pattern in _WEAPON_TOKENS:
        m = pattern.fullmatch(token)
        if m:
            if label == "range":
                return label, "Melee" if m.group("melee") else m.group("v")
            if len(re.sub(r"\D", "", m.group("v"))) > MAX_NUMBER_DIGITS:
                raise limit_error(f"{where}: token {token!r}: a number of more than {MAX_NUMBER_DIGITS} digits",
                                  f"at most {MAX_NUMBER_DIGITS} digits", fix)
            return label, m.group("v")
    raise InputError(f"{where}: cannot read token {token!r}: a profile has A, BS or WS, S, AP, D, an optional "
                     f"range (24\" or Melee) and abilities in brackets; {fix}")
