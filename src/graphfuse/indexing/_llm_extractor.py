"""An entity extractor backed by a user-supplied LLM (LlamaIndex LLM or LangChain chat model)."""

from __future__ import annotations

import json
import re
from typing import Any

from .._core._errors import InvalidInput
from ._extractors import Mention, normalize

__all__ = ["LLMEntityExtractor"]

_PROMPT = (
    "List the named entities (people, places, organisations, works, events) mentioned in the text below. "
    'Answer with a JSON array of strings only, e.g. ["Ada Lovelace", "London"].\n\nText:\n{text}'
)
_ARRAY = re.compile(r"\[.*\]", re.DOTALL)


class LLMEntityExtractor:
    """Ask an LLM for the entities of a passage (co-mention entities; no targets).

    ``llm`` is a LlamaIndex ``LLM`` (anything with ``complete(prompt)`` returning an object with
    ``.text``) or a LangChain chat model / runnable (``invoke(prompt)`` returning a message with
    ``.content`` or a string). Neither framework is imported by GraphFuse for this: you pass the
    object. The answer must contain a JSON array of strings; anything else raises
    :class:`~graphfuse.InvalidInput` naming the reply. ``prompt`` must contain ``{text}``.
    """

    def __init__(self, llm: Any, *, prompt: str = _PROMPT) -> None:
        if not (callable(getattr(llm, "complete", None)) or callable(getattr(llm, "invoke", None))):
            raise InvalidInput(
                f"llm must be a LlamaIndex LLM (complete) or a LangChain chat model (invoke), got {llm!r}"
            )
        if "{text}" not in prompt:
            raise InvalidInput("prompt must contain the placeholder {text}")
        self._llm = llm
        self._prompt = prompt

    def __repr__(self) -> str:
        return f"LLMEntityExtractor({type(self._llm).__name__})"

    def _ask(self, prompt: str) -> str:
        if callable(getattr(self._llm, "complete", None)):
            return str(self._llm.complete(prompt).text)
        reply = self._llm.invoke(prompt)
        content = getattr(reply, "content", reply)
        return content if isinstance(content, str) else json.dumps(content)

    def extract(self, text: str) -> list[Mention]:
        reply = self._ask(self._prompt.replace("{text}", text))
        match = _ARRAY.search(reply)
        try:
            names = json.loads(match.group()) if match else None
        except json.JSONDecodeError:
            names = None
        if not isinstance(names, list) or not all(isinstance(n, str) for n in names):
            raise InvalidInput(f"LLM reply is not a JSON array of strings: {reply[:200]!r}")
        lowered = normalize(text)
        out: list[Mention] = []
        seen: set[str] = set()
        for name in names:
            key = " ".join(normalize(name).split())
            if not key or key in seen:
                continue
            seen.add(key)
            pos = lowered.find(normalize(name))
            out.append(Mention(key, pos, pos + len(name) if pos >= 0 else -1))
        return out
