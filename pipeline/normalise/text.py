"""Text clean-up shared by every parser: hyphens, spaces, HTML, BattleScribe markup."""

from __future__ import annotations

import gc
import os
import re
import threading
import unicodedata
from functools import lru_cache
from typing import Any, Callable, Iterable, Sequence

from pipeline.errors import InputError

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
_BLOCK_NAMES = frozenset(_BLOCK_TAGS)
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
    import html  # the HTML entities' table: loaded by what parses HTML, not by every reader of names

    if "<" not in fragment and "&lt;" in fragment:
        fragment = html.unescape(fragment)
    if "<" not in fragment:
        return "\n".join(clean_line(x) for x in html.unescape(fragment).split("\n") if x.strip())
    soup = _soup(fragment)
    text = _text_of(soup, fragment)
    _free(soup)
    return text


_THIS_THREAD = threading.local()


#: Tags whose only use to ``_text_of`` is the text inside them: inline formatting, links, images
#: and table cells (none is a line tag, ``br``, a block element, a string container such as
#: ``script``, or a whitespace-keeping ``pre``). Inside a fragment, the tree builder makes no
#: element for them (``_reusing_builder_class``): their strings join the enclosing element.
TEXT_ONLY_TAGS = frozenset({
    "a", "abbr", "b", "bdi", "bdo", "big", "cite", "code", "data", "del", "dfn", "em", "font", "i", "img",
    "ins", "kbd", "ky", "mark", "q", "s", "samp", "small", "span", "strike", "strong", "sub", "sup", "tbody",
    "td", "tfoot", "th", "thead", "time", "tt", "u", "var", "wbr",
})
#: Elements directly under which every tag is made (the wrappers of ``_parse_together`` are read
#: as the body's children).
_DOCUMENT_LEVEL = frozenset({"[document]", "html", "head", "body"})


@lru_cache(maxsize=1)
def _reusing_builder_class() -> type:
    """beautifulsoup4's lxml tree builder, keeping its lxml parser from one document to the next
    and making no element for a ``TEXT_ONLY_TAGS`` tag below the document level.

    Made on first use: the readers of a built database never load bs4.
    """
    from bs4.builder import LXMLTreeBuilder

    class ReusingLXMLTreeBuilder(LXMLTreeBuilder):  # type: ignore[misc]
        """An lxml parser and its target hold each other (a reference cycle that only the cyclic
        collector frees, and the build pauses it); one kept parser per builder makes one such
        cycle per thread instead of one per document. lxml parsers are reusable after ``close``.

        A ``TEXT_ONLY_TAGS`` tag opened inside an element other than the document, ``html``,
        ``head`` or ``body`` gets no ``Tag``: the builder ends the current string where the tag
        starts and where it ends, as beautifulsoup4 does for every tag, so the strings are the
        same objects with the same text (whitespace-only ones folded the same way, comments
        still ``Comment``) in the same order, children of the enclosing element. What
        ``_text_of`` reads (the strings in document order, ``br`` and the block elements) is
        unchanged; a fresh ``BeautifulSoup(fragment, "lxml")`` gives the same texts (tested on
        every fragment of the export and on random fragments)."""

        def parser_for(self, encoding: str | None) -> Any:
            kept = self.__dict__.setdefault("_kept_parsers", {})
            if encoding not in kept:
                kept[encoding] = super().parser_for(encoding)
            return kept[encoding]

        def feed(self, markup: Any) -> None:
            self._skipped: list[bool] = []  # per open tag: made no element
            super().feed(markup)

        def start(self, tag: Any, attrib: Any, nsmap: Any = {}) -> None:  # noqa: B006 (lxml's signature)
            skip = (tag in TEXT_ONLY_TAGS and not nsmap and len(self.nsmaps) == 1
                    and self.soup.currentTag.name not in _DOCUMENT_LEVEL)
            self._skipped.append(skip)
            if skip:
                if self.soup.current_data:  # endData does nothing else
                    self.soup.endData()
            else:
                super().start(tag, attrib, nsmap)

        def end(self, tag: Any) -> None:
            if self._skipped and self._skipped.pop():
                if self.soup.current_data:
                    self.soup.endData()
            else:
                super().end(tag)

    return ReusingLXMLTreeBuilder


def _soup(markup: str) -> Any:
    """The beautifulsoup4 tree of ``markup``, built with lxml by this thread's one tree builder
    (``_reusing_builder_class``); ``_free`` it after use. Attribute values stay as printed (no
    ``class`` split into a list: only the text is read)."""
    from bs4 import BeautifulSoup

    builder = getattr(_THIS_THREAD, "builder", None)
    if builder is None:
        builder = _THIS_THREAD.builder = _reusing_builder_class()(multi_valued_attributes=None)
    return BeautifulSoup(markup, builder=builder)


def _free(soup: Any) -> None:
    """Take a tree apart so that reference counting frees it at once: every element is wiped
    (``decompose`` of each top-level element, then of the soup: the soup's own ``decompose``
    wipes only itself), and the builder lets go of it."""
    builder = soup.builder
    for top in list(soup.contents):
        top.decompose()
    soup.decompose()
    builder.soup = None


def _text_of(node: Any, fragment: str) -> str:
    """The clean text of a parsed ``fragment`` (its tree ``node``): with line structure, one line
    per ``<br>`` and block element.

    One walk over the tree, reading it without changing it: the text is that of ``get_text()``
    (the strings of the node's ``interesting_string_types``: no comments) after each ``<br>``
    below the node was replaced by a line break and a line break put before and after each
    block element below it, as when the fragment has line tags (``_LINE_TAGS``)."""
    from bs4.element import NavigableString

    types = node.interesting_string_types or node.MAIN_CONTENT_STRING_TYPES
    lines = _LINE_TAGS.search(fragment) is not None
    parts: list[str] = []
    stack = [iter(node.contents)]
    closing: list[bool] = [False]  # per open element: a line break after its last child
    while stack:
        child = next(stack[-1], None)
        if child is None:
            stack.pop()
            if closing.pop():
                parts.append("\n")
        elif isinstance(child, NavigableString):
            if type(child) in types:
                parts.append(child)
        elif lines and child.name == "br":
            parts.append("\n")  # the <br> and whatever lxml put inside it
        else:
            block = lines and child.name in _BLOCK_NAMES
            if block:
                parts.append("\n")
            stack.append(iter(child.contents))
            closing.append(block)
    cleaned = (clean_line(line) for line in "".join(parts).split("\n"))
    return "\n".join(line for line in cleaned if line)


def html_to_texts(fragments: Sequence[str]) -> list[str]:
    """``html_to_text`` of each fragment, the fragments that need a parse tree parsed together.

    Each such fragment is wrapped in a ``<div>`` marked with its index and the whole batch is
    parsed once with beautifulsoup4 and lxml (one tree instead of one per fragment: the
    per-parse set-up is most of the cost of a short fragment). A batch whose marked ``<div>``s
    do not come back as the body's children in order (a fragment whose stray ``</div>`` or
    unbalanced tags leak out of its wrapper) is cleaned one fragment at a time, so every text is
    the one ``html_to_text`` gives.

    >>> html_to_texts(["Line one<br/>Line two", "plain &amp; simple", "<b>A</b> x.<li>B</li>"])
    ['Line one\\nLine two', 'plain & simple', 'A x.\\nB']
    >>> html_to_texts(["<b>ok</b>", "broken</div><p>out"]) == [html_to_text("<b>ok</b>"), html_to_text("broken</div><p>out")]
    True
    """
    import html

    out: list[str | None] = [None] * len(fragments)
    parsed: list[tuple[int, str]] = []
    for i, fragment in enumerate(fragments):
        if "<" not in fragment and "&lt;" in fragment:
            fragment = html.unescape(fragment)
        if "<" not in fragment:
            out[i] = html_to_text(fragment)
        else:
            parsed.append((i, fragment))
    if parsed:
        texts = _parse_together([f for _, f in parsed])
        for (i, _), text in zip(parsed, texts):
            out[i] = text
    return out  # type: ignore[return-value]


def free_parse_trees() -> int:
    """Free the parse trees made since the last call; returns the objects freed.

    For trees not built by ``_soup`` and taken apart by ``_free`` (the saved pages' parser): a
    beautifulsoup4 tree keeps reference cycles even after the soup's ``decompose()`` (its
    elements, lxml's parser with its target's bound methods), which only the cyclic collector
    frees, and the build pauses it (``pipeline.build``). A young-generation collection visits
    only what was made since the previous one, so calling this after each batch of parses frees
    their trees at the cost of visiting each new object once. The export's HTML clean-up needs
    no collection: ``_free`` leaves no cycle.
    """
    return gc.collect(0)


_MARK = "data-wh40k-fragment"


def _parse_together(fragments: list[str]) -> list[str]:
    if len(fragments) == 1 or any(_MARK in f for f in fragments):
        return [html_to_text(f) for f in fragments]
    soup = _soup("".join(f'<div {_MARK}="{i}">{f}</div>' for i, f in enumerate(fragments)))
    body = soup.body
    wrappers = [] if body is None else [c for c in body.children if getattr(c, "name", None) is not None]
    if len(wrappers) != len(fragments) or any(
            w.name != "div" or w.get(_MARK) != str(i) for i, w in enumerate(wrappers)) or any(
            getattr(c, "name", None) is None and str(c).strip() for c in (body.children if body else ())):
        _free(soup)
        half = len(fragments) // 2  # a fragment leaks out of its wrapper: find it by halves
        return _parse_together(fragments[:half]) + _parse_together(fragments[half:])
    texts = [_text_of(wrapper, fragment) for fragment, wrapper in zip(fragments, wrappers)]
    _free(soup)
    return texts


_BS_KEYWORD = re.compile(r"\*\*\^\^(.+?)\^\^\*\*|\^\^\*\*(.+?)\*\*\^\^|\^\^(.+?)\^\^")


def strip_battlescribe_markup(text: str) -> str:
    """Turn ``^^Keyword^^`` (also ``^^**KW**^^`` and ``**^^KW^^**``) into the plain keyword.

    >>> strip_battlescribe_markup("an ^^Adepta Sororitas^^ unit, **^^VEHICLE^^**, ^^**FLY**^^")
    'an Adepta Sororitas unit, VEHICLE, FLY'
    """
    return _BS_KEYWORD.sub(lambda m: next(g for g in m.groups() if g is not None), text)


def background_jobs() -> int:
    """Processes the HTML clean-up may use: ``WH40K_JOBS`` if set, else the CPU count (at most 2).

    ``WH40K_JOBS=1`` keeps all the work in the calling process.

    Raises ``InputError`` when ``WH40K_JOBS`` is not a whole number of at least 1.
    """
    setting = os.environ.get("WH40K_JOBS", "").strip()
    if not setting:
        return min(2, os.cpu_count() or 1)
    if not setting.isdigit() or int(setting) < 1:
        raise InputError(f"WH40K_JOBS={setting!r}: expected a whole number of processes, 1 or more "
                         "(1 keeps the build in one process); unset it for the default")
    return int(setting)


_FREE, _CALLER, _WORKER = 0, 1, 2


def _chunks_of(fragments: list[str], size: int) -> list[list[str]]:
    return [fragments[i : i + size] for i in range(0, len(fragments), size)]


#: The worker claims no chunk before the caller's current one plus this: where the caller has
#: caught up with it, the caller cleans the next chunk while the worker cleans the one after.
_AHEAD_OF_CALLER = 2


def _clean_ahead(
    list_fragments: Callable[[], Iterable[str]], chunk_size: int, claims: Any, caller_at: Any, results: Any,
    caller: int,
) -> None:
    """Worker: list the fragments as far as the next chunk to clean (``list_fragments`` may give
    them one at a time: the first chunks are cleaned while the rest wait to be listed), claim
    the chunks not yet claimed, first to last, and send ``(fragments, texts)`` for each; then
    send ``None``. It claims no chunk before the caller's current one (``caller_at``) plus
    ``_AHEAD_OF_CALLER``: a caller that has caught up with it cleans the chunks in between
    itself instead of waiting for each of the worker's in turn. Ctrl-C is the caller's to
    handle: the worker ignores it. A worker whose caller (process id ``caller``, taken before
    the fork: a caller killed before the worker runs is gone too) is gone (killed with SIGKILL)
    stops at the next chunk and exits without waiting for its results to be read."""
    import signal

    from pipeline.forked import end_with_caller

    signal.signal(signal.SIGINT, signal.SIG_IGN)
    end_with_caller(caller)  # even while it waits for the claims' lock that a killed caller held
    try:
        # beautifulsoup4 and lxml (some 0.1 s) imported here, after the fork, not by the caller
        # before it: the caller goes on meanwhile, and by the time it needs its first texts the
        # worker has claimed those chunks, so a build whose worker cleans every chunk never
        # imports them in the calling process (a chunk the caller cleans itself imports them).
        _reusing_builder_class()
        fragments, listed = iter(list_fragments()), []

        def chunk(k: int) -> list[str]:  # chunk k of the list, listed as far as needed
            while len(listed) < (k + 1) * chunk_size and (fragment := next(fragments, None)) is not None:
                listed.append(fragment)
            return listed[k * chunk_size : (k + 1) * chunk_size]

        k = 0
        while os.getppid() == caller:
            with claims.get_lock():
                k = max(k, caller_at.value + _AHEAD_OF_CALLER)
                while k < len(claims) and claims[k] != _FREE:
                    k += 1
            if k >= len(claims) or not (part := chunk(k)):
                break
            with claims.get_lock():
                if claims[k] != _FREE:  # the caller took it while it was listed
                    continue
                claims[k] = _WORKER
            results.put((k, part, html_to_texts(part)))
            k += 1
    finally:
        if os.getppid() != caller:
            results.cancel_join_thread()  # nobody reads them: do not wait to flush them at exit
        else:
            results.put(None)


class BatchedHtmlCleaning:
    """``html_to_text`` over a list of fragments known in advance, in the calling process: the
    fragments are cut into chunks of ``chunk_size`` (``expect``), and ``get(fragment)`` cleans
    the fragment's whole chunk at once (``html_to_texts``: one parse tree per chunk).

    >>> cleaning = BatchedHtmlCleaning()
    >>> cleaning.expect(["<b>A</b>", "B<br>C", "plain"])
    >>> cleaning.get("B<br>C"), cleaning.get("not expected <i>x</i>")
    ('B\\nC', 'not expected x')
    """

    def __init__(self, chunk_size: int = 32) -> None:
        self._chunk_size = chunk_size
        self._chunks: list[list[str]] = []
        self._chunk_of: dict[str, int] = {}
        self._done: dict[str, str] = {}

    def expect(self, fragments: list[str]) -> None:
        """The fragments, in the order the caller will need them."""
        self._chunks = _chunks_of(fragments, self._chunk_size)
        self._chunk_of = {f: k for k, chunk in enumerate(self._chunks) for f in chunk}

    def get(self, fragment: str) -> str:
        """The clean text of ``fragment`` (``html_to_text``)."""
        text = self._done.get(fragment)
        if text is not None:
            return text
        k = self._chunk_of.get(fragment)
        if k is not None:
            self._resolve(k)
            text = self._done.get(fragment)
        return text if text is not None else html_to_text(fragment)

    def _resolve(self, k: int) -> None:
        self._clean_here(k)

    def _clean_here(self, k: int) -> None:
        todo = [f for f in self._chunks[k] if f not in self._done]
        self._done.update(zip(todo, html_to_texts(todo)))

    def abort(self) -> None:
        """Nothing runs in the background."""

    def close(self) -> None:
        """Nothing runs in the background."""


class SharedHtmlCleaning(BatchedHtmlCleaning):
    """``html_to_text`` over a list of fragments known in advance, shared with a worker process.

    The fragments come in the order the caller will need them and are cut into chunks of
    ``chunk_size``. A forked worker lists them itself (``list_fragments``, run in the worker, so
    that the caller can go on meanwhile) and cleans the chunks in that order, ahead of the
    caller, which has its other work to do between two fragments. The caller gives its own copy
    of the list (``expect``); its ``get(fragment)`` waits for the worker's texts of a chunk the
    worker has claimed (one it is cleaning, or has), and cleans in the calling process a chunk
    no one has claimed yet (the worker skips it then). So the caller cleans only where it has
    caught up with the worker; there the worker keeps a chunk ahead of it (``_clean_ahead``),
    so that both clean, the caller waiting at most for one chunk at a time.

    Every text is the one ``html_to_text`` gives: the worker sends each chunk's fragments with
    their texts, so a fragment it did not send, or any fragment once the worker has died, is
    cleaned in the calling process. ``capacity`` bounds the number of chunks (extra ones are
    the caller's).

    ``start`` returns None (clean everything in the calling process) where fork is not
    available or ``background_jobs()`` is 1. Call ``close`` when done (or use ``with``).
    """

    def __init__(
        self, list_fragments: Callable[[], Iterable[str]], capacity: int, chunk_size: int = 32
    ) -> None:
        super().__init__(chunk_size)
        self._arrived: dict[int, tuple[list[str], list[str]]] = {}
        import multiprocessing  # the build's alone: readers of the database never load it

        context = multiprocessing.get_context("fork")
        self._claims = context.Array("b", max(capacity, 1))
        self._caller_at = context.RawValue("i", -_AHEAD_OF_CALLER)  # the chunk the caller needs now
        self._results = context.Queue()
        self._worker_finished = False
        self._worker = context.Process(
            target=_clean_ahead,
            args=(list_fragments, chunk_size, self._claims, self._caller_at, self._results, os.getpid()),
            daemon=True,
        )
        self._worker.start()
        #: Chunks whose texts came from the worker (for tests and measurements).
        self.chunks_by_worker = 0

    @classmethod
    def start(
        cls, list_fragments: Callable[[], Iterable[str]], capacity: int, chunk_size: int = 32
    ) -> SharedHtmlCleaning | None:
        from pipeline.forked import can_fork  # (pipeline.forked imports this module)

        if not can_fork():  # WH40K_JOBS=1, no fork, or not a safe one (the frameworks of macOS)
            return None
        try:
            return cls(list_fragments, capacity, chunk_size)
        except OSError:
            return None

    def expect(self, fragments: list[str]) -> None:
        """The caller's list of the fragments: the same list, in the same order, as the worker's."""
        super().expect(fragments)

    def _resolve(self, k: int) -> None:
        owner = _CALLER
        self._caller_at.value = k
        if k < len(self._claims):
            with self._claims.get_lock():
                owner = self._claims[k]
                if owner == _FREE:
                    self._claims[k] = owner = _CALLER
        if owner == _WORKER:
            sent = self._wait_for(k)
            if sent is not None:
                self._done.update(zip(*sent))
                self.chunks_by_worker += 1
        self._clean_here(k)

    def _wait_for(self, k: int) -> tuple[list[str], list[str]] | None:
        """The worker's chunk ``k``; None when the worker ended without sending it."""
        import queue

        while k not in self._arrived and not self._worker_finished:
            try:
                message = self._results.get(timeout=1.0)
            except queue.Empty:
                if not self._worker.is_alive():
                    self._worker_finished = True
                continue
            if message is None:
                self._worker_finished = True
            else:
                self._arrived[message[0]] = (message[1], message[2])
        return self._arrived.pop(k, None)

    def abort(self) -> None:
        """Stop the worker at once (after an error or Ctrl-C): nothing more is read from it."""
        self._worker_finished = True
        if self._worker.is_alive():
            self._worker.kill()
        self._worker.join(timeout=5)
        self._results.cancel_join_thread()
        self._results.close()

    def close(self) -> None:
        """Stop the worker (every chunk left is claimed: it cleans no more) and wait for it."""
        with self._claims.get_lock():
            for k in range(len(self._claims)):
                if self._claims[k] == _FREE:
                    self._claims[k] = _CALLER
        while not self._worker_finished:
            self._wait_for(-1)
        self._worker.join(timeout=5)
        if self._worker.is_alive():
            self._worker.kill()
        self._results.close()

    def __enter__(self) -> SharedHtmlCleaning:
        return self

    def __exit__(self, *_exc: object) -> None:
        self.close()
