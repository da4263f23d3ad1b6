"""Invulnerable saves and Feel No Pain given as abilities, read once for every source.

A source gives a unit's protection either as characteristics (the export's ``inv_sv``, a page's
invulnerable save box: ``pipeline.assemble.models``) or as abilities: a core ability
``Feel No Pain 5+``; an ability named ``Invulnerable Save (4+*)`` (BattleScribe), maybe for one
model (``Invulnerable Save (2+*) [Ibram Gaunt]``); a sentence in an ability's text ("Models in this
unit have the Feel No Pain 5+ ability against mortal wounds", "Ibram Gaunt has a 5+ invulnerable
save"). This module reads those, the same way whatever the source:

- the value (``N+``), from the name, else from the text (the name's wins, with a flag when they
  differ);
- the scope: an invulnerable save ``ranged`` / ``melee`` (a ``*`` or the text: "against ranged
  attacks"); a Feel No Pain ``all`` damage, ``mortal-wounds`` or ``psychic`` attacks (one row
  each: "against mortal wounds and Psychic Attacks" is two);
- the model it is for: a model line named in the ability's name (``[Model]`` or ``(Model)``) or
  as the sentence's subject ("Ibram Gaunt has ..."); None for the whole unit ("this model",
  "models in this unit", "the bearer");
- a condition: a sentence that gives it only sometimes ("While this model is leading a unit",
  "Once per battle", an Aura, "until the end of the phase") is kept with that sentence as its
  ``condition``; the attack engine applies only those without one by default.
"""

from __future__ import annotations

import re
from collections import defaultdict
from typing import Iterable, Literal, NamedTuple

from pipeline.assemble.models import read_invulnerable
from pipeline.normalise.text import clean_line
from schemas.records import Ability, FeelNoPain, ModelProfile, Record

FeelNoPainScope = Literal["all", "mortal-wounds", "psychic"]

#: The name of an ability that is an invulnerable save (``Invulnerable Save``, ``(4+)``, ``(5+*)``,
#: ``5+``, ``*``, maybe ``[Model name]``).
INVULNERABLE_NAME = _INVULN_NAME = re.compile(
    r"^Invulnerable Save\s*\(?\s*(?P<value>\d\+\*?)?\s*\)?\s*(?P<star>\*)?\s*(?:\[(?P<model>[^\]]+)\])?$",
    re.IGNORECASE,
)
_INVULN_TEXT = re.compile(r"(?:a|an)\s+(?P<a>\d)\+\s+invulnerable save|invulnerable save of\s+(?P<b>\d)\+",
                          re.IGNORECASE)
_BARE_ROLL = re.compile(r"^\s*(?P<v>\d)\+\s*\*?\s*$")
_FNP_NAME = re.compile(r"^Feel No Pain(?:\s+(?P<v>\d)\+?)?\s*(?:\[(?P<model>[^\]]+)\])?$", re.IGNORECASE)
_FNP_TEXT = re.compile(
    r"(?:Feel No Pain\s+(?P<a>\d)\+|(?P<b>\d)\+\s+Feel No Pain)(?:\s+ability)?(?P<rest>[^.;]*)",
    re.IGNORECASE,
)
#: A sentence that gives the protection only sometimes (its condition is kept, never dropped).
_CONDITIONAL = re.compile(
    r"^\s*(?:while|if|each time|when|once per|until|at the start|in your|in the)\b|leading a unit|within\s+\d"
    r"|\binstead\b|\buntil the end\b",
    re.IGNORECASE,
)
_UNIT_SUBJECTS = re.compile(
    r"^(?:models in (?:this|the bearer(?:'|’)s) unit|this (?:model|unit)|the bearer|each model in this unit)\b",
    re.IGNORECASE,
)
_SENTENCES = re.compile(r"(?<=[.!?])\s+|\n+")


class Protection(NamedTuple):
    """One invulnerable save or Feel No Pain read from an ability.

    ``value``: the roll target (4 for ``4+``). ``scope``: for an invulnerable save None (every
    attack), ``ranged`` or ``melee``; for a Feel No Pain ``all``, ``mortal-wounds`` or ``psychic``.
    ``model_name``: the model line it is for, None for every model. ``condition``: the sentence
    when it applies only sometimes, else None. ``flags``: (code, detail) pairs. ``note``: for an
    invulnerable save that is starred or restricted, its text: the ``*`` note a model line reads
    it with (``pipeline.assemble.models.read_invulnerable``), so that a save given as an ability
    and one printed on the line are read alike.
    """

    value: int
    scope: str | None
    model_name: str | None
    condition: str | None
    flags: tuple[tuple[str, str], ...] = ()
    note: str | None = None


def _fold(name: str) -> str:
    return re.sub(r"[^a-z0-9]+", " ", name.casefold()).strip()


def _model_named(text: str, model_names: Iterable[str]) -> str | None:
    """The model line ``text`` names (case and punctuation aside; a plural is the line too).

    >>> _model_named("IBRAM GAUNT", ["Ibram Gaunt", "Tanith Ghosts"])
    'Ibram Gaunt'
    >>> _model_named("Sister Superior", ["Battle Sisters"]) is None
    True
    """
    wanted = _fold(text)
    for name in model_names:
        folded = _fold(name)
        if wanted and (folded == wanted or folded.rstrip("s") == wanted.rstrip("s")):
            return name
    return None


def _subject(sentence: str, model_names: Iterable[str]) -> tuple[bool, str | None]:
    """(is the sentence about this unit or one of its models, the model line it names)."""
    s = clean_line(sentence)
    if _UNIT_SUBJECTS.match(s):
        return True, None
    m = re.match(r"^(?:the\s+)?(?P<who>.+?)\s+(?:model\s+)?(?:has|have)\b", s, re.IGNORECASE)
    if m:
        model = _model_named(m.group("who"), model_names)
        if model is not None:
            return True, model
    return False, None


def read_invulnerable_ability(name: str, text: str | None, model_names: Iterable[str] = ()) -> Protection | None:
    """The invulnerable save an ability named ``Invulnerable Save ...`` gives, or None when the
    name is not one. A value neither the name nor the text gives is flagged
    ``invulnerable_save_unreadable`` (value 0: the caller does not load it).

    >>> read_invulnerable_ability("Invulnerable Save (5+*)", "This model has a 5+ invulnerable save against ranged attacks.")[:4]
    (5, 'ranged', None, None)
    >>> read_invulnerable_ability("Invulnerable Save 5+", "Ibram Gaunt has a 5+ Invulnerable Save", ["Ibram Gaunt", "Tanith Ghost"])[:3]
    (5, None, 'Ibram Gaunt')
    >>> read_invulnerable_ability("Invulnerable Save (2+*) [Saint Celestine]", "", ["Saint Celestine", "Geminae Superia"])[:3]
    (2, 'conditional (no note)', 'Saint Celestine')
    >>> read_invulnerable_ability("Leader", "x") is None
    True
    """
    m = _INVULN_NAME.match(clean_line(name))
    if not m:
        return None
    text = clean_line((text or "").replace("\n", " ")) if text else ""
    models = list(model_names)
    flags: list[tuple[str, str]] = []
    printed = (m.group("value") or "")
    starred = printed.endswith("*") or bool(m.group("star"))
    printed = printed.rstrip("*")
    t = _INVULN_TEXT.search(text)
    first, _, rest = (text or "").partition("* ")
    bare = _BARE_ROLL.match(first) if first.strip() else None
    from_text = (t.group("a") or t.group("b")) + "+" if t else (bare.group("v") + "+" if bare else "")
    if bare and not t:
        text = ("* " + rest).strip() if rest else ""  # "4+ * Ranged attacks only.": the note after the value
    value_text = printed or from_text
    if not value_text:
        return Protection(0, None, None, None, (("invulnerable_save_unreadable", f"{name!r}: {text!r}"),))
    if printed and from_text and printed != from_text:
        flags.append(("invulnerable_save_name_and_text_differ",
                      f"name {name!r}, text {text!r}: the name's value is used"))
    lowered = text.lower()
    restricted = starred or "ranged attacks" in lowered or "melee attacks" in lowered
    note = (text or None) if restricted else None
    if restricted:
        line = read_invulnerable(value_text + "*", note)  # the model line's reading of a * note
        scope, value_text = line.scope, f"{line.value}+"
        flags += [f for f in line.flags if f[0] != "invulnerable_save_note"]
    else:
        scope = None
    model = _model_named(m.group("model"), models) if m.group("model") else None
    if m.group("model") and model is None:
        flags.append(("ability_model_not_found", f"{name!r} names {m.group('model')!r}, no model line of the unit"))
    condition = None
    for sentence in _SENTENCES.split(text):
        if not _INVULN_TEXT.search(sentence):
            continue
        if _CONDITIONAL.search(sentence):
            condition = clean_line(sentence)
        about, named = _subject(sentence, models)
        if model is None and named is not None:
            model = named
        break
    return Protection(int(value_text[0]), scope, model, condition, tuple(flags), note)


def read_feel_no_pain(name: str, parameter: str | None, text: str | None,
                      model_names: Iterable[str] = ()) -> list[Protection]:
    """Every Feel No Pain an ability gives: the core ability ``Feel No Pain 5+`` (value in the
    name or the parameter), and each sentence of its text that gives one to this unit or one of
    its models ("... have the Feel No Pain 4+ ability against mortal wounds and Psychic Attacks").

    >>> read_feel_no_pain("Feel No Pain", "5+", None)[0][:4]
    (5, 'all', None, None)
    >>> [(p.value, p.scope) for p in read_feel_no_pain("Null Rod", None,
    ...     "Models in the bearer’s unit have the Feel No Pain 4+ ability against mortal wounds and Psychic Attacks.")]
    [(4, 'mortal-wounds'), (4, 'psychic')]
    >>> read_feel_no_pain("Recitation of Faith", None, "While this model is leading a unit, models in "
    ...                   "that unit have the Feel No Pain 4+ ability against mortal wounds.")[0].condition
    'While this model is leading a unit, models in that unit have the Feel No Pain 4+ ability against mortal wounds.'
    """
    models = list(model_names)
    out: list[Protection] = []
    m = _FNP_NAME.match(clean_line(name))
    if m:
        value = m.group("v") or (re.match(r"\s*(\d)\+?", parameter or "") or [None, None])[1]
        model = _model_named(m.group("model"), models) if m.group("model") else None
        if value:
            return [Protection(int(value), "all", model, None)]
    aura = "aura" in name.casefold()
    for sentence in _SENTENCES.split(clean_line((text or "").replace("\n", " ")) if text else ""):
        found = _FNP_TEXT.search(sentence)
        if not found:
            continue
        value = int(found.group("a") or found.group("b"))
        rest = found.group("rest").lower()
        scopes: list[FeelNoPainScope] = []
        if "mortal wound" in rest:
            scopes.append("mortal-wounds")
        if "psychic" in rest:
            scopes.append("psychic")
        condition = None
        if aura or _CONDITIONAL.search(sentence):
            condition = clean_line(sentence)
        elif "against" in rest and not scopes:
            condition = clean_line(sentence)  # against something the engine does not know
        about, model = _subject(sentence, models)
        if not about and condition is None:
            condition = clean_line(sentence)  # about another unit (a leader's, an aura's)
        out += [Protection(value, scope, model, condition) for scope in (scopes or ["all"])]
    return out


def feel_no_pain_rows(records: Iterable[Record]) -> list[FeelNoPain]:
    """The ``feel_no_pain`` rows of the merged records: every Feel No Pain of every ``Ability``
    (``read_feel_no_pain``, with its datasheet's model lines for the model it names), one row per
    (datasheet, ability, scope), with the ability's provenance."""
    records = list(records)
    models: dict[str, list[str]] = defaultdict(list)
    for record in records:
        if type(record) is ModelProfile:
            models[record.datasheet_id].append(record.model_name)
    out: dict[tuple, FeelNoPain] = {}
    for record in records:
        if type(record) is not Ability:
            continue
        if "feel no pain" not in (record.name + " " + (record.text or "")).casefold():
            continue
        for p in read_feel_no_pain(record.name, record.parameter, record.text, models[record.datasheet_id]):
            row = FeelNoPain(
                source_id=record.source_id, locator=record.locator, datasheet_id=record.datasheet_id,
                ability_kind=record.kind, ability_name=record.name, scope=p.scope or "all",
                threshold=p.value, model_name=p.model_name, condition=p.condition,
            )
            out.setdefault(row.key(), row)
    return list(out.values())
