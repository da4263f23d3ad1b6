"""Names compared as a reader compares them: the one comparison key of a printed name.

Two sources print the same unit, model, weapon or ability in different ways: ``Thunder Hammer``
and ``Thunder hammer``, ``Ancient In Terminator Armour`` and ``Ancient in Terminator Armor``,
``Von Ryan’s Leapers`` and ``Von Ryan's Leaper``. ``name_key`` gives one key for all the ways
of printing a name; code that asks "is this the same name?" compares keys, and keeps the printed
name of the source it takes.

What the key ignores:

- case, accents (``Kâhl`` is ``Kahl``), runs of spaces and the ends; a hyphen is read as a space
  (``Arco-flagellants``);
- apostrophes and quotation marks (’ ' ‘ ` “ ” "): ``Ryan’s`` is ``Ryans``;
- a trailing full stop;
- British and American spelling, kept as data (``spellings.toml`` beside this module, read once,
  through ``pipeline.toml_cache``):
  a word beginning with ``armour`` is read as beginning with ``armor``;
- with ``ignore_plural=True``, the grammatical number of each word (``Boyz``/``Boy``, ``Battle
  Sisters``/``Battle Sister``, ``Sisters Repentia``/``Sister Repentia``, ``Carnifexes``/
  ``Carnifex``). This is for names of things of which a unit has one or many, such as models and
  weapons; it is not for unit names: a source may print two different units whose names differ
  only so (the export's ``Hellflayer`` and ``Hellflayers``).

The plural rule is a spelling rule, not a dictionary: a word of more than three letters loses a
final ``ies`` (for ``y``), ``es`` after x, ch, sh, ss or z, or else a final ``s`` or ``z``
(not after ``ss``, ``us``, ``is``). Irregular plurals (``men``, ``wolves``) are not folded. The
key is only for comparison (``chaos`` becomes ``chao`` on both sides), never stored.
"""

from __future__ import annotations

import os
import re
import unicodedata
from functools import lru_cache
from pathlib import Path

from pipeline.normalise.text import plain_hyphens
from pipeline.toml_cache import read_toml

SPELLINGS_FILE = Path(__file__).resolve().parent / "spellings.toml"

_QUOTES = str.maketrans("", "", "’'‘`“”\"")
_ES_PLURAL = re.compile(r"(?:x|ch|sh|ss|z)es$")
_NOT_PLURAL = re.compile(r"(?:ss|us|is)$")


@lru_cache(maxsize=2)
def british_american(path: Path = SPELLINGS_FILE) -> tuple[tuple[str, str], ...]:
    """The (British, American) word beginnings of the spelling table, longest first.

    Raises ``tomllib.TOMLDecodeError`` or ``KeyError`` for a malformed table (a bug in the
    committed data file, found by the tests).

    >>> ("armour", "armor") in british_american()
    True
    """
    table = read_toml(path)["british_american"]
    return tuple(sorted(table.items(), key=lambda pair: -len(pair[0])))


@lru_cache(maxsize=2)
def _british_beginnings(path: Path = SPELLINGS_FILE) -> tuple[re.Pattern[str], dict[str, str]]:
    """One pattern of the British word beginnings, longest first (the first that matches is the
    one the table's order gives), and the American beginning of each."""
    pairs = british_american(path)
    return re.compile("|".join(re.escape(british) for british, _ in pairs)), dict(pairs)


def _american(word: str) -> str:
    """``word`` with its British beginning read as the American one (one match of a pattern, not
    a test of each beginning: a lookup of every datasheet name keys a few thousand words).

    >>> _american("armoured"), _american("defenceless"), _american("boltgun")
    ('armored', 'defenseless', 'boltgun')
    """
    pattern, american = _british_beginnings()
    found = pattern.match(word)
    return word if found is None else american[found.group()] + word[found.end():]


def _singular(word: str) -> str:
    if len(word) <= 3:
        return word
    if word.endswith("ies"):
        return word[:-3] + "y"
    if _ES_PLURAL.search(word):
        return word[:-2]
    if _NOT_PLURAL.search(word):
        return word
    if word[-1] in "sz":
        return word[:-1]
    return word


def name_key_fingerprint() -> str:
    """What ``name_key`` gives depends on, for keys kept on disk (the attack's replica,
    ``pipeline.replica``): the size and modification time (nanoseconds) of this module, of
    ``pipeline.normalise.text`` (``plain_hyphens``) and of the spelling table, and the Unicode
    version of ``unicodedata``. Keys kept with another fingerprint may be stale. Raises
    ``OSError`` when a file cannot be read."""
    from pipeline.normalise import text

    stats = [os.stat(path) for path in (__file__, text.__file__, SPELLINGS_FILE)]
    return " ".join([*(f"{st.st_size}:{st.st_mtime_ns}" for st in stats), unicodedata.unidata_version])


@lru_cache(maxsize=65536)
def name_key(name: str, *, ignore_plural: bool = False) -> str:
    """The comparison key of a printed name: equal keys are the same name to a reader.

    ``name``: a name as a source prints it. Returns a lower-case string of words separated by
    one space (empty for an empty name). Pure, memoised.

    >>> name_key("Thunder Hammer") == name_key("thunder  hammer")
    True
    >>> name_key("Ancient In Terminator Armour") == name_key("Ancient in Terminator Armor")
    True
    >>> name_key("Tarantula Air Defence Battery") == name_key("Tarantula Air Defense Battery")
    True
    >>> name_key("Von Ryan’s Leapers", ignore_plural=True) == name_key("Von Ryan's Leaper", ignore_plural=True)
    True
    >>> name_key("“Iron Father” Feirros") == name_key('"Iron Father" Feirros.')
    True
    >>> name_key("SISTERS REPENTIA", ignore_plural=True) == name_key("Sister Repentia", ignore_plural=True)
    True
    >>> [name_key(n, ignore_plural=True) for n in ("Boyz", "Carnifexes", "Sentries", "Chaos Lord")]
    ['boy', 'carnifex', 'sentry', 'chao lord']
    >>> name_key("Hellflayers") == name_key("Hellflayer")
    False
    >>> name_key("Arco-flagellants")
    'arco flagellants'
    >>> name_key("Regimental Attachés") == name_key("Regimental Attaches")
    True
    """
    text = plain_hyphens(name).translate(_QUOTES).casefold().replace("-", " ")
    if not text.isascii():
        text = "".join(c for c in unicodedata.normalize("NFKD", text) if not unicodedata.combining(c))
    words = text.strip().removesuffix(".").split()
    words = [_american(w) for w in words]
    if ignore_plural:
        words = [_singular(w) for w in words]
    return " ".join(words)
