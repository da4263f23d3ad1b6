"""BattleScribe rule descriptions saved as text -> ``RuleText`` records.

Input: several rule descriptions run together, one rule starting per line with its name first
(``Acts of Faith If your Army Faction is ...``); the following lines belong to the same rule
until the next rule starts. Output: one ``RuleText`` per rule (``rule_key`` the slug of its name,
``section`` None, edition and game mode from the source), ``DataFlag`` for doubtful lines and
``Reject`` for text before the first rule.

Rule names are not marked up; they are found by structure (``split_rule_name``):

- A line starts a rule when it begins with a *name*: one or more capitalised words (small
  connecting words such as ``of`` or ``the`` allowed inside, a capitalised word last) followed
  by a *sentence starter* (``SENTENCE_STARTERS``: ``If``, ``Some``, ``While``, ``Each``, ...)
  and more text. The name is the longest such prefix (``When Peril Threatens If ...`` keeps
  ``When Peril Threatens``).
- Continuation lines: a line whose first word is itself a sentence starter
  (``Each time you gain ...``), an upper-case sub-heading (``GAINING MIRACLE DICE``), a bullet
  (``- At the start ...``, ``■ Advance roll``), or any line with no name before a starter.
- A line that starts with a lower-case letter continues the previous line's sentence (the line
  was broken mid-sentence: ``... only a single dice can`` / ``be substituted)``): it is joined
  to the previous line with a space.
- A continuation line that starts with two or more capitalised words followed by a lower-case
  word, with no starter among them, may be a rule whose starter is missing from the list: it is
  kept as a continuation and flagged ``possible_unsplit_rule`` in ``data_flags``.

Text: ``^^Keyword^^`` markup (also ``^^**KW**^^`` and ``**^^KW^^**``) becomes the plain keyword
(``strip_battlescribe_markup``); each line is cleaned (``clean_line``); the lines of a rule are
joined by newlines (each printed line is one paragraph or list item). A rule printed twice with
the same text is collapsed and counted in ``duplicates["rule_texts"]``.
"""

from __future__ import annotations

import re

from pipeline.normalise.text import clean_line, slug, strip_battlescribe_markup
from pipeline.extractors import ParseResult, source_rule_text
from schemas.records import DataFlag, Reject, Source

TABLE = "rule_texts"

#: Words that begin the first sentence of a rule's text, right after its name (case-sensitive).
SENTENCE_STARTERS = frozenset(
    """
    A After All An Any As At Before During Each Every For From If In Instead Models Once Roll
    Select Some The This Those Units Unless Until Weapons When Whenever While Whilst You Your
    """.split()
)

#: Lower-case words allowed inside a rule name (``Acts of Faith``), never at its end.
NAME_CONNECTORS = frozenset("a an and at by for from in into of on or the to with".split())

#: Bullet characters that open a list item (always a continuation line).
BULLETS = ("-", "■", "•", "*", "–", "●")

_NAME_WORD = re.compile(r"^[A-Z][A-Za-z0-9'’\-]*$")


def split_rule_name(line: str) -> tuple[str, str] | None:
    """``(name, text)`` when the line starts a rule, else None (a continuation line).

    >>> split_rule_name("Acts of Faith If your Army Faction is ^^Adepta Sororitas^^, each unit")
    ('Acts of Faith', 'If your Army Faction is ^^Adepta Sororitas^^, each unit')
    >>> split_rule_name("Leader While a Bodyguard unit contains a Leader, it is an Attached unit.")
    ('Leader', 'While a Bodyguard unit contains a Leader, it is an Attached unit.')
    >>> split_rule_name("Each time you gain a Miracle dice, roll one D6.") is None
    True
    >>> split_rule_name("GAINING MIRACLE DICE") is None, split_rule_name("- At the start.") is None
    (True, True)
    """
    line = clean_line(line)
    if not line or line.startswith(BULLETS) or line.upper() == line:
        return None
    words = line.split(" ")
    # The run of words that may belong to a name: capitalised words and connectors.
    run = 0
    while run < len(words) and (_NAME_WORD.match(words[run]) or words[run] in NAME_CONNECTORS):
        run += 1
    best = None
    for k in range(1, min(run + 1, len(words) - 1)):
        if (
            words[k] in SENTENCE_STARTERS
            and _NAME_WORD.match(words[0])
            and _NAME_WORD.match(words[k - 1])
        ):
            best = k
    if best is None:
        return None
    return " ".join(words[:best]), " ".join(words[best:])


def looks_like_unsplit_rule(line: str) -> bool:
    """A continuation line that begins like a name (2+ capitalised words, then lower case).

    >>> looks_like_unsplit_rule("Lone Operative Provided that this unit is not attached")
    True
    >>> looks_like_unsplit_rule("Each time a unit that is part of an Attached unit is destroyed")
    False
    """
    line = clean_line(line)
    if not line or line.startswith(BULLETS) or line.upper() == line:
        return False
    words = line.split(" ")
    if words[0] in SENTENCE_STARTERS:
        return False
    run = 0
    while run < len(words) and _NAME_WORD.match(words[run]):
        run += 1
    return 2 <= run < len(words) and words[run][:1].islower()


def parse(text: str, source: Source) -> ParseResult:
    """Parse BattleScribe rule descriptions (one rule starting per line) into ``RuleText``.

    ``text``: the saved descriptions; ``source``: the manifest entry (``source_id``, ``edition``,
    ``game_mode``, ``version_date`` as the effective date). Never raises on bad input: text before
    the first rule is rejected; doubtful lines are flagged.
    """
    result = ParseResult()
    rules: list[tuple[int, str, list[str]]] = []  # (line, name, text lines)
    flags: list[tuple[int, str]] = []  # (line, raw) of possible unsplit rules
    for number, raw in enumerate(text.splitlines(), start=1):
        line = clean_line(strip_battlescribe_markup(raw))
        if not line:
            continue
        split = split_rule_name(line)
        if split is not None:
            rules.append((number, split[0], [split[1]]))
        elif not rules:
            result.rejects.append(
                Reject(
                    source_id=source.source_id,
                    locator=f"line {number}",
                    table_name=TABLE,
                    raw_text=raw,
                    reason="text before the first rule (no line starting with a rule name)",
                )
            )
        elif line[0].islower():
            rules[-1][2][-1] += " " + line
        else:
            rules[-1][2].append(line)
            if looks_like_unsplit_rule(line):
                flags.append((number, raw))
    seen: set[tuple[str, str]] = set()
    for number, name, lines in rules:
        body = "\n".join(lines)
        if (name.casefold(), body) in seen:
            result.duplicates[TABLE] += 1
            continue
        seen.add((name.casefold(), body))
        result.records.append(
            source_rule_text(source, f"line {number}", slug(name), name, body)
        )
    for number, raw in flags:
        owner = next(name for start, name, _ in reversed(rules) if start < number)
        result.records.append(
            DataFlag(
                source_id=source.source_id,
                locator=f"line {number}",
                table_name=TABLE,
                entity_key=slug(owner),
                flag="possible_unsplit_rule",
                detail=(
                    "continuation line starts like a rule name with no known sentence "
                    f"starter: {clean_line(raw)[:80]!r}"
                ),
            )
        )
    return result
