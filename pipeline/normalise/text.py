"""Text clean-up shared by every parser: hyphens, spaces, HTML, BattleScribe markup."""

from __future__ import annotations

import html
import re
import unicodedata
from functools import lru_cache

from bs4 import BeautifulSoup

#: Characters read as a plain hyphen-minus in names and values.
_HYPHENS = {
    "\u2010": "-",  # hyphen
    "\u2011": "-",  # non-breaking hyphen
    "\u2012": "-",  # figure dash
    "\u2212": "-",  # minus sign
}
_HYPHEN_TABLE = str.maketrans(_HYPHENS)
_SPACES = re.compile(r"[ \t\u00a0\u2002\u2003\u2009]+")


def plain_hyphens(text: str) -> str:
    """Replace non-breaking hyphens and minus signs by ``-`` (en dashes are kept).

    >>> plain_hyphens("Arco\u2011flagellants")
    'Arco-flagellants'
    """
    if text.isascii():  # every character replaced is outside ASCII
        return text
    return text.translate(_HYPHEN_TABLE)


def clean_line(text: str) -> str:
    """Plain hyphens, folded spaces (incl. no-break spaces), stripped ends.

    >>> clean_line("  Battle\u2011shock\u00a0 test ")
    'Battle-shock test'
    >>> clean_line(" Battle-shock  test\t")
    'Battle-shock test'
    """
    if text.isascii() and "  " not in text and "\t" not in text:
        return text.strip()  # the common case: no hyphen to replace, no run of spaces to fold
    return _SPACES.sub(" ", plain_hyphens(text)).strip()


def slug(text: str) -> str:
    """A stable lower-case key: ``"A Martyr’s Death"`` -> ``a-martyrs-death``.

    >>> slug("A Martyr’s Death")
    'a-martyrs-death'
    >>> slug("T'au Empire") == slug("T’au Empire")
    True
    """
    text = unicodedata.normalize("NFKD", plain_hyphens(text)).encode("ascii", "ignore").decode()
    text = re.sub(r"['’`]", "", text.lower())
    return re.sub(r"[^a-z0-9]+", "-", text).strip("-")


_BLOCK_TAGS = ("p", "div", "li", "tr", "ul", "ol", "table", "h1", "h2", "h3", "h4")
#: A fragment with one of these tags has line structure; without one it is a single run of text.
_LINE_TAGS = re.compile(r"<\s*(?:br|p|div|li|tr|ul|ol|table|h[1-4])\b", re.IGNORECASE)


@lru_cache(maxsize=65536)
def html_to_text(fragment: str) -> str:
    """Clean text from an HTML fragment: one line per ``<li>``, ``<br>`` or block element.

    Entities are decoded exactly once (a fragment whose tags were escaped, ``&lt;b&gt;``, is
    unescaped first, then parsed with beautifulsoup4 and lxml). Inline tags (``<b>``, ``<span>``,
    ``<a>``) keep their text; comments are not text. Pure, so memoised: exports repeat the same
    fragments many times.

    >>> html_to_text("Line one<br/>Line two")
    'Line one\\nLine two'
    >>> html_to_text("&lt;ul&gt;&lt;li&gt;&lt;b&gt;A&lt;/b&gt; x.&lt;/li&gt;&lt;li&gt;B&lt;/li&gt;&lt;/ul&gt;")
    'A x.\\nB'
    >>> html_to_text('<span class="kwb">EPIC</span> <span class="kwb">HERO</span><!-- note -->')
    'EPIC HERO'
    """
    if "<" not in fragment and "&lt;" in fragment:
        fragment = html.unescape(fragment)
    if "<" not in fragment:
        return "\n".join(clean_line(x) for x in html.unescape(fragment).split("\n") if x.strip())
    soup = BeautifulSoup(fragment, "lxml")
    if _LINE_TAGS.search(fragment):
        for br in soup.find_all("br"):
            br.replace_with("\n")
        for tag in soup.find_all(_BLOCK_TAGS):
            tag.insert_before("\n")
            tag.insert_after("\n")
    text = soup.get_text()
    soup.decompose()  # a parse tree is cyclic: free it now, not at the next collection
    lines = (clean_line(line) for line in text.split("\n"))
    return "\n".join(line for line in lines if line)


_BS_KEYWORD = re.compile(r"\*\*\^\^(.+?)\^\^\*\*|\^\^\*\*(.+?)\*\*\^\^|\^\^(.+?)\^\^")


def strip_battlescribe_markup(text: str) -> str:
    """Turn ``^^Keyword^^`` (also ``^^**KW**^^`` and ``**^^KW^^**``) into the plain keyword.

    >>> strip_battlescribe_markup("an ^^Adepta Sororitas^^ unit, **^^VEHICLE^^**, ^^**FLY**^^")
    'an Adepta Sororitas unit, VEHICLE, FLY'
    """
    return _BS_KEYWORD.sub(lambda m: next(g for g in m.groups() if g is not None), text)
