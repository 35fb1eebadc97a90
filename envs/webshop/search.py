"""BM25 search over the catalog: tantivy (default, cached on disk per catalog digest) and bm25s (pure numpy).

Both engines see the same documents (WebShop's `contents` recipe, `Product.contents`) through the same analyzer
(`analyze`: lower-case alphanumeric words with a light plural stemmer), so they rank with the same terms and differ
only in BM25 arithmetic (tantivy quantises document lengths). Parameters are Lucene's defaults, k1=1.2, b=0.75,
which is what tantivy implements. Results are at most `SEARCH_RETURN_N` ASINs, ties broken by catalog order.

tantivy stores document lengths in one byte (exact up to 40 tokens, then in steps that double every 8 codes), so
every document is padded with a filler term to the next length tantivy stores exactly (`FIELDNORMS`). Both engines
index the padded documents, which makes their length normalisation, and so their rankings, agree.
"""

from __future__ import annotations

import os
import shutil
import tempfile
import threading
from abc import ABC, abstractmethod
from pathlib import Path

from .catalog import Catalog, Product

SEARCH_RETURN_N = 50
MAX_QUERY_TERMS = 64
K1, B = 1.2, 0.75
MAX_TIE = 5000  # widest tie window fetched from tantivy when its doc ids are not catalog order
INDEX_VERSION = 1  # bump when the document terms change: it keys the on-disk index
_VOWELS = set("aeiou")
FILLER = "_"  # never produced by `analyze`, so no query can match it


def _fieldnorms() -> tuple[int, ...]:
    values, step = list(range(41)), 2
    while len(values) < 256:
        values += [values[-1] + step * (i + 1) for i in range(8)]
        step *= 2
    return tuple(values[:256])


FIELDNORMS = _fieldnorms()  # the document lengths tantivy's one-byte field norm encodes exactly


def padded(terms: list[str]) -> list[str]:
    """`terms` plus filler up to the next exactly encoded length (unchanged past the table's end)."""
    n = len(terms)
    target = next((v for v in FIELDNORMS if v >= n), n)
    return terms + [FILLER] * (target - n)


def document_terms(product: Product) -> list[str]:
    return padded(analyze(product.contents()))


def stem(word: str) -> str:
    """A light English plural stemmer (S-stemmer): enough to make 'shoes'/'shoe' and 'berries'/'berry' meet."""
    if len(word) > 4 and word.endswith("ies") and word[-4] not in _VOWELS:
        return word[:-3] + "y"
    if len(word) > 3 and word.endswith("es") and word[-3] in "sxz" or word.endswith(("ches", "shes")):
        return word[:-2]
    if len(word) > 3 and word.endswith("s") and not word.endswith(("ss", "us", "is")):
        return word[:-1]
    return word


def analyze(text: str, limit: int | None = None) -> list[str]:
    """Terms of a text: lower-cased runs of ASCII letters/digits, stemmed; linear in the text's length."""
    terms: list[str] = []
    word: list[str] = []
    for ch in text.lower() + " ":
        if ("a" <= ch <= "z") or ("0" <= ch <= "9"):
            word.append(ch)
            continue
        if word:
            if len(word) <= 40:
                terms.append(stem("".join(word)))
                if limit is not None and len(terms) >= limit:
                    return terms
            word = []
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
                doc.add_text("contents", " ".join(document_terms(product)))
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
        clauses = [(t.Occur.Should, t.Query.term_query(self.schema, "contents", term)) for term in dict.fromkeys(terms)]
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


class BM25sEngine(SearchEngine):
    """bm25s with Lucene's scoring variant and parameters, over the same analyzed terms."""

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

        ids = [self.vocab[t] for t in dict.fromkeys(terms) if t in self.vocab]
        if not ids:
            return []
        scores = (
            self.retriever.get_scores_from_ids(ids)
            if hasattr(self.retriever, "get_scores_from_ids")
            else self.retriever.get_scores([t for t in terms if t in self.vocab])
        )
        positive = np.nonzero(scores > 0)[0]
        if len(positive) > k:  # the k best by (score desc, catalog index asc), in O(n)
            values = scores[positive]
            kth = np.partition(values, len(values) - k)[len(values) - k]
            above = positive[values > kth]
            positive = np.concatenate([above, positive[values == kth][: k - len(above)]])
        order = positive[np.lexsort((positive, -scores[positive]))]
        return [(float(scores[i]), int(i)) for i in order]


ENGINES = {"tantivy": TantivyEngine, "bm25s": BM25sEngine}
_cache: dict[tuple[str, str], SearchEngine] = {}
_lock = threading.Lock()


def get_engine(catalog: Catalog, name: str = "tantivy") -> SearchEngine:
    """One engine per (catalog, engine name) per process."""
    if name not in ENGINES:
        raise ValueError(f"unknown search engine {name!r}; choose one of {sorted(ENGINES)}")
    key = (catalog.digest, name)
    with _lock:
        if key not in _cache:
            _cache[key] = ENGINES[name](catalog)
        return _cache[key]
