"""Edition detection for a text whose source does not declare its edition.

The markers are data (``MARKERS``): phrases that only one edition's wording uses. The detector
counts each marker, keeps where it was first seen as evidence, and decides by the weighted
count; a text with markers of both editions is reported as ``mixed`` with the winner and the
margin, never silently.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

#: (edition, name, pattern, weight). Patterns are case-insensitive unless they start with (?-i).
MARKERS: tuple[tuple[int, str, str, int], ...] = (
    (11, "numbered section", r"(?-i:(?:^|\]|[A-Z] ?)(?:0[1-9]|1\d|2[0-4])\.\d{2}(?:\.\d{2})?\b)", 1),
    (11, "attack dice", r"\battack dice\b", 2),
    (11, "engaged/unengaged", r"\b(?:un)?engaged\b", 2),
    (11, "hazard roll", r"\bhazard rolls?\b", 3),
    (11, "battle-shock roll", r"\bbattle-shock rolls?\b", 3),
    (11, "InSv", r"(?-i:\bInSv\b)", 3),
    (10, "Weapons with [X] in their profile are known as", r"weapons with \[[^\]]+\] in their profile are known as", 3),
    (10, "Engagement Range", r"(?-i:\bEngagement Range\b)", 2),
    (10, "Hazardous test", r"\bhazardous tests?\b", 3),
    (10, "Battle-shock test", r"(?-i:\bBattle-shock tests?\b)", 2),
)


@dataclass(frozen=True)
class Evidence:
    edition: int
    marker: str
    count: int
    first_line: int
    excerpt: str


@dataclass(frozen=True)
class Detection:
    """``edition`` None when no marker was found; ``mixed`` when both editions' markers occur."""

    edition: int | None
    scores: dict[int, int]
    mixed: bool
    evidence: tuple[Evidence, ...]


def detect_edition(text: str) -> Detection:
    """Detect the edition of a rules text from its wording.

    >>> detect_edition("Make a hazard roll for each model (06.03).").edition
    11
    >>> detect_edition("Weapons with [TORRENT] in their profile are known as Torrent weapons.").edition
    10
    >>> detect_edition("Some text.").edition is None
    True
    """
    text = text.replace("\u2011", "-")
    lines = text.splitlines() or [text]
    scores = {10: 0, 11: 0}
    evidence: list[Evidence] = []
    for edition, name, pattern, weight in MARKERS:
        regex = re.compile(pattern, re.IGNORECASE | re.MULTILINE)
        count = 0
        first: tuple[int, str] | None = None
        for i, line in enumerate(lines, start=1):
            found = regex.findall(line)
            if found and first is None:
                m = regex.search(line)
                start = max(0, m.start() - 30)
                first = (i, line[start : m.end() + 30].strip())
            count += len(found)
        if count:
            scores[edition] += weight * count
            evidence.append(Evidence(edition, name, count, first[0], first[1]))
    if not any(scores.values()):
        return Detection(None, scores, False, ())
    winner = max(scores, key=lambda e: (scores[e], e))
    if scores[10] == scores[11]:
        winner = None
    return Detection(winner, scores, all(scores.values()), tuple(evidence))
