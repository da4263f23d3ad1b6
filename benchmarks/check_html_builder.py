"""Check that the export's HTML tree builder reads as a fresh beautifulsoup4 lxml tree.

Run with ``python benchmarks/check_html_builder.py [EXPORT_DIR] [N]`` (default: the corpus beside
the checkout, ``../shared/corpus/wahapedia-10e``, and N = 30,000). Prints what it compared and
exits with status 1 on the first difference, naming the markup.

Compared: what the export's reader takes from a tree (``reader_view``: the strings in document
order with their type, and the elements other than ``TEXT_ONLY_TAGS``, opened and closed) and
its text (``_text_of``), between the project's tree builder (``pipeline.normalise.text._soup``:
no element for the text-only tags inside a fragment) and a fresh ``BeautifulSoup(markup, "lxml")``:

- every HTML fragment of the export, alone, then as ``html_to_texts`` batches them (chunks of 32,
  each fragment in a marked ``<div>``);
- N random fragments from a seeded generator (tags nested and unbalanced, stray end tags,
  comments, scripts, ``pre``, tables, entities, every kind of ASCII space), alone and in a
  marked ``<div>``.
"""

from __future__ import annotations

import random
import sys
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from pipeline.normalise.text import TEXT_ONLY_TAGS, _free, _soup, _text_of  # noqa: E402

_MARK = "data-wh40k-fragment"


def reader_view(node: Any) -> list[tuple]:
    """The strings below ``node`` in document order as ``("text", type name, text)`` and its
    elements other than the text-only tags as ``("open", name, attributes)`` / ``("close", name)``
    (``class`` as its words: the project's builder does not split it into a list)."""
    from bs4.element import NavigableString

    out: list[tuple] = []

    def walk(tag: Any) -> None:
        for child in tag.contents:
            if isinstance(child, NavigableString):
                out.append(("text", type(child).__name__, str(child)))
            else:
                kept = child.name not in TEXT_ONLY_TAGS or child.parent.name in ("[document]", "html", "head", "body")
                if kept:
                    out.append(("open", child.name, sorted(
                        (k, " ".join(v) if isinstance(v, list) else " ".join(v.split()) if k == "class" else v)
                        for k, v in child.attrs.items())))
                walk(child)
                if kept:
                    out.append(("close", child.name))

    walk(node)
    return out


def compare(markup: str, fragment: str) -> str | None:
    """None when both trees of ``markup`` read the same, else what differs."""
    from bs4 import BeautifulSoup

    fresh = BeautifulSoup(markup, "lxml")
    ours = _soup(markup)
    try:
        if reader_view(fresh) != reader_view(ours):
            return "reader view"
        if _text_of(fresh, fragment) != _text_of(ours, fragment):
            return "text"
        return None
    finally:
        _free(ours)
        fresh.decompose()


_TAGS = ["b", "i", "span", "a", "s", "ky", "img", "td", "th", "tbody", "em", "strong", "sup", "font", "u",
         "p", "div", "li", "ul", "ol", "tr", "table", "h1", "h3", "br", "pre", "textarea", "script", "style",
         "template", "rt", "ruby", "html", "body", "head", "title", "code"]
_WORDS = ["Lethal Hits", "3+", "x", "’", "&amp;", "&lt;b&gt;", "&nbsp;", "<!-- c -->", "<![CDATA[d]]>", "&#160;",
          " ", "  ", "\n", "\t", "\r", "\r\n", "\x0c", " \n ", "\u00a0", "\u2011", "", "<?pi x?>", "<!DOCTYPE html>"]


def random_fragment(rng: random.Random) -> str:
    """A random piece of HTML: open, close and void tags (with and without attributes), words,
    entities and whitespace, unbalanced on purpose."""
    parts = []
    for _ in range(rng.randint(1, 24)):
        r = rng.random()
        tag = rng.choice(_TAGS)
        if r < 0.3:
            attrs = rng.choice(["", ' class="kwb"', " href='#x'", f' {_MARK}="1"', " style='a'"])
            parts.append(f"<{tag}{attrs}>")
        elif r < 0.5:
            parts.append(f"</{tag}>")
        elif r < 0.55:
            parts.append(f"<{tag}/>")
        else:
            parts.append(rng.choice(_WORDS))
    return "".join(parts)


def main() -> int:
    export = Path(sys.argv[1]) if len(sys.argv) > 1 else ROOT.parent / "shared" / "corpus" / "wahapedia-10e"
    n = int(sys.argv[2]) if len(sys.argv) > 2 else 30_000
    checked = 0
    if export.exists():
        from pipeline.extractors.wahapedia_csv import _fragments_of_files

        files = {p.stem: p.read_text(encoding="utf-8-sig") for p in export.glob("*.csv")}
        fragments = list(dict.fromkeys(_fragments_of_files(files)))
        for fragment in fragments:
            why = compare(fragment, fragment)
            if why:
                print(f"differs ({why}) on the export fragment {fragment[:300]!r}")
                return 1
        for i in range(0, len(fragments), 32):
            chunk = fragments[i:i + 32]
            markup = "".join(f'<div {_MARK}="{k}">{f}</div>' for k, f in enumerate(chunk))
            why = compare(markup, "<br>")  # as lines: the reader view covers the rest
            if why:
                print(f"differs ({why}) on the batch of export fragments {i}-{i + len(chunk) - 1}")
                return 1
        print(f"export: {len(fragments)} fragments alone and in {(len(fragments) + 31) // 32} batches: identical")
        checked += len(fragments)
    rng = random.Random(14)
    for k in range(n):
        fragment = random_fragment(rng)
        for markup in (fragment, f'<div {_MARK}="0">{fragment}</div>'):
            why = compare(markup, fragment)
            if why:
                print(f"differs ({why}) on random fragment {k}: {markup!r}")
                return 1
    print(f"random: {n} fragments (seed 14), alone and wrapped: identical")
    return 0


if __name__ == "__main__":
    sys.exit(main())
