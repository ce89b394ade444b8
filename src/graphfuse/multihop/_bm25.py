"""Okapi BM25 over an in-memory corpus, as a scipy sparse matrix (one sparse product per query)."""

from __future__ import annotations

import copy
import math
from collections import Counter
from collections.abc import Iterable, Mapping, Sequence
from typing import Any, Union

import numpy as np
import numpy.typing as npt
import scipy.sparse as sp

from .._core._errors import InvalidInput
from .._core._filters import MetadataFilter
from .._core._text import bm25_tokens
from .._core._types import check_id

__all__ = ["BM25Index", "PassageLexicon", "bm25_tokens"]

BM25Document = Union[tuple[str, str], tuple[str, str, Mapping[str, Any]]]
"""``(id, text)`` or ``(id, text, metadata)``; metadata is what filters are checked against."""


class BM25Index:
    """An immutable BM25 index of ``(id, text)`` pairs.

    ``score = sum over query terms of idf(t) * tf * (k1 + 1) / (tf + k1 * (1 - b + b * dl / avgdl))``
    with the always-positive ``idf(t) = ln(1 + (N - df + 0.5) / (df + 0.5))`` (Lucene's form).
    A term repeated in the query counts once. Build it once (tokenising is the cost); queries
    are a sparse matrix-vector product (timings: ``docs/multihop.md``).

    ``subjects``, the documents' subjects as ``(id, text)`` or ``(id, text, metadata)`` (the
    start of each one's first sentence that names what it is about, up to *is*/*was*:
    :func:`subject_span`; none for dialogue), are indexed the same way as :attr:`subjects`:
    searching that for a name finds the passage *about* it rather than the ones that mention
    it, which is how :class:`BridgeSearch` takes the second hop without titles.

    :attr:`passages` (set with :meth:`with_passages`) is an index of the same corpus by passage:
    the indexer's chunks of a split document, and each unsplit document whole. The ``multihop``
    preset searches it, so that a long page scores by its best passage, as its vectors do.
    """

    _subjects: BM25Index | None
    _passages: BM25Index | None

    def __init__(
        self,
        documents: Iterable[BM25Document],
        *,
        k1: float = 1.2,
        b: float = 0.75,
        subjects: Iterable[BM25Document] | None = None,
    ) -> None:
        if isinstance(k1, bool) or not isinstance(k1, (int, float)) or not (math.isfinite(k1) and k1 >= 0):
            raise InvalidInput(f"k1 must be a non-negative number, got {k1!r}")
        if isinstance(b, bool) or not isinstance(b, (int, float)) or not 0.0 <= b <= 1.0:
            raise InvalidInput(f"b must be in [0, 1], got {b!r}")
        ids: list[str] = []
        seen: set[str] = set()
        vocab: dict[str, int] = {}
        rows: list[int] = []
        cols: list[int] = []
        lengths: list[int] = []
        metadata: list[Mapping[str, Any]] = []
        for item in documents:
            if not isinstance(item, tuple) or len(item) not in (2, 3):
                raise InvalidInput(f"BM25 corpus items must be (id, text) or (id, text, metadata), got {item!r}")
            doc_id, text = item[0], item[1]
            metadata.append(item[2] if len(item) == 3 else {})
            check_id(doc_id)
            if doc_id in seen:
                raise InvalidInput(f"BM25 corpus has document {doc_id!r} twice")
            if not isinstance(text, str):
                raise InvalidInput(f"BM25 corpus document {doc_id!r}: text must be a string")
            seen.add(doc_id)
            tokens = bm25_tokens(text)
            row = len(ids)
            ids.append(doc_id)
            lengths.append(len(tokens))
            for t in tokens:
                cols.append(vocab.setdefault(t, len(vocab)))
                rows.append(row)
        n = len(ids)
        tf = sp.csr_matrix((np.ones(len(rows)), (rows, cols)), shape=(n, len(vocab)))
        tf.sum_duplicates()
        self._set_counts(ids, vocab, tf, np.asarray(lengths, dtype=np.float64), metadata, float(k1), float(b))
        if subjects is not None:
            self._subjects = BM25Index(subjects, k1=k1, b=b)

    @classmethod
    def from_term_counts(
        cls,
        ids: Sequence[str],
        vocabulary: Mapping[str, int],
        counts: sp.csr_matrix,
        lengths: npt.NDArray[np.float64],
        metadata: Sequence[Mapping[str, Any]],
        *,
        k1: float = 1.2,
        b: float = 0.75,
        subjects: BM25Index | None = None,
    ) -> BM25Index:
        """An index from already-tokenised documents (as persisted by a store's corpus cache).

        ``counts[i, vocabulary[t]]`` is how often token ``t`` (of :func:`bm25_tokens`) occurs in
        document ``ids[i]``, ``lengths[i]`` its token count; the result equals building the
        index from the texts. ``subjects``, an index of the documents' subjects built the same
        way, becomes :attr:`subjects`.
        """
        n = len(ids)
        if counts.shape != (n, len(vocabulary)) or len(lengths) != n or len(metadata) != n:
            raise InvalidInput(
                f"BM25 term counts of shape {counts.shape} do not match {n} ids and {len(vocabulary)} terms"
            )
        if subjects is not None and not isinstance(subjects, BM25Index):
            raise InvalidInput(f"subjects must be a BM25Index, got {subjects!r}")
        self = cls.__new__(cls)
        self._set_counts(
            list(ids), dict(vocabulary), counts, np.asarray(lengths, dtype=np.float64), list(metadata), k1, b
        )
        self._subjects = subjects
        return self

    def _set_counts(
        self,
        ids: list[str],
        vocab: dict[str, int],
        tf: sp.csr_matrix,
        dl: npt.NDArray[np.float64],
        metadata: list[Mapping[str, Any]],
        k1: float,
        b: float,
    ) -> None:
        n = len(ids)
        avgdl = float(dl.mean()) if n and dl.mean() > 0 else 1.0
        df = np.bincount(tf.indices, minlength=len(vocab)).astype(np.float64)
        idf = np.log1p((n - df + 0.5) / (df + 0.5))
        # Precompute each (document, term) weight so a query is one column selection and a sum.
        norm = k1 * (1.0 - b + b * dl / avgdl)
        data = tf.data.copy()
        row_of = np.repeat(np.arange(n), np.diff(tf.indptr))
        weights = idf[tf.indices] * data * (k1 + 1.0) / (data + norm[row_of])
        self._matrix = sp.csr_matrix((weights, tf.indices, tf.indptr), shape=(n, len(vocab))).tocsc()
        # Kept to read the term counts back (merged): two floats a document and one a term.
        self._idf = idf
        self._lengths = dl
        self._norm = norm
        self._vocab = vocab
        self._ids = ids
        self._position = {d: i for i, d in enumerate(ids)}
        self._metadata = metadata
        self._k1, self._b = float(k1), float(b)
        self._subjects = None
        self._passages = None

    def __len__(self) -> int:
        return len(self._ids)

    def __repr__(self) -> str:
        subjects = "" if self._subjects is None else f", {len(self._subjects)} subjects"
        passages = "" if self._passages is None else f", {len(self._passages)} passages"
        return (
            f"BM25Index({len(self._ids)} documents, {len(self._vocab)} terms, k1={self._k1}, b={self._b}"
            f"{subjects}{passages})"
        )

    @property
    def ids(self) -> Sequence[str]:
        """Document ids in index order."""
        return self._ids

    @property
    def subjects(self) -> BM25Index | None:
        """The index of the documents' subjects (``subjects=True``), else ``None``."""
        return self._subjects

    @property
    def passages(self) -> BM25Index | None:
        """The index of the corpus by passage (:meth:`with_passages`), else ``None``."""
        return self._passages

    def with_passages(self, passages: BM25Index | None) -> BM25Index:
        """A copy of this index whose :attr:`passages` is ``passages`` (the same term weights, shared).

        ``passages`` indexes the corpus's passages: the chunks of each split document (ids
        ``<document>#<n>``, metadata ``parent_id``) and each unsplit document whole. A long page
        whose words are spread over its sections then scores by its best passage, not by all of
        its text at once (see docs/multihop.md, "Long pages").
        """
        if passages is not None and not isinstance(passages, BM25Index):
            raise InvalidInput(f"passages must be a BM25Index or None, got {passages!r}")
        out = copy.copy(self)
        out._passages = passages
        return out

    @property
    def metadata(self) -> Sequence[Mapping[str, Any]]:
        """Each document's metadata (index order), as given when the index was built."""
        return self._metadata

    def merged(self, groups: Mapping[str, Sequence[str]]) -> BM25Index:
        """An index of ``groups`` (group id -> the ids of its documents here), each scored as one text.

        A group's term counts and length are the sums of its documents' (ids not indexed here
        are left out; a group with none is left out), weighted as a corpus of its own (its idf
        counts groups), with this index's ``k1`` and ``b``. The counts are read back from the
        term weights, so the index keeps no second matrix for it.
        """
        names: list[str] = []
        rows: list[int] = []
        cols: list[int] = []
        for name, members in groups.items():
            found = [p for d in members if (p := self._position.get(d)) is not None]
            if not found:
                continue
            rows.extend([len(names)] * len(found))
            cols.extend(found)
            names.append(name)
        fold = sp.csr_matrix((np.ones(len(rows)), (rows, cols)), shape=(len(names), len(self._ids)))
        # No group: nothing to read back (a store without titles builds the stage for nothing else).
        counts = sp.csr_matrix(fold @ self._term_counts()) if names else sp.csr_matrix((0, len(self._vocab)))
        return BM25Index.from_term_counts(
            names, self._vocab, counts, fold @ self._lengths, [{}] * len(names), k1=self._k1, b=self._b
        )

    def _term_counts(self) -> sp.csr_matrix:
        """The documents' term counts, inverted from the weights ``idf * tf * (k1 + 1) / (tf + norm)``."""
        weights = self._matrix.tocsr()
        if self._k1 == 0.0:
            # k1 = 0 weighs presence only: a count of one scores the same.
            return sp.csr_matrix((np.ones_like(weights.data), weights.indices, weights.indptr), shape=weights.shape)
        row_of = np.repeat(np.arange(weights.shape[0]), np.diff(weights.indptr))
        w = weights.data
        tf = w * self._norm[row_of] / (self._idf[weights.indices] * (self._k1 + 1.0) - w)
        return sp.csr_matrix((np.rint(tf), weights.indices, weights.indptr), shape=weights.shape)

    def document_share(self, word: str) -> float:
        """The share of the documents that hold ``word`` (one token of :func:`bm25_tokens`; 0 for another text)."""
        tokens = bm25_tokens(word)
        if len(tokens) != 1 or tokens[0] not in self._vocab or not self._ids:
            return 0.0
        column = self._vocab[tokens[0]]
        return float(self._matrix.indptr[column + 1] - self._matrix.indptr[column]) / len(self._ids)

    def scores(self, query: str) -> npt.NDArray[np.float64]:
        """The BM25 score of every document (index order) for ``query``."""
        rows, weights = self._postings(query)
        if rows is None:
            return np.zeros(len(self._ids))
        return np.bincount(rows, weights=weights, minlength=len(self._ids)).astype(np.float64, copy=False)

    def _postings(self, text: str) -> tuple[npt.NDArray[np.int32] | None, npt.NDArray[np.float64]]:
        """The (row, weight) entries of ``text``'s distinct known terms, term after term (``None``: no term)."""
        terms = sorted({self._vocab[t] for t in bm25_tokens(text) if t in self._vocab})
        if not terms:
            return None, np.zeros(0)
        # The columns of the CSC matrix hold each term's documents: read them as they are, without
        # building a sub-matrix (what a query costs is then numpy's, not scipy's bookkeeping).
        m = self._matrix
        if len(terms) == 1:
            a, z = m.indptr[terms[0]], m.indptr[terms[0] + 1]
            return m.indices[a:z], m.data[a:z]
        spans = [np.arange(m.indptr[t], m.indptr[t + 1]) for t in terms]
        at = np.concatenate(spans)
        return m.indices[at], m.data[at]

    def holding(self, text: str, ids: Iterable[str]) -> set[str]:
        """The documents among ``ids`` that hold at least one of ``text``'s terms (ids not indexed are left out)."""
        wanted = [(d, p) for d in ids if (p := self._position.get(d)) is not None]
        rows, _ = self._postings(text)
        if rows is None or not wanted:
            return set()
        # Term weights are always positive (Lucene's idf): a stored entry is an occurrence.
        held = np.isin(np.fromiter((p for _, p in wanted), dtype=np.int64, count=len(wanted)), rows)
        return {d for (d, _), h in zip(wanted, held.tolist(), strict=True) if h}

    def search(self, query: str, limit: int = 50, *, filter: MetadataFilter | None = None) -> list[tuple[str, float]]:
        """The ``limit`` best ``(id, score)`` pairs with a positive score, best first (ties by id).

        ``filter`` is checked against each document's metadata before the limit.
        """
        s = self.scores(query)
        hits = np.flatnonzero(s > 0)
        if filter is not None:
            meta = self._metadata
            hits = np.asarray([i for i in hits.tolist() if filter.matches(meta[i])], dtype=np.int64)
        if hits.size > limit:
            hits = hits[np.argpartition(-s[hits], limit - 1)[:limit]]
        order = sorted(hits.tolist(), key=lambda i: (-s[i], self._ids[i]))
        return [(self._ids[i], float(s[i])) for i in order]


class PassageLexicon:
    """The words of a corpus's passages as a BM25 index holds them: :class:`~graphfuse.Passages`' ``terms``.

    ``index`` is a passage index as :func:`~graphfuse.multihop.corpus_indexes` builds it
    (:attr:`BM25Index.passages`), which indexes each passage as its ``title`` metadata followed by
    its text. :meth:`term_counts` reads the counts back from the index's term weights and takes
    the title's words out, so that they describe the text alone: what tokenising the text the
    graph store holds gives, for the store generation the index was built from, without loading
    or tokenising it. An index with ``k1 = 0`` keeps presence only: it answers ``None``.
    """

    __slots__ = ("_index", "_titles")

    def __init__(self, index: BM25Index) -> None:
        if not isinstance(index, BM25Index):
            raise InvalidInput(f"index must be a BM25Index, got {index!r}")
        self._index = index
        self._titles: dict[int, tuple[Counter[str], int]] = {}  # row -> its title's tokens and their count

    def __repr__(self) -> str:
        return f"PassageLexicon({self._index!r})"

    def term_counts(
        self, ids: Sequence[str], terms: Sequence[str]
    ) -> tuple[npt.NDArray[np.float64], npt.NDArray[np.float64]] | None:
        """How often each of ``terms`` occurs in each passage of ``ids`` (``counts[k, j]``), and their token counts.

        ``None`` when one of ``ids`` is not in the index (or the index cannot give counts back).
        """
        index = self._index
        found = [index._position.get(i) for i in ids]
        rows = [r for r in found if r is not None]
        if index._k1 == 0.0 or len(rows) < len(ids):
            return None
        at = np.asarray(rows, dtype=np.int64)
        counts = np.zeros((len(ids), len(terms)))
        if len(set(rows)) == len(rows):
            # Each wanted row's place in ids, -1 for the others: a term's holders index it directly.
            place = np.full(len(index._norm), -1, dtype=np.int64)
            place[at] = np.arange(len(rows))
            for j, t in enumerate(terms):
                held = self._held(t)
                if held is None:
                    continue
                column, holders, weights = held
                at_place = place[holders]
                hit = at_place >= 0
                if hit.any():
                    counts[at_place[hit], j] = self._tf(column, holders[hit], weights[hit])
        else:
            self._repeated_counts(at, terms, counts)
        lengths = index._lengths[at].copy()
        column_of = {t: j for j, t in enumerate(terms)}
        for k, row in enumerate(rows):
            title, size = self._title(row)
            if size:
                lengths[k] -= size
                for t in title.keys() & column_of.keys():
                    counts[k, column_of[t]] -= title[t]
        return counts, lengths

    def _held(self, term: str) -> tuple[int, npt.NDArray[np.int32], npt.NDArray[np.float64]] | None:
        """``term``'s column, the rows that hold it and their weights (``None``: not in the index)."""
        index = self._index
        column = index._vocab.get(term)
        if column is None:
            return None
        matrix = index._matrix  # CSC: a term's column lists the rows that hold it and their weights
        start, end = matrix.indptr[column], matrix.indptr[column + 1]
        return column, matrix.indices[start:end], matrix.data[start:end]

    def _tf(self, column: int, holders: npt.NDArray[np.int32], w: npt.NDArray[np.float64]) -> npt.NDArray[np.float64]:
        """The term counts behind the weights ``w`` of term ``column`` in rows ``holders``."""
        index = self._index
        norm = index._norm[holders]
        tf: npt.NDArray[np.float64] = np.rint(w * norm / (index._idf[column] * (index._k1 + 1.0) - w))
        return tf

    def _repeated_counts(
        self, at: npt.NDArray[np.int64], terms: Sequence[str], counts: npt.NDArray[np.float64]
    ) -> None:
        """:meth:`term_counts` into ``counts`` when a row is wanted more than once (every copy)."""
        order = np.argsort(at, kind="stable")
        ranked = at[order]
        for j, t in enumerate(terms):
            held = self._held(t)
            if held is None:
                continue
            column, holders, weights = held
            left = np.searchsorted(ranked, holders, side="left")
            right = np.searchsorted(ranked, holders, side="right")
            hit = right > left
            if not hit.any():
                continue
            tf = self._tf(column, holders[hit], weights[hit])
            # Each holding row's places in ids: ranked[left:right].
            lo, times = left[hit], (right - left)[hit]
            step = np.arange(int(times.sum())) - np.repeat(np.cumsum(times) - times, times)
            counts[order[np.repeat(lo, times) + step], j] = np.repeat(tf, times)

    def _title(self, row: int) -> tuple[Counter[str], int]:
        """The tokens of the title row ``row`` was indexed with, and how many (tokenised once)."""
        found = self._titles.get(row)
        if found is None:
            title = self._index._metadata[row].get("title")
            tokens = Counter(bm25_tokens(title)) if isinstance(title, str) and title.strip() else Counter()
            found = self._titles[row] = (tokens, sum(tokens.values()))
        return found
