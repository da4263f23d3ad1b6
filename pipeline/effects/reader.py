"""The reader of rule text: the common phrasings of both editions turned into effects.

``read_text(text)`` reads one rule's wording sentence by sentence and gives a ``ReadEffect`` for
each phrase it knows (the vocabulary is ``pipeline.effects.vocabulary``):

- rolls: "add 1 to the Hit roll", "subtract 1 from the Wound roll", "+1 to hit rolls" (11th);
- characteristics: "Improve the Ballistic Skill characteristic of ranged weapons equipped by models
  in this unit by 1", "worsen the Armour Penetration characteristic of that attack by 1", "add 1 to
  the Attacks and Strength characteristics of melee weapons", "Your unit's melee attacks have +1 A
  and S" (11th), "Your unit has +1 Sv", "Torrent weapons have 6 A" (set);
- re-rolls: "re-roll a Hit roll of 1", "you can re-roll the Wound roll", "re-roll one Hit roll";
- Critical Hits and Wounds: "an unmodified Hit roll of 5+ scores a Critical Hit";
- weapon abilities: "have the [LETHAL HITS] ability", "that attack has the [SUSTAINED HITS 1]
  ability", "have [Devastating Wounds]" (11th);
- protection: "a 5+ Feel No Pain", "the Feel No Pain 5+ ability against mortal wounds", "a 4+
  invulnerable save", "subtract 1 from the Damage characteristic of that attack" (damage
  reduction), "halve the Damage characteristic", "the Benefit of Cover", "the Stealth ability";
- "ignore any or all modifiers to ...", "suffers D3 mortal wounds", "scores one additional hit",
  "automatically wounds".

Each effect takes the conditions of its sentence: whose rule it is ("each time an attack targets
your unit": the target's; "each time a model in this unit makes an attack": the attacker's),
ranged or melee, "that targets a MONSTER or VEHICLE unit", "(excluding MONSTERS and VEHICLES)",
"within half range", "Remained Stationary", "made a Charge move this turn", "Rapid Fire weapons",
"on a Critical Wound"; any other "if" / "while" clause, a distance, an objective marker, a choice
("Select ...") is kept as a ``situational:`` condition with its words. ``effect_rows`` runs the
reader over every rule of a build (stratagems' EFFECT, datasheet abilities, detachment rules,
enhancements, and the Orders of Voice of Command) and adds the hand-kept entries
(``pipeline.effects.hand_kept``).
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from functools import lru_cache
from typing import Iterator

from pipeline.effects.vocabulary import TARGET_CHARACTERISTICS, characteristic_of, join_conditions

_CHAR_NAMES = r"ballistic skill|weapon skill|strength|armour penetration|attacks|damage|toughness|save"
_CHARS = rf"(?:{_CHAR_NAMES})(?:\s*(?:,|and|or)\s*(?:the\s+)?(?:{_CHAR_NAMES}))*"
_SHORT = r"(?:AP|BS|WS|Sv|A|S|D|T)"
_SHORTS = rf"{_SHORT}(?:\s*(?:,|and|&)\s*{_SHORT})*"


@dataclass(frozen=True)
class ReadEffect:
    """One effect read from a sentence (the columns of ``schemas.records.Effect`` it fills)."""

    side: str
    effect: str
    roll: str | None = None
    characteristic: str | None = None
    value: int | None = None
    parameter: str | None = None
    weapon_type: str | None = None
    conditions: str | None = None
    wording: str = ""


@dataclass
class _Match:
    start: int
    end: int
    effect: str
    roll: str | None = None
    characteristic: str | None = None
    value: int | None = None
    parameter: str | None = None
    side: str | None = None  # forced side (protection is the target's)
    extra: list[str] = field(default_factory=list)


def normalise(text: str) -> str:
    """The wording as the reader reads it: plain quotes and hyphens, no markdown bold, no bullets,
    one space between words.

    >>> normalise("**Models** in your unit’s  ■ squad")
    "Models in your unit's squad"
    """
    text = text.replace("’", "'").replace("‘", "'").replace("“", '"').replace("”", '"')
    text = text.replace("**", "").replace("■", " ").replace("•", " ").replace("\u2011", "-").replace("–", "-")
    return re.sub(r"[ \t\u00a0]+", " ", text).strip()


_SENTENCE_END = re.compile(r"(?<=[.!?])\s+(?=[A-Z(\[])|\n+")


def sentences(text: str) -> list[str]:
    """The sentences of a wording (split at a full stop before a capital, and at line ends).

    >>> sentences("Add 1 to the Hit roll. Re-roll a Wound roll of 1.\\nTake Aim!")
    ['Add 1 to the Hit roll.', 'Re-roll a Wound roll of 1.', 'Take Aim!']
    """
    return [s.strip() for s in _SENTENCE_END.split(normalise(text)) if s.strip()]


# --- the phrasings -------------------------------------------------------------------------------

_ROLL = re.compile(
    r"\b(add|subtract)\s+(\d+)\s+(?:to|from)\s+(?:the|that|each|any|their|all)?\s*"
    r"(hit|wound|armour saving throw|saving throw|save)(?:\s+rolls?)?"
    r"(?:\s+and\s+(?:the\s+)?(hit|wound)\s+rolls?)?", re.I)
_ROLL_11 = re.compile(r"([+-]\d+)\s+to\s+(?:their\s+|its\s+|the\s+)?(hit|wound|save)(?:\s+rolls?)?"
                      r"(?:\s+and\s+(hit|wound)\s+rolls?)?", re.I)
_CHANGE = re.compile(rf"\b(improve|worsen|increase|reduce)\s+the\s+({_CHARS})\s+characteristics?\b([^.;]*?)\s+by\s+(\d+)", re.I)
_ADD_CHAR = re.compile(rf"\b(add|subtract)\s+(\d+)\s+(?:to|from)\s+the\s+({_CHARS})\s+characteristics?\b", re.I)
_HALVE = re.compile(r"\bhalve\s+the\s+damage\s+characteristic", re.I)
_SHORT_CHANGE = re.compile(rf"(?:\bha(?:ve|s)|\bgets?|\bwith|\bgain)\s+([+-]\d+)\s+({_SHORTS})(?![\w+-])")
_SET = re.compile(r"\bha(?:ve|s)\s+(\d+)\s+(A|S|D)\b(?!\w)")
_SET_NAMED = re.compile(rf"\b(?:ha(?:ve|s)|change)\s+(?:an?\s+|the\s+)?({_CHAR_NAMES})\s+characteristic\s+"
                        r"(?:of\s+(?:that|the|this)\s+\w+\s+)?(?:of|to)\s+(\d+)\+?", re.I)
_HIT_ON = re.compile(r"unmodified\s+hit\s+roll\s+of\s+(\d)\+?\s+is\s+required\s+to\s+score\s+a\s+hit", re.I)
_REROLL = re.compile(r"\bre-roll\b((?:(?!\bre-roll\b)[^.;])*)", re.I)
_REROLL_ROLL = re.compile(r"\b(hit|wound|damage|saving throw|save)\s+rolls?(\s+of\s+(?:1|one))?|"
                          r"\b(saving throw)s?(\s+of\s+(?:1|one))?", re.I)
_CRITICAL = re.compile(r"unmodified\s+(?:successful\s+)?(hit|wound)\s+roll\s+of\s+(\d)\+\s+scores\s+a\s+critical\s+(?:hit|wound)"
                       r"|critical\s+(hit|wound)\s+is\s+scored\s+on\s+an?\s+(?:successful\s+)?unmodified\s+\w+\s+roll\s+of\s+(\d)\+"
                       r"|critical\s+(hits?|wounds?)\s+on\s+(?:an?\s+)?(?:unmodified\s+)?(?:\w+\s+roll\s+of\s+)?(\d)\+",
                       re.I)
_ABILITY = re.compile(r"\b(?:ha(?:ve|s)|gains?|with)\s+(?:the\s+)?((?:\[[^\]]+\](?:\s*(?:,|and|or|and/or)\s*)?)+)"
                      r"(?:\s+abilit(?:y|ies))?", re.I)
_BRACKET = re.compile(r"\[([^\]]+)\]")
_FNP = re.compile(r"feel no pain\s+(\d)\+(?:\s+ability)?([^.;]*)|(\d)\+\s+feel no pain(?:\s+ability)?([^.;]*)", re.I)
_INVULN = re.compile(r"\b(\d)\+\s+invulnerable\s+save|\binvulnerable\s+save\s+of\s+(\d)\+", re.I)
_NO_COVER = re.compile(r"cannot\s+(?:have|claim|gain|receive)\s+the\s+benefit\s+of\s+cover", re.I)
_COVER = re.compile(r"\b(?:have|has|gains?|receives?|given)\s+the\s+benefit\s+of\s+cover", re.I)
_STEALTH = re.compile(r"\bha(?:ve|s)\s+the\s+stealth\b|\band\s+the\s+stealth\s+abilit|\bha(?:ve|s)\s+stealth\b", re.I)
_IGNORE = re.compile(r"\bignore\s+(?:any\s+or\s+all|all|any)\s+modifiers\s+to\s+([^.;]*)", re.I)
_MORTALS = re.compile(r"\b(?:suffers?|inflicts?|inflicting)\s+(D\d(?:\+\d+)?|\d+|one|a)\s+mortal\s+wounds?", re.I)
_EXTRA_HITS = re.compile(r"\bscores?\s+(\d+|one|an?|D3|D6)\s+additional\s+hits?", re.I)
_AUTO_WOUND = re.compile(r"\bautomatically\s+wounds?\b", re.I)

# --- conditions ------------------------------------------------------------------------------------

_TARGET_SIDE = re.compile(
    r"each time an?\s+(?:enemy\s+)?(?:ranged\s+|melee\s+|psychic\s+)?attack\s+(?:is\s+made\s+that\s+|that\s+)?"
    r"(?:targets|is\s+allocated\s+to)\b|attacks?\s+that\s+targets?\s+(?:your|this|the\s+bearer)"
    r"|each\s+time\s+an\s+enemy\s+(?:model|unit)\s+makes\s+an?\s+(?:ranged\s+|melee\s+)?attack"
    r"|\bagainst\s+(?:your|this)\s+unit", re.I)
_ATTACKER_MODEL = re.compile(r"[Ee]ach time an?\s+([A-Z][A-Z\- ]*[A-Z])\s+(?:model|unit)\s+(?:in|from)\s+(?:your|this|that)\b"
                             r"|[Ee]ach time an?\s+model\s+in\s+an?\s+([A-Z][A-Z\- ]*[A-Z])\s+unit\b")
_TARGET_MODELS = re.compile(r"\b([A-Z][A-Z\-]+(?: [A-Z][A-Z\-]+)*)\s+models\s+in\s+(?:your|this)\s+unit")
_TARGETS_KEYWORDS = re.compile(
    r"targets?\s+(?:an?\s+|one\s+)?(?:enemy\s+|visible\s+|eligible\s+)*"
    r"((?:[A-Z][A-Z\-]+)(?:\s*(?:,|or|and|/)\s*[A-Z][A-Z\-]+)*)\s+(?:unit|model)s?\b")
_EXCLUDING = re.compile(r"\(excluding\s+(MONSTERS?|monster)\s*(?:and|or|/)\s*(VEHICLES?|vehicle)(?:\s+units)?\)", re.I)
_HALF_RANGE = re.compile(r"within\s+half\s+range", re.I)
_STATIONARY = re.compile(r"remained\s+stationary", re.I)
_CHARGED = re.compile(r"(?:made|makes)\s+a\s+charge\s+move\s+this\s+turn|charged\s+this\s+turn", re.I)
_PHASE = re.compile(r"\bin\s+(?:the|your|your\s+opponent's)\s+(shooting|fight)\s+phase", re.I)
_WEAPON_ABILITY = re.compile(r"\b(Torrent|Rapid Fire|Pistol|Heavy|Assault|Blast|Melta|Lance|Psychic|Grenades?)\s+weapons\b",
                             re.I)
_CRIT_HIT = re.compile(r"\bon\s+a\s+critical\s+hit\b|\bscores?\s+a\s+critical\s+hit\b", re.I)
_CRIT_WOUND = re.compile(r"\bon\s+a\s+critical\s+wound\b|\bscores?\s+a\s+critical\s+wound\b", re.I)
#: Clauses that name a situation the request does not state.
_SITUATIONAL = re.compile(
    r"\b(?:if|while|unless|provided)\b[^,.;]*|\bwithin\s+\d+\"[^,.;]*|\bwithin\s+range\s+of\s+[^,.;]*objective[^,.;]*"
    r"|\bselect\s+(?:one|either|up\s+to)\b[^,.;]*|\bonce\s+per\s+(?:battle|turn|phase)\b|\bdiscard\b[^,.;]*"
    r"|\bbelow\s+(?:half-strength|its\s+starting\s+strength)\b|\bthe\s+selected\s+ability\b"
    r"|\bclosest\s+eligible\s+target\b|\bbattle-shocked\b[^,.;]*|\bselected\s+(?:unit|enemy)\b[^,.;]*"
    r"|\bthat\s+(?:enemy\s+)?unit\b(?!\s+(?:within|is|has\s+attacked))",
    re.I)
#: The unit that suffers a Critical Hit's / Wound's mortal wounds, as ``_SITUATIONAL`` finds it.
_SUFFERER = re.compile(r"that\s+(?:enemy\s+)?unit", re.I)
#: Clauses of ``_SITUATIONAL`` that are conditions the request states after all (read as such).
_EVALUABLE = re.compile(r"half\s+range|remained\s+stationary|charge\s+move\s+this\s+turn|charged\s+this\s+turn"
                        r"|if\s+(?:it|that\s+attack|the\s+attack)\s+(?:scores|is)\s+a\s+critical", re.I)


def _number(word: str) -> str:
    return {"one": "1", "a": "1", "an": "1"}.get(word.lower(), word.upper() if word[0] in "dD" else word)


#: For each phrasing, words one of which a sentence must hold for it to match (in the sentence
#: case-folded, as the patterns' ``re.I`` compares): a sentence with none is not searched for it.
_NEEDS: dict[re.Pattern[str], frozenset[str]] = {
    _NO_COVER: frozenset({"cover"}),
    _COVER: frozenset({"cover"}),
    _HALVE: frozenset({"halve"}),
    _CHANGE: frozenset({"characteristic"}),
    _ADD_CHAR: frozenset({"characteristic"}),
    _ROLL: frozenset({"add", "subtract"}),
    _ROLL_11: frozenset({"+", "-"}),
    _SHORT_CHANGE: frozenset({"+", "-"}),
    _SET: frozenset({"have", "has"}),
    _SET_NAMED: frozenset({"characteristic"}),
    _HIT_ON: frozenset({"unmodified"}),
    _REROLL: frozenset({"re-roll"}),
    _CRITICAL: frozenset({"critical"}),
    _ABILITY: frozenset({"["}),
    _FNP: frozenset({"feel no pain"}),
    _INVULN: frozenset({"invulnerable"}),
    _STEALTH: frozenset({"stealth"}),
    _IGNORE: frozenset({"modifiers"}),
    _MORTALS: frozenset({"mortal"}),
    _EXTRA_HITS: frozenset({"additional"}),
    _AUTO_WOUND: frozenset({"automatically"}),
}
_NEEDED_WORDS: frozenset[str] = frozenset().union(*_NEEDS.values())


def _matches(s: str) -> list[_Match]:
    """Every effect phrase of one sentence, in the order printed."""
    found: list[_Match] = []
    taken: list[tuple[int, int]] = []
    folded = s.casefold()
    present = frozenset(word for word in _NEEDED_WORDS if word in folded)
    if not present:
        return found  # no phrasing can match

    def scan(pattern: re.Pattern[str]) -> Iterator[re.Match[str]]:
        """The pattern's matches; none, without running it, when no word it needs is in ``s``."""
        return iter(()) if _NEEDS[pattern].isdisjoint(present) else pattern.finditer(s)

    def add(m: re.Match, effect: str, **kw) -> None:
        if any(a < m.end() and m.start() < b for a, b in taken):
            return
        taken.append((m.start(), m.end()))
        found.append(_Match(m.start(), m.end(), effect, **kw))

    for m in scan(_NO_COVER):
        add(m, "grant-ability", parameter="IGNORES COVER", side="attacker")
    for m in scan(_COVER):
        add(m, "benefit-of-cover", side="target")
    for m in scan(_HALVE):
        add(m, "damage-reduction", parameter="half", side="target")
    for m in scan(_CHANGE):
        sign = 1 if m.group(1).lower() in ("improve", "increase") else -1
        bound = re.search(r"better than (\d\+)", s[m.end():], re.I)
        for name in re.split(r"\s*(?:,|and|or)\s*(?:the\s+)?", m.group(2)):
            char = characteristic_of(name)
            if char:
                add_kw = dict(characteristic=char, value=sign * int(m.group(4)),
                              parameter=bound.group(1) if bound and char in ("Sv", "BS", "WS") else None)
                found.append(_Match(m.start(), m.end(), "modify-characteristic", **add_kw))
        taken.append((m.start(), m.end()))
    for m in scan(_ADD_CHAR):
        sign = 1 if m.group(1).lower() == "add" else -1
        for name in re.split(r"\s*(?:,|and|or)\s*(?:the\s+)?", m.group(3)):
            char = characteristic_of(name)
            if char == "D" and sign < 0 and _TARGET_SIDE.search(s[:m.start()]):
                add(m, "damage-reduction", parameter="one", side="target")
            elif char:
                if any(a < m.end() and m.start() < b for a, b in taken) and found and found[-1].start != m.start():
                    continue
                found.append(_Match(m.start(), m.end(), "modify-characteristic", characteristic=char,
                                    value=sign * int(m.group(2))))
        taken.append((m.start(), m.end()))
    for m in scan(_ROLL):
        sign = 1 if m.group(1).lower() == "add" else -1
        rolls = [m.group(3), m.group(4)] if m.group(4) else [m.group(3)]
        for roll in rolls:
            roll = "save" if "sav" in roll.lower() else roll.lower()
            found.append(_Match(m.start(), m.end(), "modify-roll", roll=roll, value=sign * int(m.group(2))))
        taken.append((m.start(), m.end()))
    for m in scan(_ROLL_11):
        rolls = [m.group(2), m.group(3)] if m.group(3) else [m.group(2)]
        if any(a < m.end() and m.start() < b for a, b in taken):
            continue
        for roll in rolls:
            found.append(_Match(m.start(), m.end(), "modify-roll", roll=roll.lower(), value=int(m.group(1))))
        taken.append((m.start(), m.end()))
    for m in scan(_SHORT_CHANGE):
        if any(a < m.end() and m.start() < b for a, b in taken):
            continue
        value = int(m.group(1))
        for name in re.split(r"\s*(?:,|and|&)\s*", m.group(2)):
            char = characteristic_of(name)
            if char == "D" and value < 0 and _TARGET_SIDE.search(s[:m.start()]):
                found.append(_Match(m.start(), m.end(), "damage-reduction", parameter="one", side="target"))
            elif char:
                found.append(_Match(m.start(), m.end(), "modify-characteristic", characteristic=char, value=value))
        taken.append((m.start(), m.end()))
    for m in scan(_SET):
        add(m, "set-characteristic", characteristic=m.group(2), value=int(m.group(1)))
    for m in scan(_SET_NAMED):
        add(m, "set-characteristic", characteristic=characteristic_of(m.group(1)), value=int(m.group(2)))
    for m in scan(_HIT_ON):
        add(m, "hit-on", value=int(m.group(1)))
    for m in scan(_REROLL):
        clause = m.group(1)
        clause = re.split(r"\b(?:and\s+)?(?:if|while|each time|until)\b|\band\s+(?!wound|hit|damage|the\s+wound|"
                          r"the\s+hit|the\s+damage)", clause, maxsplit=1, flags=re.I)[0]
        head = clause.lower()
        at = 0
        for r in _REROLL_ROLL.finditer(clause):
            if not re.fullmatch(r"\s*(?:(?:you\s+can\s+)?(?:a|the|that|any|all|one|their|your|its|and|or|,|\s)+)?"
                                r"(?:unmodified\s+|failed\s+)?", clause[at:r.start()], re.I):
                break
            at = r.end()
            roll = (r.group(1) or r.group(3)).lower()
            roll = "save" if "sav" in roll else roll
            ones = bool(r.group(2) or r.group(4)) or "of 1" in head
            policy = "ones" if ones else "one" if re.match(r"\s*(?:one|a single)\b", head) else "all"
            found.append(_Match(m.start(), m.start() + 6 + r.end(), "reroll", roll=roll, parameter=policy))
        taken.append((m.start(), m.start() + 6 + len(clause)))
    for m in scan(_CRITICAL):
        roll = (m.group(1) or m.group(3) or m.group(5) or "").lower().rstrip("s")
        add(m, "critical-on", roll=roll, value=int(m.group(2) or m.group(4) or m.group(6)))
    for m in scan(_ABILITY):
        if re.search(r"excluding\s*$", s[:m.start()], re.I):
            continue
        if any(a < m.end() and m.start() < b for a, b in taken):
            continue
        taken.append((m.start(), m.end()))
        for b in _BRACKET.finditer(m.group(1)):
            found.append(_Match(m.start(), m.end(), "grant-ability", parameter=normalise(b.group(1)).upper()))
    for m in scan(_FNP):
        rest = (m.group(2) if m.group(1) else m.group(4)) or ""
        value = int(m.group(1) or m.group(3))
        scopes = []
        if re.search(r"mortal\s+wounds", rest, re.I):
            scopes.append("mortal-wounds")
        if re.search(r"psychic", rest, re.I):
            scopes.append("psychic")
        for scope in scopes or ["all"]:
            found.append(_Match(m.start(), m.end(), "feel-no-pain", value=value, parameter=scope, side="target"))
        taken.append((m.start(), m.end()))
    for m in scan(_INVULN):
        add(m, "invulnerable-save", value=int(m.group(1) or m.group(2)), side="target")
    for m in scan(_STEALTH):
        add(m, "stealth", side="target")
    for m in scan(_IGNORE):
        add(m, "ignore-modifiers", parameter=m.group(1).strip())
    for m in scan(_MORTALS):
        add(m, "mortal-wounds", parameter=_number(m.group(1)))
    for m in scan(_EXTRA_HITS):
        add(m, "extra-hits", parameter=_number(m.group(1)))
    for m in scan(_AUTO_WOUND):
        add(m, "auto-wound")
    return sorted(found, key=lambda f: f.start)


def _keywords(printed: str) -> str:
    """``MONSTER or VEHICLE`` -> ``MONSTER/VEHICLE`` (singular).

    >>> _keywords("MONSTERS and VEHICLES")
    'MONSTER/VEHICLE'
    """
    parts = [p for p in re.split(r"\s*(?:,|\bor\b|\band\b|/)\s*", printed) if p]
    return "/".join(p.upper()[:-1] if p.upper().endswith(("MONSTERS", "VEHICLES", "CHARACTERS")) else p.upper()
                    for p in parts)


def _situational(s: str, effect: _Match) -> list[str]:
    """The clauses of a sentence that an effect depends on and the request cannot state: those
    printed before it, and one right after it with no comma between ("..., or a 4+ invulnerable
    save instead if your unit is ...")."""
    terms = []
    for m in _SITUATIONAL.finditer(s):
        if _EVALUABLE.search(m.group(0)):
            continue
        before = m.end() <= effect.start
        right_after = m.start() >= effect.end and not re.search(r"[,;:]", s[effect.end:m.start()])
        inside = effect.start <= m.start() < effect.end
        if before or right_after or inside:
            terms.append("situational:" + m.group(0).strip())
    return terms


def read_sentence(s: str) -> list[ReadEffect]:
    """The effects of one sentence with their conditions.

    >>> [(e.side, e.effect, e.characteristic, e.value, e.weapon_type) for e in read_sentence(
    ...     "Improve the Ballistic Skill characteristic of ranged weapons equipped by models in this unit by 1.")]
    [('attacker', 'modify-characteristic', 'BS', 1, 'ranged')]
    >>> [(e.side, e.effect, e.roll, e.value) for e in read_sentence(
    ...     "Until the end of the phase, each time an attack targets your unit, subtract 1 from the Hit roll.")]
    [('target', 'modify-roll', 'hit', -1)]
    """
    out: list[ReadEffect] = []
    for m in _matches(s):
        upto = s[:m.end]
        side = m.side or ("target" if _TARGET_SIDE.search(upto) else "attacker")
        if m.effect == "modify-characteristic" and m.characteristic in TARGET_CHARACTERISTICS and m.side is None:
            side = "attacker" if re.search(r"\benemy\b|\bthat\s+unit\b|\btarget\b", upto, re.I) else "target"
        scope = upto + re.split(r"[,;.]", s[m.end:], maxsplit=1)[0]
        ranged = re.search(r"\branged\b|\bselected\s+to\s+shoot\b", scope, re.I)
        melee = re.search(r"\bmelee\b|\bselected\s+to\s+fight\b|\bfights\b", scope, re.I)
        weapon_type = "ranged" if ranged and not melee else "melee" if melee and not ranged else None
        terms: list[str] = []
        phase = _PHASE.search(upto)
        if phase:
            terms.append(f"phase:{phase.group(1).lower()}")
        if _HALF_RANGE.search(upto):
            terms.append("half-range")
        if _STATIONARY.search(s):
            terms.append("stationary")
        if _CHARGED.search(s):
            terms.append("charged")
        excluding = _EXCLUDING.search(s)
        if excluding:
            terms.append("target:non-MONSTER/VEHICLE")
        elif side == "attacker":
            kw = _TARGETS_KEYWORDS.search(upto)
            if kw:
                terms.append(f"target:{_keywords(kw.group(1))}")
        model = _ATTACKER_MODEL.search(upto)
        if model and side == "attacker":
            terms.append(f"attacker:{_keywords(model.group(1) or model.group(2))}")
        models = _TARGET_MODELS.search(upto)
        if models and side == "target" and m.effect in ("feel-no-pain", "invulnerable-save", "stealth",
                                                          "modify-characteristic"):
            terms.append(f"target:{_keywords(models.group(1))}")
        ability = _WEAPON_ABILITY.search(upto)
        if ability:
            terms.append("weapon:" + ability.group(1).upper().rstrip("S") if ability.group(1).lower().startswith(
                "grenade") else "weapon:" + ability.group(1).upper())
        if _CRIT_HIT.search(upto) and m.effect not in ("critical-on",):
            terms.append("critical-hit")
        if _CRIT_WOUND.search(upto) and m.effect not in ("critical-on",):
            terms.append("critical-wound")
        situational = _situational(s, m)
        if m.effect == "mortal-wounds" and {"critical-hit", "critical-wound"} & set(terms):
            # "scores a Critical Wound against a unit ..., that unit suffers D6 mortal wounds": the target
            situational = [t for t in situational if not _SUFFERER.fullmatch(t.partition(":")[2])]
        terms.extend(situational)
        out.append(ReadEffect(side=side, effect=m.effect, roll=m.roll, characteristic=m.characteristic,
                              value=m.value, parameter=m.parameter, weapon_type=weapon_type,
                              conditions=join_conditions(terms), wording=s))
    return out


def read_text(text: str) -> list[ReadEffect]:
    """Every effect of a rule's wording (see ``read_wording``; a list of its own)."""
    return list(read_wording(text or ""))


@lru_cache(maxsize=65536)
def read_wording(text: str) -> tuple[ReadEffect, ...]:
    """Every effect of a rule's wording, sentence by sentence (``read_sentence``).

    >>> [(e.effect, e.parameter) for e in read_wording(
    ...     "Until the end of the phase, weapons equipped by models in your unit have the [LETHAL HITS] ability.")]
    [('grant-ability', 'LETHAL HITS')]

    The same wording printed by several sources is read once (cached).
    """
    out: list[ReadEffect] = []
    lead = ""
    options: list[str] = []
    for s in sentences(text or ""):
        item = _LIST_ITEM.match(s) if lead else None
        if item:
            read = read_sentence(f"{lead} {s[item.end():]}")
            if item.group(1) or (out and out[-1].conditions and "choice:" in out[-1].conditions):
                read = [_with_term(e, f"choice:{_choice_name(e)}") for e in read]
                if item.group(1) and out and "choice:" not in (out[-1].conditions or ""):
                    out[-1] = _with_term(out[-1], f"choice:{_choice_name(out[-1])}")
            out.extend(read)
            continue
        lead = s[:-1] if s.endswith(":") else ""
        if lead:
            continue
        read = read_sentence(s)
        if options and _SELECTED.search(s):
            read = [e for e in read if e.effect != "grant-ability"] + [
                ReadEffect(side="attacker", effect="grant-ability", parameter=o, weapon_type=_weapon_type(s),
                           conditions=join_conditions([f"choice:{o}"]), wording=s) for o in options]
            options = []
            out.extend(read)
            continue
        choice = _CHOICE.search(s)
        if choice:
            options = [normalise(b).upper() for b in _BRACKET.findall(s[choice.start():])]
            continue
        out.extend(read)
    return tuple(out)


#: "Select either the [LETHAL HITS] or [SUSTAINED HITS 1] ability." and the sentence after it.
_CHOICE = re.compile(r"\bselect\s+(?:either\s+|one\s+of\s+)?(?:the\s+)?(?:following\s+)?(?:abilities\b|weapon\s+"
                     r"abilities\b|\[)", re.I)
_SELECTED = re.compile(r"\bha(?:ve|s)\s+(?:the\s+selected|that)\s+(?:set\s+of\s+)?abilit", re.I)


def _weapon_type(s: str) -> str | None:
    ranged, melee = re.search(r"\branged\b", s, re.I), re.search(r"\bmelee\b", s, re.I)
    return "ranged" if ranged and not melee else "melee" if melee and not ranged else None


def _choice_name(effect: ReadEffect) -> str:
    """The name an option of a choice is picked by: the ability, or the change as printed."""
    if effect.effect == "grant-ability" and effect.parameter:
        return effect.parameter
    if effect.characteristic:
        return f"{effect.value:+d} {effect.characteristic}"
    return effect.effect


#: An item of a list after a sentence ending in ``have:`` (11th edition: "Your unit's melee attacks
#: have: / [Sustained Hits 1]. / Or: [Lethal Hits].").
_LIST_ITEM = re.compile(r"(Or:\s*)?[▪\-]?\s*(?=\[|[+-]\d|If\b|[A-Z][a-z]+(?: [A-Z][a-z]+)*\.?$|\d+\s+[A-Z]{1,2}\b)")


def _with_term(effect: ReadEffect, term: str) -> ReadEffect:
    from dataclasses import replace

    return replace(effect, conditions=join_conditions([*(effect.conditions or "").split(";"), term]
                                                      if effect.conditions else [term]))


#: What the coverage counts as a rule that changes an attack: its wording names a roll, a
#: characteristic or an ability of an attack, or a protection against one.
ATTACK_WORDING = re.compile(
    r"hit\s+rolls?|wound\s+rolls?|saving\s+throw|save\s+characteristic|\bSv\b|invulnerable\s+save|feel\s+no\s+pain"
    r"|damage\s+characteristic|ballistic\s+skill|weapon\s+skill|strength\s+characteristic|armour\s+penetration"
    r"|attacks\s+characteristic|toughness\s+characteristic|critical\s+hit|critical\s+wound|benefit\s+of\s+cover"
    r"|\bstealth\b|\bto\s+hit\b|[+-]\d+\s+(?:A|S|AP|D|BS|WS|T)\b|damage\s+roll"
    r"|\[(?:lethal\s+hits|sustained\s+hits|devastating\s+wounds|anti-|twin-linked|lance|heavy|ignores\s+cover"
    r"|precision|melta|blast|rapid\s+fire|torrent|hazardous)",
    re.I)


def changes_an_attack(text: str | None) -> bool:
    """Whether a rule's wording changes an attack, as the coverage counts it (``ATTACK_WORDING``).

    >>> changes_an_attack("Add 3\\" to the Move characteristic of models in this unit.")
    False
    >>> changes_an_attack("Each time a model in this unit makes an attack, re-roll a Hit roll of 1.")
    True
    """
    return bool(text) and bool(ATTACK_WORDING.search(normalise(text or "")))
