"""Batched HTML clean-up (issue 14, item 5): one parse tree per chunk of fragments gives the texts
``html_to_text`` gives one fragment at a time, and the parse trees are freed as they are used."""

from __future__ import annotations

import gc
from pathlib import Path

import pytest
from hypothesis import given, settings, strategies as st

from pipeline.normalise.text import BatchedHtmlCleaning, html_to_text, html_to_texts
from tests.conftest import CORPUS

EXPORT = CORPUS / "wahapedia-10e"

_PIECES = st.sampled_from([
    "<b>", "</b>", "<p>", "</p>", "<div>", "</div>", "<ul><li>", "</li>", "<br>", "<br/>", "&amp;", "&lt;b&gt;",
    '<span class="kwb">', "</span>", "<!-- c -->", "<table><tr><td>", "</td></tr></table>", "</ul>", " ",
    "Lethal Hits", "\n", "3+", "<a href='#x'>", "</a>", "<li>", "&nbsp;", "’",
])


@settings(max_examples=150, derandomize=True, deadline=None)
@given(st.lists(st.lists(_PIECES, min_size=1, max_size=12).map("".join), min_size=1, max_size=40))
def test_a_batch_gives_the_texts_of_one_fragment_at_a_time(fragments):
    # stray closing tags and unbalanced ones included: a batch that leaks is split by halves
    assert html_to_texts(fragments) == [html_to_text.__wrapped__(f) for f in fragments]


@pytest.mark.skipif(not EXPORT.exists(), reason="the shared corpus is not beside the checkout")
def test_the_real_export_fragments_give_the_same_texts_batched():
    from pipeline.extractors.wahapedia_csv import _fragments_of_files

    files = {p.stem: p.read_text(encoding="utf-8-sig") for p in EXPORT.glob("*.csv")}
    fragments = list(dict.fromkeys(_fragments_of_files(files)))[::7]  # every seventh: ~1,000
    assert len(fragments) > 900
    batched = []
    for i in range(0, len(fragments), 32):
        batched += html_to_texts(fragments[i:i + 32])
    assert batched == [html_to_text.__wrapped__(f) for f in fragments]


def test_parse_trees_are_freed_as_they_are_used():
    """With the cyclic collector paused (as the build pauses it), cleaning leaves no object in a
    reference cycle: every tree is freed after its chunk."""
    cleaning = BatchedHtmlCleaning(chunk_size=16)
    fragments = [f"<p>Rule {i}</p><ul><li><b>{i}</b></li></ul>" for i in range(200)]
    cleaning.expect(fragments)
    gc.collect()
    gc.disable()
    try:
        texts = [cleaning.get(f) for f in fragments]
        left = gc.collect()
    finally:
        gc.enable()
    assert texts[3] == "Rule 3\n3"
    assert left == 0


def test_parse_trees_of_the_fragments_are_not_freed_without_it():
    """The measurement above can fail: one tree left alone keeps its cycles."""
    from bs4 import BeautifulSoup

    gc.collect()
    gc.disable()
    try:
        soup = BeautifulSoup("<p>x</p>", "lxml")
        soup.decompose()
        del soup
        left = gc.collect()
    finally:
        gc.enable()
    assert left > 10


@pytest.mark.skipif(not EXPORT.exists(), reason="the shared corpus is not beside the checkout")
def test_the_kept_tree_builder_reads_as_a_fresh_beautifulsoup_lxml_tree():
    """One lxml tree builder and parser kept per thread (and class values not split) give the
    texts of a new ``BeautifulSoup(fragment, "lxml")`` for each fragment."""
    from bs4 import BeautifulSoup

    from pipeline.extractors.wahapedia_csv import _fragments_of_files
    from pipeline.normalise.text import _text_of

    files = {p.stem: p.read_text(encoding="utf-8-sig") for p in EXPORT.glob("*.csv")}
    fragments = list(dict.fromkeys(_fragments_of_files(files)))[3::7]
    fresh = []
    for fragment in fragments:
        soup = BeautifulSoup(fragment, "lxml")
        fresh.append(_text_of(soup, fragment))
        soup.decompose()
    assert [html_to_text.__wrapped__(f) for f in fragments] == fresh


def _text_by_tree_edits(node, fragment: str) -> str:
    """The reading ``_text_of`` replaced: each ``<br>`` replaced by a line break and line
    breaks inserted around block elements in the tree, then ``get_text()``."""
    from pipeline.normalise.text import _BLOCK_TAGS, _LINE_TAGS, clean_line

    if _LINE_TAGS.search(fragment):
        for br in node.find_all("br"):
            br.replace_with("\n")
        for tag in node.find_all(_BLOCK_TAGS):
            tag.insert_before("\n")
            tag.insert_after("\n")
    lines = (clean_line(line) for line in node.get_text().split("\n"))
    return "\n".join(line for line in lines if line)


_EDGE_FRAGMENTS = [
    "<p>a<br>b</p><!-- c --><div>d<li>e</li></div>", "x<script>y</script><style>z</style>",
    "<template><p>t</p></template>u", "<br><br>", "<div>" + "<b>" * 3000 + "deep" + "</b>" * 3000,
    "<table><tr><td>1</td><td>2</td></tr></table>", "a<![CDATA[b]]>c", "<ruby>x<rt>y</rt></ruby>",
    "<ul><li><b>A</b> x.</li><li>B<br/>C</li></ul>", "plain <i>inline</i> text",
]


def _check_one_walk_reads_as_tree_edits(fragments: list[str]) -> None:
    from bs4 import BeautifulSoup

    from pipeline.normalise.text import _text_of

    for fragment in fragments:
        for markup in (fragment, f'<div data-x="0">{fragment}</div>'):  # alone, and as _parse_together wraps it
            edited, walked = BeautifulSoup(markup, "lxml"), BeautifulSoup(markup, "lxml")
            if markup is not fragment:
                edited, walked = edited.body.div, walked.body.div
            assert _text_of(walked, fragment) == _text_by_tree_edits(edited, fragment), fragment[:200]


def test_one_walk_reads_as_the_tree_edits_on_edge_cases():
    """``_text_of`` walks the tree once without changing it; its text is the one the tree edits
    gave (comments, scripts and styles left out, deep nesting, tables, CDATA)."""
    _check_one_walk_reads_as_tree_edits(_EDGE_FRAGMENTS)


@settings(max_examples=150, derandomize=True, deadline=None)
@given(st.lists(_PIECES, min_size=1, max_size=16).map("".join))
def test_one_walk_reads_as_the_tree_edits(fragment):
    _check_one_walk_reads_as_tree_edits([fragment])


@pytest.mark.skipif(not EXPORT.exists(), reason="the shared corpus is not beside the checkout")
def test_one_walk_reads_as_the_tree_edits_on_the_export():
    from pipeline.extractors.wahapedia_csv import _fragments_of_files

    files = {p.stem: p.read_text(encoding="utf-8-sig") for p in EXPORT.glob("*.csv")}
    _check_one_walk_reads_as_tree_edits(list(dict.fromkeys(_fragments_of_files(files)))[::3])


@pytest.mark.skipif(not EXPORT.exists(), reason="the shared corpus is not beside the checkout")
def test_every_fragment_the_export_parser_cleans_is_listed_ahead(monkeypatch):
    """The fragments with markup that the parser of the export cleans are all in the list the
    worker cleans ahead (``html_fragments``): none is left for the parser to clean on its own."""
    from pipeline.extractors.wahapedia_csv import parse_export
    from schemas.records import Source

    missed: list[str] = []
    get = BatchedHtmlCleaning.get

    def listed_get(self, fragment):
        if ("<" in fragment or "&lt;" in fragment) and fragment not in self._chunk_of:
            missed.append(fragment)
        return get(self, fragment)

    monkeypatch.setattr(BatchedHtmlCleaning, "get", listed_get)
    monkeypatch.setenv("WH40K_JOBS", "1")
    files = {p.stem: p.read_text(encoding="utf-8-sig") for p in EXPORT.glob("*.csv")}
    source = Source(source_id="t", format="wahapedia-csv", title="t", publisher="p", edition=10, kind="export",
                    game_mode=None, version=None, origin="o", file="f", version_date=None)
    assert len(parse_export(files, source).records) > 100_000
    assert missed == []


def test_the_tree_builder_makes_no_element_for_inline_tags_inside_a_fragment():
    """Inside an element, ``<b>``, ``<i>``, ``<span>`` get no ``Tag`` and their strings stay
    separate strings (whitespace-only ones folded as beautifulsoup4 folds them); at the body
    level, and for ``br`` and block elements, the elements are made."""
    from bs4 import Tag

    from benchmarks.check_html_builder import reader_view
    from pipeline.normalise.text import _free, _soup

    soup = _soup('<span class="kwb">TOP</span><div><b>A</b> \n <i>x<br>y</i><p>z</p></div>')
    body = soup.body
    assert [c.name for c in body.children] == ["span", "div"]
    div = body.div
    assert [c.name if isinstance(c, Tag) else str(c) for c in div.children] == ["A", "\n", "x", "br", "y", "p"]
    assert reader_view(div) == [
        ("text", "NavigableString", "A"), ("text", "NavigableString", "\n"), ("text", "NavigableString", "x"),
        ("open", "br", []), ("close", "br"), ("text", "NavigableString", "y"), ("open", "p", []),
        ("text", "NavigableString", "z"), ("close", "p"),
    ]
    _free(soup)


@pytest.mark.skipif(not EXPORT.exists(), reason="the shared corpus is not beside the checkout")
def test_the_tree_builder_reads_as_a_fresh_tree_on_the_export_fragments():
    """A quarter of the export's HTML fragments alone, another quarter batched as
    ``html_to_texts`` batches them: the strings, the elements the reader looks at and the text
    are those of a fresh ``BeautifulSoup(markup, "lxml")`` (``benchmarks/check_html_builder.py``
    checks every fragment, alone and batched, and 30,000 random ones)."""
    from benchmarks.check_html_builder import compare
    from pipeline.extractors.wahapedia_csv import _fragments_of_files

    files = {p.stem: p.read_text(encoding="utf-8-sig") for p in EXPORT.glob("*.csv")}
    fragments = list(dict.fromkeys(_fragments_of_files(files)))
    assert len(fragments) > 7000
    assert [f for f in fragments[::4] if compare(f, f)] == []
    batches = ["".join(f'<div data-wh40k-fragment="{k}">{f}</div>' for k, f in enumerate(fragments[i:i + 32]))
               for i in range(32, len(fragments), 128)]
    assert [i for i, markup in enumerate(batches) if compare(markup, "<br>")] == []


def test_the_tree_builder_reads_as_a_fresh_tree_on_random_fragments():
    """Seeded random fragments (unbalanced tags, comments, scripts, ``pre``, every ASCII space),
    alone and in a marked ``<div>``: read as a fresh ``BeautifulSoup(markup, "lxml")``."""
    import random

    from benchmarks.check_html_builder import compare, random_fragment

    rng = random.Random(40)
    fragments = [random_fragment(rng) for _ in range(1500)]
    assert [f for f in fragments if compare(f, f) or compare(f'<div data-wh40k-fragment="0">{f}</div>', f)] == []
