"""BM25 search over the catalog, as the original's pyserini/Lucene index ranks it (ENVS-NEXT §1.2).

`lucene` (default): BM25 with Anserini's parameters k1 = 0.9, b = 0.4, computed the way Lucene 8 does: idf =
ln(1 + (N - df + 0.5) / (df + 0.5)), a document's length stored in one byte (`SmallFloat.intToByte4`, so lengths
past 40 are rounded down to `LENGTH_TABLE`), the average length exact, float32 arithmetic, a repeated query term
weighted by its count (Anserini's bag-of-words query), ties by catalog order (Lucene's doc id order). Pure numpy,
built in memory in about a second per 10k products.
`bm25s`: bm25s with the same k1/b and idf (no length quantisation), a cross-check.
`tantivy`: a fast on-disk index; tantivy's BM25 is fixed at k1 = 1.2, b = 0.75, so it ranks like Lucene's library
defaults, not like the original; kept for the 100k benchmark.

All engines see the same documents (WebShop's `contents` recipe, `Product.contents`) through one analyzer that
follows Lucene's English analyzer: standard-tokenizer words (numbers keep their decimal point), possessive 's
dropped, lower case, Lucene's 33 English stop words removed, Porter stemming (`porter.py`). Results are at most
`SEARCH_RETURN_N` ASINs.
"""

from __future__ import annotations

import os
import re
import shutil
import tempfile
import threading
from abc import ABC, abstractmethod
from collections import Counter
from pathlib import Path

from .catalog import Catalog, Product
from .porter import porter_stem

SEARCH_RETURN_N = 50
MAX_QUERY_TERMS = 64
K1, B = 0.9, 0.4  # Anserini's BM25 defaults, which the original's LuceneSearcher uses
MAX_TIE = 5000  # widest tie window fetched from tantivy when its doc ids are not catalog order
INDEX_VERSION = 3  # bump when the document terms change: it keys the on-disk index
FILLER = "_"  # never produced by `analyze`, so no query can match it
# Lucene's EnglishAnalyzer.ENGLISH_STOP_WORDS_SET.
STOP_WORDS = frozenset(
    "a an and are as at be but by for if in into is it no not of on or such that the their then there these they "
    "this to was will with".split()
)
# Standard-tokenizer words: runs of letters/digits; '.' and an apostrophe join two runs, ',' joins two digit runs.
_WORD = re.compile(r"[a-z0-9]+(?:(?:[.']|(?<=[0-9]),(?=[0-9]))[a-z0-9]+)*")
MAX_WORD = 40


def _int4_to_long(i: int) -> int:
    bits, shift = i & 0x07, (i >> 3) - 1
    return bits if shift == -1 else (bits | 0x08) << shift


def _length_table() -> tuple[int, ...]:
    """Lucene's `SmallFloat.byte4ToInt` over the 256 byte values: the document lengths a norm can hold."""
    free = 24  # NUM_FREE_VALUES = 255 - longToInt4(Integer.MAX_VALUE)
    return tuple(i if i < free else free + _int4_to_long(i - free) for i in range(256))


LENGTH_TABLE = _length_table()
FIELDNORMS = LENGTH_TABLE  # tantivy ports Lucene's encoding: the same lengths are exact in both


def stored_length(n: int) -> int:
    """The length Lucene keeps for a document of `n` terms (its one-byte norm rounds down)."""
    lo, hi = 0, 255
    while lo < hi:
        mid = (lo + hi + 1) // 2
        if LENGTH_TABLE[mid] <= n:
            lo = mid
        else:
            hi = mid - 1
    return LENGTH_TABLE[lo]


def padded(terms: list[str]) -> list[str]:
    """`terms` plus filler up to the next exactly encoded length (tantivy only: it makes its length norm exact)."""
    n = len(terms)
    target = next((v for v in FIELDNORMS if v >= n), n)
    return terms + [FILLER] * (target - n)


def document_terms(product: Product) -> list[str]:
    return analyze(product.contents())


def analyze(text: str, limit: int | None = None) -> list[str]:
    """Terms of a text (see the module doc); linear in the text's length."""
    terms: list[str] = []
    for match in _WORD.finditer(text.lower()):
        word = match.group()
        if word.endswith(("'s", "'")):
            word = word[:-2] if word.endswith("'s") else word[:-1]
        if not word or len(word) > MAX_WORD or word in STOP_WORDS:
            continue
        terms.append(porter_stem(word))
        if limit is not None and len(terms) >= limit:
            break
    return terms


class SearchEngine(ABC):
    name = ""

    def __init__(self, catalog: Catalog) -> None:
        self.catalog = catalog
        self.asins = [p.asin for p in catalog.products]

    def search(self, query: str, k: int = SEARCH_RETURN_N) -> list[str]:
        terms = analyze(query, MAX_QUERY_TERMS)
        if not terms:
            return []
        hits = self.scored(terms, k)
        hits.sort(key=lambda h: (-h[0], h[1]))
        return [self.asins[i] for _, i in hits[:k]]

    @abstractmethod
    def scored(self, terms: list[str], k: int) -> list[tuple[float, int]]:
        """(score, catalog index) of the best hits (at least k when there are that many)."""


def cache_root() -> Path:
    base = os.environ.get("RLVR_GYM_CACHE") or os.path.join(os.path.expanduser("~"), ".cache", "rlvr-gym")
    return Path(base) / "webshop"


class TantivyEngine(SearchEngine):
    """tantivy index on disk under the cache root, built once per catalog digest (atomic rename on completion)."""

    name = "tantivy"

    def __init__(self, catalog: Catalog, cache_dir: Path | None = None) -> None:
        import tantivy

        super().__init__(catalog)
        self._t = tantivy
        builder = tantivy.SchemaBuilder()
        builder.add_text_field("contents", stored=False, tokenizer_name="whitespace", index_option="freq")
        builder.add_unsigned_field("idx", stored=True, indexed=False, fast=False)
        self.schema = builder.build()
        self.path = (cache_dir or cache_root()) / f"tantivy-v{INDEX_VERSION}-{catalog.digest}"
        self.built = False
        if not (self.path / "ready").exists():
            self._build()
            self.built = True
        self.index = tantivy.Index(self.schema, path=str(self.path), reuse=True)
        self.searcher = self.index.searcher()
        self.direct = self._doc_ids_are_catalog_order()
        self._local = threading.local()

    def _build(self) -> None:
        self.path.parent.mkdir(parents=True, exist_ok=True)
        tmp = Path(tempfile.mkdtemp(prefix="build-", dir=self.path.parent))
        try:
            index = self._t.Index(self.schema, path=str(tmp))
            writer = index.writer(heap_size=200_000_000, num_threads=1)
            for i, product in enumerate(self.catalog.products):
                doc = self._t.Document()
                doc.add_text("contents", " ".join(padded(document_terms(product))))
                doc.add_unsigned("idx", i)
                writer.add_document(doc)
            writer.commit()
            writer.wait_merging_threads()
            (tmp / "ready").write_text(self.catalog.source)
            try:
                os.rename(tmp, self.path)
            except OSError:  # another process finished first: keep its copy
                shutil.rmtree(tmp, ignore_errors=True)
        except BaseException:
            shutil.rmtree(tmp, ignore_errors=True)
            raise

    def scored(self, terms: list[str], k: int) -> list[tuple[float, int]]:
        t = self._t
        clauses = [
            (t.Occur.Should, _boosted(t, t.Query.term_query(self.schema, "contents", term), count))
            for term, count in Counter(terms).items()
        ]
        query = t.Query.boolean_query(clauses)
        if self.direct:  # tantivy orders equal scores by ascending doc id, which is catalog order here
            return [(float(score), address.doc) for score, address in self.searcher.search(query, limit=k).hits]
        limit = k + 20  # else widen until the tie group at rank k is complete, then cut it by catalog order
        while True:
            hits = self.searcher.search(query, limit=limit).hits
            if len(hits) < limit or len(hits) <= k or hits[-1][0] != hits[k - 1][0] or limit >= MAX_TIE:
                break
            limit *= 4
        return [(float(score), int(self.searcher.doc(address).get_first("idx"))) for score, address in hits]

    def _doc_ids_are_catalog_order(self) -> bool:
        """One segment whose doc ids are the catalog indices (single-threaded build): skip the stored-field read."""
        n = len(self.asins)
        if self.searcher.num_segments != 1 or self.searcher.num_docs != n:
            return False
        probe = {0, n // 3, n // 2, n - 1}
        return all(self.searcher.doc(self._t.DocAddress(0, i)).get_first("idx") == i for i in probe)


def _boosted(t, query, count: int):  # type: ignore[no-untyped-def]
    """A query term repeated `count` times weighs `count` times (Anserini's bag-of-words query)."""
    return query if count == 1 else t.Query.boost_query(query, float(count))


class BM25sEngine(SearchEngine):
    """bm25s with Lucene's scoring variant and the original's parameters, over the same analyzed terms."""

    name = "bm25s"

    def __init__(self, catalog: Catalog) -> None:
        import bm25s

        super().__init__(catalog)
        corpus = [document_terms(p) for p in catalog.products]
        self.retriever = bm25s.BM25(k1=K1, b=B, method="lucene")
        self.retriever.index(corpus, show_progress=False)
        self.vocab = self.retriever.vocab_dict

    def scored(self, terms: list[str], k: int) -> list[tuple[float, int]]:
        import numpy as np

        ids = [self.vocab[t] for t in terms if t in self.vocab]  # a repeated term counts again, as in Anserini
        if not ids:
            return []
        scores = (
            self.retriever.get_scores_from_ids(ids)
            if hasattr(self.retriever, "get_scores_from_ids")
            else self.retriever.get_scores([t for t in terms if t in self.vocab])
        )
        return top_k(np, scores, k)


class LuceneEngine(SearchEngine):
    """BM25 as the original's Lucene index computes it (module doc), over postings held in numpy arrays."""

    name = "lucene"

    def __init__(self, catalog: Catalog, k1: float = K1, b: float = B) -> None:
        import numpy as np

        super().__init__(catalog)
        self.k1, self.b = k1, b
        vocab: dict[str, int] = {}
        term_ids: list[int] = []
        doc_ids: list[int] = []
        freqs: list[int] = []
        lengths = np.zeros(len(catalog.products), dtype=np.int64)
        for d, product in enumerate(catalog.products):
            terms = document_terms(product)
            lengths[d] = len(terms)
            for term, tf in Counter(terms).items():
                term_ids.append(vocab.setdefault(term, len(vocab)))
                doc_ids.append(d)
                freqs.append(tf)
        order = np.argsort(np.asarray(term_ids, dtype=np.int64), kind="stable")
        self.vocab = vocab
        self.docs = np.asarray(doc_ids, dtype=np.int64)[order]
        self.freqs = np.asarray(freqs, dtype=np.float32)[order]
        self.offsets = np.searchsorted(np.asarray(term_ids, dtype=np.int64)[order], np.arange(len(vocab) + 1))
        n = len(catalog.products)
        df = np.diff(self.offsets).astype(np.float64)
        self.idf = np.log(1 + (n - df + 0.5) / (df + 0.5)).astype(np.float32)
        avgdl = np.float32(lengths.sum() / max(1, n))
        stored = np.asarray([stored_length(int(x)) for x in lengths], dtype=np.float32)
        # Lucene's per-document 1 / (k1 * (1 - b + b * dl / avgdl)), in float32
        self.norm_inverse = np.float32(1) / (np.float32(k1) * (np.float32(1 - b) + np.float32(b) * stored / avgdl))
        self._np = np

    def scored(self, terms: list[str], k: int) -> list[tuple[float, int]]:
        np = self._np
        scores = np.zeros(len(self.asins), dtype=np.float32)
        for term, count in Counter(terms).items():
            t = self.vocab.get(term)
            if t is None:
                continue
            lo, hi = self.offsets[t], self.offsets[t + 1]
            docs = self.docs[lo:hi]
            weight = np.float32(count) * self.idf[t]
            scores[docs] += weight - weight / (np.float32(1) + self.freqs[lo:hi] * self.norm_inverse[docs])
        return top_k(np, scores, k)


def top_k(np, scores, k: int) -> list[tuple[float, int]]:  # type: ignore[no-untyped-def]
    """The k best positive scores by (score desc, catalog index asc), in O(n)."""
    positive = np.nonzero(scores > 0)[0]
    if len(positive) > k:
        values = scores[positive]
        kth = np.partition(values, len(values) - k)[len(values) - k]
        above = positive[values > kth]
        positive = np.concatenate([above, positive[values == kth][: k - len(above)]])
    order = positive[np.lexsort((positive, -scores[positive]))]
    return [(float(scores[i]), int(i)) for i in order]


ENGINES = {"lucene": LuceneEngine, "tantivy": TantivyEngine, "bm25s": BM25sEngine}
DEFAULT_ENGINE = "lucene"
_cache: dict[tuple[str, str], SearchEngine] = {}
_lock = threading.Lock()


def get_engine(catalog: Catalog, name: str = DEFAULT_ENGINE) -> SearchEngine:
    """One engine per (catalog, engine name) per process."""
    if name not in ENGINES:
        raise ValueError(f"unknown search engine {name!r}; choose one of {sorted(ENGINES)}")
    key = (catalog.digest, name)
    with _lock:
        if key not in _cache:
            _cache[key] = ENGINES[name](catalog)
        return _cache[key]
