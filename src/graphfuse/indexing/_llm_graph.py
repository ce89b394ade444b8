"""An LLM graph extractor: typed entities with descriptions and typed, scored relations per passage.

Any :class:`~graphfuse.compare.Generator` answers (OpenAI, a local OpenAI-compatible server, a
test double). Replies are JSON checked by a pydantic model; a malformed one is asked again once,
then the passage is indexed without an LLM graph and counted (cached so: it would fail again).
Replies are cached by passage text and extractor identity (model, prompt version, types), so a
re-index asks the model only for changed passages. The :class:`~graphfuse.indexing.Indexer`
makes entity nodes (``entity_type``, ``description``), ``MENTIONED_IN`` edges weighted by
frequency and ``RELATED_TO`` edges (``relation_type``, ``confidence``, ``context``).
"""

from __future__ import annotations

import asyncio
import json
import re
import threading
from collections import Counter, defaultdict
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

from .._core._errors import InvalidInput
from .._core._protocols import Generator
from .._core._sync import run_sync
from .._core._types import RELATED_TO, Mention
from ._llm_graph_cache import ExtractionCache, extraction_key
from ._text_entities import entity_key

__all__ = [
    "DEFAULT_ENTITY_TYPES",
    "DEFAULT_RELATION_TYPES",
    "LLM_GRAPH_CACHE",
    "PROMPT_VERSION",
    "RELATED_TO",
    "ExtractedEntity",
    "ExtractedRelation",
    "ExtractionStats",
    "LLMGraphExtractor",
    "TextGraph",
    "TypedFacts",
    "typed_facts",
]

DEFAULT_ENTITY_TYPES: tuple[str, ...] = (
    "PERSON",
    "ORGANIZATION",
    "LOCATION",
    "EVENT",
    "WORK",
    "PRODUCT",
    "CONCEPT",
    "OTHER",
)
"""Entity types asked for by default (``CONCEPT``: the design's high-level topics)."""
DEFAULT_RELATION_TYPES: tuple[str, ...] = (
    "PART_OF",
    "LOCATED_IN",
    "MEMBER_OF",
    "WORKS_FOR",
    "CREATED_BY",
    "FOUNDED_BY",
    "BORN_IN",
    "FAMILY_OF",
    "USES",
    "RELATED_TO",
)
"""Relation types asked for by default (``RELATED_TO``: any other relation)."""
PROMPT_VERSION = "1"
"""Changes when the prompt or the reply's schema does: part of the cache key."""

LLM_GRAPH_CACHE = "llm-graph-cache.sqlite"
"""The file in a store directory that keeps the ``llm`` extractor's replies across runs
(``graphfuse index`` and ``graphfuse eval --store`` with ``--entity-extractor llm``)."""

_TYPE = re.compile(r"^[A-Z][A-Z0-9_]{0,31}$")
_GAP = r"[\s\-]+"  # between a name's words in the text: spaces or a hyphen
_FENCE = re.compile(r"^\s*```(?:json)?\s*|\s*```\s*$")
_SYSTEM = (
    "You extract a knowledge graph from a passage. Answer with one JSON object and nothing else:\n"
    '{"entities": [{"name": str, "type": str, "description": str}], '
    '"relations": [{"source": str, "target": str, "type": str, "confidence": number, "context": str}]}\n'
    "- entities: the named things the passage is about, each once, named as the passage names them; "
    "type one of {entity_types}; description: what the passage says it is, one short sentence.\n"
    "- relations: facts the passage states between two of those entities (source and target are entity "
    "names); type one of {relation_types}; confidence between 0 and 1; context: the passage's words "
    "that state it (at most {context_chars} characters).\n"
    "Name each entity once."
)


@dataclass(frozen=True, slots=True)
class ExtractedEntity:
    """An entity of one passage: its name as written, its type, a description (may be empty)."""

    name: str
    type: str
    description: str = ""


@dataclass(frozen=True, slots=True)
class ExtractedRelation:
    """A relation of one passage between two of its entities (by name), typed and scored."""

    source: str
    target: str
    type: str
    confidence: float
    context: str = ""


@dataclass(frozen=True, slots=True)
class TextGraph:
    """What the model found in one passage (empty when its replies were malformed twice)."""

    entities: tuple[ExtractedEntity, ...] = ()
    relations: tuple[ExtractedRelation, ...] = ()


@dataclass
class ExtractionStats:
    """Counts of an extractor's work so far: model ``calls`` (retries included), passages answered
    from the ``cached`` replies, ``failed`` passages (malformed twice), ``retries``, items
    ``dropped`` (a type outside the lists, an entity not in the text, a relation to no entity),
    and the tokens of the calls."""

    calls: int = 0
    cached: int = 0
    failed: int = 0
    retries: int = 0
    dropped: int = 0
    prompt_tokens: int = 0
    completion_tokens: int = 0

    def summary(self, model: str) -> str:
        """One line for a command's output: what the extractor of ``model`` did."""
        return (
            f"llm graph ({model}): {self.calls} model calls ({self.retries} retried), {self.cached} passages "
            f"from the cache, {self.failed} without an LLM graph (malformed replies), {self.dropped} items "
            f"dropped; {self.prompt_tokens} prompt + {self.completion_tokens} completion tokens"
        )


def _check_types(types: Sequence[str], what: str) -> tuple[str, ...]:
    if isinstance(types, str) or not isinstance(types, Sequence) or not types:
        raise InvalidInput(f"{what} must be a non-empty list of names, got {types!r}")
    out = []
    for t in types:
        if not isinstance(t, str) or not _TYPE.match(t):
            raise InvalidInput(f"{what}: {t!r} is not a type name (upper-case letters, digits, '_', at most 32)")
        out.append(t)
    if len(set(out)) != len(out):
        raise InvalidInput(f"{what} names a type twice: {out}")
    return tuple(out)


def _positive_int(value: object, what: str) -> int:
    if isinstance(value, bool) or not isinstance(value, int) or value < 1:
        raise InvalidInput(f"{what} must be a positive integer, got {value!r}")
    return value


def _type_name(raw: str) -> str:
    return re.sub(r"[\s\-]+", "_", raw.strip()).upper()


def _occurrences(name: str, text: str) -> list[tuple[int, int]]:
    words = [re.escape(w) for w in name.split()]
    if not words:
        return []
    pattern = re.compile(r"(?<!\w)" + _GAP.join(words) + r"(?!\w)", re.IGNORECASE)
    return [(m.start(), m.end()) for m in pattern.finditer(text)]


class LLMGraphExtractor:
    """Typed entities and relations of each passage, asked of an LLM (``generator``).

    ``generator`` is any :class:`~graphfuse.compare.Generator` (``agenerate(messages,
    max_tokens=)``; with ``supports_json_schema`` the reply's JSON schema is sent too, which
    llama.cpp and OpenAI enforce). ``entity_types``/``relation_types`` are the types asked for
    (an item of another type is dropped); ``context_chars`` bounds a relation's context snippet,
    ``description_chars`` an entity's description, ``max_chars`` the passage text sent and
    ``max_entities``/``max_relations`` the lists asked for (a schema-enforcing server stops there).
    ``grounded`` (default) drops an entity whose name the passage does not contain (a small
    model's inventions). ``cache`` is an SQLite file of replies (``graphfuse index`` keeps it in the
    store directory); without one, replies are remembered for this object's life only.
    ``concurrency``: requests in flight (default: what the generator suggests, else 4).

    As an :class:`~graphfuse.indexing.EntityExtractor`, :meth:`extract` returns one mention per
    occurrence of each entity; the :class:`~graphfuse.indexing.Indexer` asks for the passages of
    a call at once (:meth:`prefetch`) and reads types, descriptions and relations back with
    :func:`typed_facts`. Errors of the generator (connection, rate limit) propagate; malformed
    replies do not. :attr:`stats` counts calls, cache hits, failures and tokens;
    :attr:`identity` (model, prompt version, types, limits) is part of every cache key and of
    the indexer's configuration digest (a new identity re-indexes every document).
    """

    def __init__(
        self,
        generator: Generator,
        *,
        entity_types: Sequence[str] = DEFAULT_ENTITY_TYPES,
        relation_types: Sequence[str] = DEFAULT_RELATION_TYPES,
        cache: str | Path | None = None,
        max_tokens: int = 512,
        max_chars: int = 4000,
        context_chars: int = 160,
        description_chars: int = 200,
        max_entities: int = 12,
        max_relations: int = 12,
        grounded: bool = True,
        concurrency: int | None = None,
    ) -> None:
        if not callable(getattr(generator, "agenerate", None)):
            raise InvalidInput(f"generator must be a graphfuse Generator (agenerate), got {generator!r}")
        self._generator = generator
        self.entity_types = _check_types(entity_types, "entity_types")
        self.relation_types = _check_types(relation_types, "relation_types")
        self._max_tokens = _positive_int(max_tokens, "max_tokens")
        self._max_chars = _positive_int(max_chars, "max_chars")
        self._context_chars = _positive_int(context_chars, "context_chars")
        self._description_chars = _positive_int(description_chars, "description_chars")
        self._max_entities = _positive_int(max_entities, "max_entities")
        self._max_relations = _positive_int(max_relations, "max_relations")
        self._grounded = bool(grounded)
        self._concurrency = None if concurrency is None else _positive_int(concurrency, "concurrency")
        if cache is not None and (not isinstance(cache, (str, Path)) or not str(cache)):
            raise InvalidInput(f"cache must be a file path, got {cache!r}")
        self._cache_path = None if cache is None else Path(cache)
        self._cache: ExtractionCache | None = None  # opened on first use
        self._memo: dict[str, TextGraph] = {}
        self._lock = threading.Lock()
        self.stats = ExtractionStats()
        model = getattr(generator, "model", None)
        self.model = model if isinstance(model, str) and model else type(generator).__name__
        self.identity = json.dumps(
            {
                "extractor": "llm-graph",
                "model": self.model,
                "prompt": PROMPT_VERSION,
                "entity_types": self.entity_types,
                "relation_types": self.relation_types,
                "limits": [
                    self._max_tokens,
                    self._max_chars,
                    self._context_chars,
                    self._description_chars,
                    self._max_entities,
                    self._max_relations,
                ],
                "grounded": self._grounded,
            },
            sort_keys=True,
        )

    def __repr__(self) -> str:
        cache = f", cache={str(self._cache_path)!r}" if self._cache_path is not None else ""
        return f"LLMGraphExtractor(model={self.model!r}{cache})"

    # -- the prompt and the reply ---------------------------------------------------------------

    def messages(self, text: str) -> list[dict[str, str]]:
        """The chat messages sent for ``text`` (a system message with the schema and types, the passage)."""
        system = (
            _SYSTEM.replace("{entity_types}", ", ".join(self.entity_types))
            .replace("{relation_types}", ", ".join(self.relation_types))
            .replace("{context_chars}", str(self._context_chars))
        )
        return [
            {"role": "system", "content": system},
            {"role": "user", "content": f"Passage:\n{text[: self._max_chars]}"},
        ]

    def json_schema(self) -> dict[str, Any]:
        """The reply's JSON schema (``{"name", "schema", "strict"}``), sent to generators that enforce one."""
        from ._llm_reply import NAME_CHARS  # the models that check a reply hold the limit

        entity = {
            "type": "object",
            "properties": {
                "name": {"type": "string", "maxLength": NAME_CHARS},
                "type": {"type": "string", "enum": list(self.entity_types)},
                "description": {"type": "string", "maxLength": self._description_chars},
            },
            "required": ["name", "type", "description"],
            "additionalProperties": False,
        }
        relation = {
            "type": "object",
            "properties": {
                "source": {"type": "string", "maxLength": NAME_CHARS},
                "target": {"type": "string", "maxLength": NAME_CHARS},
                "type": {"type": "string", "enum": list(self.relation_types)},
                "confidence": {"type": "number", "minimum": 0, "maximum": 1},
                "context": {"type": "string", "maxLength": self._context_chars},
            },
            "required": ["source", "target", "type", "confidence", "context"],
            "additionalProperties": False,
        }
        schema = {
            "type": "object",
            "properties": {
                "entities": {"type": "array", "items": entity, "maxItems": self._max_entities},
                "relations": {"type": "array", "items": relation, "maxItems": self._max_relations},
            },
            "required": ["entities", "relations"],
            "additionalProperties": False,
        }
        return {"name": "passage_graph", "schema": schema, "strict": True}

    def parse(self, reply: str, text: str) -> tuple[TextGraph, int]:
        """The graph of ``reply`` for the passage ``text`` and how many items were dropped.

        Raises :class:`~graphfuse.InvalidInput` when the reply is not one JSON object matching
        the schema (names, types, a confidence in [0, 1])."""
        body = _FENCE.sub("", reply.strip())
        start, end = body.find("{"), body.rfind("}")
        if start < 0 or end < start:
            raise InvalidInput(f"the model's reply holds no JSON object: {reply[:200]!r}")
        from pydantic import ValidationError  # loaded with the first reply, not with graphfuse.indexing

        from ._llm_reply import Reply

        try:
            parsed = Reply.model_validate_json(body[start : end + 1])
        except ValidationError as error:
            problems = "; ".join(f"{'.'.join(map(str, e['loc']))}: {e['msg']}" for e in error.errors()[:3])
            raise InvalidInput(f"the model's reply does not match the schema ({problems}): {reply[:200]!r}") from error
        dropped = 0
        entities: dict[str, ExtractedEntity] = {}
        for e in parsed.entities:
            kind, name = _type_name(e.type), " ".join(e.name.split())
            key = entity_key(name)
            if kind not in self.entity_types or not key or (self._grounded and not _occurrences(name, text)):
                dropped += 1
                continue
            if key not in entities:
                entities[key] = ExtractedEntity(name, kind, _clip(e.description, self._description_chars))
        relations: dict[tuple[str, str, str], ExtractedRelation] = {}
        for r in parsed.relations:
            kind = _type_name(r.type)
            s, t = entity_key(r.source), entity_key(r.target)
            if kind not in self.relation_types or s not in entities or t not in entities or s == t:
                dropped += 1
                continue
            found = ExtractedRelation(
                entities[s].name, entities[t].name, kind, float(r.confidence), _clip(r.context, self._context_chars)
            )
            old = relations.get((s, t, kind))
            if old is None or found.confidence > old.confidence:
                relations[(s, t, kind)] = found
        return TextGraph(tuple(entities.values()), tuple(relations.values())), dropped

    # -- asking -------------------------------------------------------------------------------

    async def _ask(self, text: str) -> tuple[TextGraph | None, int, int]:
        """The graph of ``text`` (``None`` after two malformed replies) and the tokens spent."""
        messages = self.messages(text)
        options: dict[str, Any] = {"max_tokens": self._max_tokens}
        if getattr(self._generator, "supports_json_schema", False):
            options["json_schema"] = self.json_schema()
        prompt_tokens = completion_tokens = 0
        for attempt in range(2):
            generation = await self._generator.agenerate(messages, **options)
            prompt_tokens += generation.prompt_tokens
            completion_tokens += generation.completion_tokens
            with self._lock:
                self.stats.calls += 1
                self.stats.prompt_tokens += generation.prompt_tokens
                self.stats.completion_tokens += generation.completion_tokens
            try:
                graph, dropped = self.parse(generation.text, text)
            except InvalidInput as error:
                if attempt == 0:
                    with self._lock:
                        self.stats.retries += 1
                    messages = [
                        *messages,
                        {"role": "assistant", "content": generation.text[:2000]},
                        {"role": "user", "content": f"That reply was not valid: {error}. Answer with the JSON only."},
                    ]
                continue
            with self._lock:
                self.stats.dropped += dropped
            return graph, prompt_tokens, completion_tokens
        with self._lock:
            self.stats.failed += 1
        return None, prompt_tokens, completion_tokens

    async def _limit(self) -> int:
        if self._concurrency is not None:
            return self._concurrency
        suggest = getattr(self._generator, "asuggest_concurrency", None)
        if callable(suggest):
            n = await suggest()
            if isinstance(n, int) and not isinstance(n, bool) and n >= 1:
                return n
        return 4

    async def aprefetch(self, texts: Iterable[str], *, keep: bool = False) -> None:
        """Extract every text not yet known: from the cache, else asking the model (concurrently).

        Only these texts' graphs stay in memory (the indexer prefetches each call's passages), unless
        ``keep``: then they are added to those already there."""
        texts = list(dict.fromkeys(texts))
        if not keep:
            self._memo = {t: self._memo[t] for t in texts if t in self._memo}
        wanted = [t for t in texts if t not in self._memo]
        if not wanted:
            return
        keys = {t: extraction_key(self.identity, t) for t in wanted}
        if self._cache is None and self._cache_path is not None:
            self._cache = ExtractionCache(self._cache_path)
        held = self._cache.get_many(list(keys.values())) if self._cache is not None else {}
        todo: list[str] = []
        for t in wanted:
            row = held.get(keys[t])
            if row is None:
                todo.append(t)
                continue
            self._memo[t] = _decode(row[0])
            self.stats.cached += 1
        if not todo:
            return
        gate = asyncio.Semaphore(await self._limit())
        rows: list[tuple[str, str, str, int, int]] = []

        async def one(text: str) -> None:
            async with gate:
                graph, pt, ct = await self._ask(text)
            # A failure is cached too: the same model and prompt would fail the same way (temperature 0).
            self._memo[text] = graph or TextGraph()
            blob = _encode(graph) if graph is not None else _FAILED
            rows.append((keys[text], self.identity, blob, pt, ct))

        try:
            await asyncio.gather(*(one(t) for t in todo))
        finally:
            # What was answered is kept even when another request failed.
            if self._cache is not None and rows:
                self._cache.put_many(rows)

    def prefetch(self, texts: Iterable[str]) -> None:
        """Sync form of :meth:`aprefetch` (the indexer calls it from its planning thread)."""
        run_sync(self.aprefetch(list(texts)))

    def graph(self, text: str) -> TextGraph:
        """The graph of ``text`` (asked for now unless prefetched or cached)."""
        found = self._memo.get(text)
        if found is None:
            run_sync(self.aprefetch([text], keep=True))
            found = self._memo[text]
        return found

    def extract(self, text: str) -> list[Mention]:
        """One mention per occurrence of each entity the model found in ``text`` (at least one)."""
        out: list[Mention] = []
        for e in self.graph(text).entities:
            key = entity_key(e.name)
            spans = _occurrences(e.name, text) or [(-1, -1)]
            out.extend(Mention(key, s, t) for s, t in spans)
        out.sort(key=lambda m: m.start)
        return out

    def forget(self) -> None:
        """Drop the replies remembered in memory (the cache file keeps them)."""
        self._memo.clear()

    def close(self) -> None:
        """Close the cache file (idempotent)."""
        if self._cache is not None:
            self._cache.close()
            self._cache = None


def _clip(text: str, limit: int) -> str:
    text = " ".join(text.split())
    return text if len(text) <= limit else text[: limit - 1].rstrip() + "\u2026"


_FAILED = json.dumps({"entities": [], "relations": [], "failed": True})


def _encode(graph: TextGraph) -> str:
    return json.dumps(asdict(graph), sort_keys=True)


def _decode(blob: str) -> TextGraph:
    data = json.loads(blob)
    return TextGraph(
        tuple(ExtractedEntity(**e) for e in data.get("entities", ())),
        tuple(ExtractedRelation(**r) for r in data.get("relations", ())),
    )


@dataclass
class TypedFacts:
    """The typed graph of one index call, merged over its passages by entity key.

    ``entities``: ``{key: {"entity_type", "description"}}`` (the most frequent type, the first
    description); ``relations``: ``{(source key, target key): (weight, metadata, units)}``, the
    most confident typed relation of each ordered pair, ``metadata`` its ``relation_type``,
    ``confidence``, ``context`` and ``units`` the passages stating it.
    """

    entities: dict[str, dict[str, Any]] = field(default_factory=dict)
    relations: dict[tuple[str, str], tuple[float, dict[str, Any], set[str]]] = field(default_factory=dict)


# A relation's weight is its confidence, at least this (a stored weight must be positive).
_MIN_WEIGHT = 0.01


def typed_facts(
    extractors: Iterable[object], units: Iterable[tuple[str, str]], canonical: Mapping[str, str]
) -> TypedFacts:
    """The types, descriptions and relations the :class:`LLMGraphExtractor` among ``extractors``
    found in ``units`` (``(unit id, text)``), entity keys mapped through ``canonical`` (the
    indexer's merged name variants). Empty without such an extractor."""
    facts = TypedFacts()
    llm = [ex for ex in extractors if isinstance(ex, LLMGraphExtractor)]
    if not llm:
        return facts
    types: dict[str, Counter[str]] = defaultdict(Counter)
    for unit, text in units:
        for ex in llm:
            graph = ex.graph(text)
            for e in graph.entities:
                key = entity_key(e.name)
                key = canonical.get(key, key)
                types[key][e.type] += 1
                meta = facts.entities.setdefault(key, {})
                if e.description and "description" not in meta:
                    meta["description"] = e.description
            for r in graph.relations:
                s, t = entity_key(r.source), entity_key(r.target)
                s, t = canonical.get(s, s), canonical.get(t, t)
                if s == t:
                    continue
                meta = {"relation_type": r.type, "confidence": r.confidence, "context": r.context}
                old = facts.relations.get((s, t))
                if old is None:
                    facts.relations[(s, t)] = (max(r.confidence, _MIN_WEIGHT), meta, {unit})
                    continue
                old[2].add(unit)
                if r.confidence > old[1]["confidence"]:
                    facts.relations[(s, t)] = (max(r.confidence, _MIN_WEIGHT), meta, old[2])
    for key, counts in types.items():
        facts.entities[key]["entity_type"] = min(counts, key=lambda k: (-counts[k], k))
    return facts
