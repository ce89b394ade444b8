"""Subgraph serialization: compact ENTITIES / RELATIONSHIPS / SUPPORTING TEXT sections within the budget."""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field

from .._core._errors import InvalidInput
from .._core._sentences import sentence_spans
from .._core._types import Relation
from ._evidence import SentenceScorer, _key, _name_key, joined_texts
from ._items import Item
from ._packing import Budgeter, empty_text
from ._paragraphs import HEADING, MARKUP, span_kinds, subject_span
from ._types import ContextSource, DroppedSource

__all__ = ["GraphCaps", "serialize_graph"]

_SPACE = re.compile(r"\s+")
_TYPE_KEYS = ("entity_type", "type", "kind")


@dataclass(frozen=True, slots=True)
class GraphCaps:
    """Caps of a graph context (counts, and characters of each text snippet)."""

    max_entities: int = 15
    max_relations: int = 20
    max_documents: int = 3
    description_chars: int = 200
    context_chars: int = 120
    supporting_chars: int = 300

    def __post_init__(self) -> None:
        for name in self.__slots__:
            value = getattr(self, name)
            if isinstance(value, bool) or not isinstance(value, int) or value < 0:
                raise InvalidInput(f"graph cap {name} must be a non-negative integer, got {value!r}")


def _clip(text: str, limit: int) -> str:
    # (A printable text has no whitespace but spaces: without two in a row, nothing to collapse.)
    text = (text if text.isprintable() and "  " not in text else _SPACE.sub(" ", text)).strip()
    if len(text) <= limit:
        return text
    cut = text[:limit]
    space = cut.rfind(" ")
    if space > limit // 2:
        cut = cut[:space]
    return cut.rstrip(" ,;:") + "\u2026"


def _type(metadata: Mapping[str, object]) -> str | None:
    for key in _TYPE_KEYS:
        value = metadata.get(key)
        if isinstance(value, str) and value.strip():
            return _SPACE.sub("_", value.strip()).upper()[:32]
    return None


def _number(value: object, default: float) -> float:
    """A confidence in [0, 1]: ``value`` when it is a number, else ``default``."""
    number = value if isinstance(value, (int, float)) and not isinstance(value, bool) else default
    return min(1.0, max(0.0, float(number)))


def _first_sentence(line: str) -> tuple[int, int] | None:
    spans = sentence_spans(line, 1)
    return spans[0] if spans else None


@dataclass
class _Line:
    section: int  # 0 entities, 1 relationships, 2 supporting text
    priority: tuple[float, int, int]
    text: str  # with a "{n}" placeholder for the entity's marker where it has one
    entity: int  # the entity position this line cites (-1: none)
    cost: int = 0
    filled: dict[str, str] = field(default_factory=dict)  # marker -> the text with it (see _filled)


class _Reader:
    """Sentences and match keys of the texts of one graph context, each worked out once."""

    __slots__ = ("_firsts", "_keys", "_padded", "_sentences")

    def __init__(self) -> None:
        self._padded: dict[str, str] = {}
        self._sentences: dict[str, list[str]] = {}
        self._firsts: dict[str, str | None] = {}
        self._keys: dict[str, str] = {}

    def sentences(self, text: str) -> list[str]:
        """The sentences of ``text`` that state something: headings and markup left out."""
        found = self._sentences.get(text)
        if found is None:
            spans = sentence_spans(text)
            kinds = span_kinds(text, spans)
            found = [text[s:e] for (s, e), kind in zip(spans, kinds, strict=True) if kind not in (HEADING, MARKUP)]
            self._sentences[text] = found
        return found

    def first(self, text: str) -> str | None:
        """The sentence of ``text`` that defines its subject: the first of prose, past the headings
        and markup that open it (``None`` without prose or heading); the rest is not split."""
        if text not in self._firsts:
            span = subject_span(text, _first_sentence)
            self._firsts[text] = text[span[0] : span[1]] if span is not None else None
        return self._firsts[text]

    def key(self, text: str) -> str:
        found = self._keys.get(text)
        if found is None:
            found = self._keys[text] = _key(text)
        return found

    def padded_key(self, text: str) -> str:
        """``f" {key(text)} "``: a name key in it with spaces around is a whole-word match."""
        found = self._padded.get(text)
        if found is None:
            found = self._padded[text] = f" {_key(text)} "
        return found


def serialize_graph(
    query: str,
    items: Sequence[Item],
    neighbours: Sequence[Item],
    relations: Sequence[Relation],
    b: Budgeter,
    caps: GraphCaps,
    similarity: Mapping[str, float] | None = None,
    relation_similarity: Mapping[str, float] | None = None,
) -> tuple[str, list[ContextSource], list[DroppedSource], dict[str, int]]:
    """The retrieved documents (and neighbours within the filter) as a compact, deterministic subgraph.

    ``items`` are the retrieved documents best first; ``neighbours`` documents one relation
    away (already filtered by the caller); ``relations`` any relations among them (ids of
    merged chunks are mapped to their document). Returns ``(text, sources, dropped, tokens by
    section)``. Every sentence is stated once: a relationship's context or a supporting
    sentence that already describes an entity is not repeated.
    """
    entities = list(items[: caps.max_entities])
    capped = list(items[caps.max_entities :])
    retrieved = len(entities)
    room = max(0, caps.max_entities - retrieved)
    entities += list(neighbours[:room])
    position: dict[str, int] = {}
    for i, e in enumerate(entities):
        position[e.id] = i
        for part in e.parts:
            position.setdefault(part, i)
    names = [e.title or e.id for e in entities]
    used: set[str] = set()
    lines: list[_Line] = []
    read = _Reader()

    # ENTITIES: name [TYPE]: the subject-defining first sentence.
    for i, e in enumerate(entities):
        first = read.first(e.text)
        description = _clip(first, caps.description_chars) if first is not None else ""
        if description.casefold() == names[i].casefold():
            description = ""  # (an entity node's text is its name: an LLM graph's node has a description)
            given = e.metadata.get("description")
            if isinstance(given, str) and given.strip():
                description = _clip(given, caps.description_chars)
        if first is not None:
            used.add(read.key(first))
        kind = _type(e.metadata)
        label = f"{names[i]} [{kind}]" if kind else names[i]
        text = f"- [{{n}}] {label}: {description}" if description else f"- [{{n}}] {label}"
        rank = float(i) if i < retrieved else float(retrieved + i)
        lines.append(_Line(0, (rank, 0, i), text, i))

    # RELATIONSHIPS: A -[TYPE]-> B (conf) | the sentence of A that names B.
    seen_pairs: set[tuple[int, int]] = set()
    edges: list[tuple[tuple[int, int, str], int, int, Relation]] = []
    for rel in relations:
        s, t = position.get(rel.source), position.get(rel.target)
        if s is None or t is None or s == t:
            continue
        edges.append(((max(s, t), min(s, t), rel.type), s, t, rel))
    edges.sort(key=lambda e: (e[0], -e[3].weight))
    n_edges = 0
    # A relationship's context names its target as whole words: " name " in " key " (keys are
    # words joined by single spaces), what a whole-word regex of the name finds.
    padded: dict[int, str | None] = {}
    for order, s, t, rel in edges:
        pair = (min(s, t), max(s, t))
        if pair in seen_pairs or n_edges >= caps.max_relations:
            continue
        seen_pairs.add(pair)
        n_edges += 1
        context = ""
        given = rel.metadata.get("context")
        if isinstance(given, str) and given.strip():
            # An LLM graph's relation carries the words that state it (indexing's RELATED_TO).
            if read.key(given) not in used:
                used.add(read.key(given))
                context = _clip(given, caps.context_chars)
            target = None
        else:
            if t not in padded:
                name_key = _name_key(names[t])
                padded[t] = f" {name_key} " if name_key else None
            target = padded[t]
        # (A sentence's words are a run of its text's words: a text whose key lacks the name has no
        # sentence naming it, and is not split.)
        if target is not None and target in read.padded_key(entities[s].text):
            for sentence in read.sentences(entities[s].text):
                key = read.key(sentence)
                if key not in used and target in f" {key} ":
                    used.add(key)
                    context = _clip(sentence, caps.context_chars)
                    break
        conf = _number(rel.metadata.get("confidence"), rel.weight)
        kind = _type({"type": rel.metadata.get("relation_type")}) or rel.type
        text = f"- {names[s]} -[{kind}]-> {names[t]} ({conf:.2f})" + (f" | {context}" if context else "")
        lines.append(_Line(1, (float(order[0]), 1, n_edges), text, -1))

    # SUPPORTING TEXT: the query-relevant sentences of the best documents, capped in characters.
    # (An item's sentences are scored when first asked for: only the first max_documents are.)
    scorer = SentenceScorer(query, entities[:retrieved], similarity, relation_similarity)
    for i in range(min(caps.max_documents, retrieved)):
        picked = []
        length = 0
        for sent in sorted(scorer.sentences(i), key=lambda x: (-x.score, x.index)):
            key = scorer.key(sent.text)
            # Supporting text is what the question's words or entities point at; similarity orders it.
            if key in used or sent.score - sent.semantic <= 0:
                continue
            if length and length + len(sent.text) > caps.supporting_chars:
                continue
            used.add(key)
            picked.append(sent)
            length += len(sent.text) + 1
        if picked:
            body = _clip(" ".join(joined_texts(sorted(picked, key=lambda x: x.index))), caps.supporting_chars)
            lines.append(_Line(2, (float(i), 2, 0), f"[{{n}}] {names[i]}: {body}", i))

    return _fit(lines, entities, retrieved, capped, b)


_HEADERS = ("## ENTITIES", "## RELATIONSHIPS", "## SUPPORTING TEXT")


def _render(lines: Sequence[_Line], b: Budgeter) -> tuple[list[str], list[int]]:
    """The rows of ``lines`` (section headers and lines, to be joined by line breaks) and the
    entities they cite, numbered in order (each row counted with ``b`` on the way: see :func:`_filled`)."""
    cited = sorted({ln.entity for ln in lines if ln.entity >= 0})
    marker = {e: n for n, e in enumerate(cited, start=1)}
    rows = []
    for section, header in enumerate(_HEADERS):
        body = [ln for ln in lines if ln.section == section]
        if body:
            rows.append(header)
            rows += [_filled(ln, str(marker.get(ln.entity, 0)), b) for ln in body]
    return rows, cited


def _filled(line: _Line, marker: str, b: Budgeter) -> str:
    """The line's text with ``marker`` in its placeholders; counted with ``b`` (when it counts joined
    texts from their parts) from the counts of the text around them (one placeholder: the marker is
    counted with the short text before it)."""
    found = line.filled.get(marker)
    if found is not None:
        return found
    if "{n}" not in line.text:
        if b.additive:
            b.count(line.text)
        found = line.text
    else:
        pieces = line.text.split("{n}")
        sep = marker
        if len(pieces) == 2:
            pieces, sep = [pieces[0] + marker, pieces[1]], ""
        if b.additive:
            b.count_joined(pieces, sep)
        found = sep.join(pieces)
    line.filled[marker] = found
    return found


def _fit(
    lines: list[_Line], entities: Sequence[Item], retrieved: int, capped: Sequence[Item], b: Budgeter
) -> tuple[str, list[ContextSource], list[DroppedSource], dict[str, int]]:
    header_cost = {s: b.count(h) + 1 for s, h in enumerate(_HEADERS)}
    chosen: list[_Line] = []
    used = 0
    open_sections: set[int] = set()
    for ln in sorted(lines, key=lambda ln: ln.priority):
        ln.cost = b.count(_filled(ln, "10", b)) + 1
        cost = ln.cost + (0 if ln.section in open_sections else header_cost[ln.section])
        if used + cost <= b.budget:
            chosen.append(ln)
            used += cost
            open_sections.add(ln.section)
    chosen.sort(key=lambda ln: (ln.section, ln.priority))
    while True:
        rows, cited = _render(chosen, b)
        if not chosen or b.count_joined(rows, "\n") <= b.budget:
            break
        weakest = max(chosen, key=lambda ln: ln.priority)
        chosen.remove(weakest)
    text = "\n".join(rows)
    sections: dict[str, int] = {}
    for section, header in enumerate(_HEADERS):
        body = [ln for ln in chosen if ln.section == section]
        if body:
            sections[header[3:].lower().replace(" ", "_")] = b.count_joined(_render(body, b)[0], "\n")
    sources = [
        ContextSource(entities[e].id, entities[e].title, entities[e].score if e < retrieved else 0.0) for e in cited
    ]
    kept = set(cited)
    dropped = [
        DroppedSource(entities[e].id, entities[e].title, entities[e].score, "budget")
        for e in range(retrieved)
        if e not in kept
    ]
    dropped += [DroppedSource(it.id, it.title, it.score, "cap") for it in capped]
    if not chosen:
        return empty_text(b), [], dropped, {}
    return text, sources, dropped, sections
