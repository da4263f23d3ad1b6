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
