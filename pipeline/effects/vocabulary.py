"""The effect vocabulary: what a rule can do to an attack, and when.

An ``Effect`` row (``schemas.records.Effect``) holds one effect in these terms:

``effect`` (the kind) with its ``roll``, ``characteristic``, ``value`` and ``parameter``:

- ``modify-roll``: add ``value`` (negative: subtract) to the ``roll`` (``hit``, ``wound``, ``save``).
- ``modify-characteristic``: improve (``value`` > 0) or worsen (< 0) a ``characteristic`` by
  ``value`` steps: ``BS``/``WS``/``Sv`` 3+ improved by 1 is 2+, ``AP`` -1 improved by 1 is -2,
  ``S``/``A``/``D``/``T`` improved by 1 is one more. ``parameter`` may give a bound as printed
  ("3+": "this cannot improve a model's Save to better than 3+").
- ``set-characteristic``: the ``characteristic`` is ``value``.
- ``reroll``: re-roll the ``roll`` (``hit``, ``wound``, ``damage``, ``save``); ``parameter``
  ``ones`` (a roll of 1), ``failed`` or ``all`` (any roll: "you can re-roll the Hit roll"),
  ``one`` (a single die: "re-roll one Hit roll", Command Re-roll: one failed roll of the unit).
- ``critical-on``: an unmodified ``roll`` (``hit``, ``wound``) of ``value``+ is a Critical Hit /
  Critical Wound.
- ``extra-hits``: a Critical Hit scores ``parameter`` (dice) additional hits (Sustained Hits).
- ``auto-wound``: a Critical Hit wounds automatically (Lethal Hits).
- ``mortal-wounds``: ``parameter`` (dice) mortal wounds the target suffers: with ``critical-hit`` /
  ``critical-wound``, on each such Critical, in addition to the attack; otherwise once, after the
  attack ("on a 4+" read from the wording). Applied only when the wording says the target (or
  "that enemy unit") suffers them.
- ``feel-no-pain``: a Feel No Pain ``value``+ against ``parameter`` (``all``, ``mortal-wounds``,
  ``psychic``).
- ``damage-reduction``: ``parameter`` ``one`` (-1 Damage, minimum 1) or ``half``.
- ``invulnerable-save``: a ``value``+ invulnerable save.
- ``grant-ability``: weapons have the ability ``parameter`` as printed (``LETHAL HITS``,
  ``SUSTAINED HITS 1``, ``ANTI-INFANTRY 4+``).
- ``ignore-modifiers``: modifiers to ``parameter`` (as printed) are ignored.
- ``benefit-of-cover``, ``stealth``, ``hit-on``: the target has the Benefit of Cover; Stealth;
  hits only on an unmodified ``value`` (Fire Overwatch).

``weapon_type``: ``ranged`` or ``melee`` (None: any attack). ``conditions``: ``;``-joined terms,
each evaluated against the attack (``pipeline.effects.apply``):

- ``phase:shooting`` / ``phase:fight``; ``half-range``; ``charged``; ``stationary``;
- ``target:KEYWORDS`` (as ``pipeline.engine.profiles.keyword_condition_holds`` reads them:
  ``MONSTER/VEHICLE``, ``non-MONSTER/VEHICLE``), ``attacker:KEYWORDS`` (the model making the
  attack: "each time a PENITENT model in your unit makes a melee attack");
- ``weapon:ABILITY``: only weapons with that ability ("Rapid Fire weapons", "Torrent weapons");
- ``critical-hit`` / ``critical-wound``: the effect is on a Critical Hit / Wound only;
- ``choice:OPTION``: one option of a choice the rule offers ("Select either the [LETHAL HITS] or
  [SUSTAINED HITS 1] ability"): applied only when the request picks it (``NAME: OPTION``);
- ``situational:TEXT``: a condition the request does not say (a clause as printed: "if your
  unit is Righteous", "within range of an objective marker"); such an effect is listed, never
  applied.
"""

from __future__ import annotations

from typing import Literal

EffectKind = Literal[
    "modify-roll", "modify-characteristic", "set-characteristic", "reroll", "critical-on", "extra-hits",
    "auto-wound", "mortal-wounds", "feel-no-pain", "damage-reduction", "invulnerable-save", "grant-ability",
    "ignore-modifiers", "benefit-of-cover", "stealth", "hit-on",
]
EFFECT_KINDS: frozenset[str] = frozenset(EffectKind.__args__)  # type: ignore[attr-defined]
Side = Literal["attacker", "target"]
ROLLS = frozenset({"hit", "wound", "save", "damage"})
#: The characteristics an effect changes, by their short names, and the names printed for them.
CHARACTERISTICS: dict[str, str] = {
    "ballistic skill": "BS", "weapon skill": "WS", "strength": "S", "armour penetration": "AP",
    "attacks": "A", "damage": "D", "toughness": "T", "save": "Sv",
    "bs": "BS", "ws": "WS", "s": "S", "ap": "AP", "a": "A", "d": "D", "t": "T", "sv": "Sv",
}
#: Characteristics of the unit attacked (the others are of the attack's weapon).
TARGET_CHARACTERISTICS = frozenset({"T", "Sv"})
REROLL_POLICIES = frozenset({"ones", "failed", "all", "one"})
FNP_SCOPES = frozenset({"all", "mortal-wounds", "psychic"})
#: Condition terms without a value, and the prefixes of those with one.
FLAG_CONDITIONS = frozenset({"half-range", "charged", "stationary", "critical-hit", "critical-wound"})
VALUED_CONDITIONS = frozenset({"phase", "target", "attacker", "weapon", "situational", "choice"})


def characteristic_of(printed: str) -> str | None:
    """The short name of a printed characteristic, or None.

    >>> characteristic_of("Ballistic Skill"), characteristic_of("AP"), characteristic_of("Leadership")
    ('BS', 'AP', None)
    """
    return CHARACTERISTICS.get(printed.strip().lower())


def join_conditions(terms: list[str]) -> str | None:
    """The ``conditions`` column of a list of terms (each once, in order); None for none.

    >>> join_conditions(["half-range", "target:MONSTER/VEHICLE", "half-range"])
    'half-range;target:MONSTER/VEHICLE'
    >>> join_conditions([]) is None
    True
    """
    seen: list[str] = []
    for term in terms:
        if term not in seen:
            seen.append(term)
    return ";".join(seen) or None


def split_conditions(text: str | None) -> list[tuple[str, str | None]]:
    """The (name, value) terms of a ``conditions`` column. Raises ``ValueError`` for a term outside
    the vocabulary (a hand-kept entry with a typing error).

    >>> split_conditions("half-range;target:MONSTER/VEHICLE")
    [('half-range', None), ('target', 'MONSTER/VEHICLE')]
    """
    terms: list[tuple[str, str | None]] = []
    for part in (text or "").split(";"):
        part = part.strip()
        if not part:
            continue
        name, _, value = part.partition(":")
        if value and name in VALUED_CONDITIONS:
            terms.append((name, value))
        elif not value and name in FLAG_CONDITIONS:
            terms.append((name, None))
        else:
            raise ValueError(f"condition {part!r} is not in the vocabulary (pipeline.effects.vocabulary)")
    return terms
