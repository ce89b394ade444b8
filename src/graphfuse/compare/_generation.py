"""The generator interface: chat messages in, an answer with its token usage out."""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Literal, Protocol, runtime_checkable

from .._errors import InvalidInput

__all__ = ["ContextWindowExceeded", "Generation", "Generator", "UsageSource", "check_messages", "describe_generator"]

UsageSource = Literal["provider", "counted"]
"""Where a generation's token counts come from: the provider's own usage report, or counted locally."""
_ROLES = ("system", "user", "assistant")


@dataclass(frozen=True)
class Generation:
    """One completion: the text, its token usage and how long it took.

    ``usage_source`` says where the token numbers come from: ``"provider"`` (the API reported
    them) or ``"counted"`` (GraphFuse counted them with a tokenizer, because the provider did
    not). ``latency_s`` is the wall time of the call, retries included.
    """

    text: str
    prompt_tokens: int
    completion_tokens: int
    usage_source: UsageSource
    latency_s: float

    def __post_init__(self) -> None:
        if not isinstance(self.text, str):
            raise InvalidInput(f"Generation.text must be a string, got {type(self.text).__name__}")
        for name in ("prompt_tokens", "completion_tokens"):
            value = getattr(self, name)
            if isinstance(value, bool) or not isinstance(value, int) or value < 0:
                raise InvalidInput(f"Generation.{name} must be an int >= 0, got {value!r}")
        if self.usage_source not in ("provider", "counted"):
            raise InvalidInput(f"Generation.usage_source must be 'provider' or 'counted', got {self.usage_source!r}")
        latency = self.latency_s
        if isinstance(latency, bool) or not isinstance(latency, (int, float)) or not math.isfinite(latency):
            raise InvalidInput(f"Generation.latency_s must be a finite number, got {latency!r}")
        if latency < 0:
            raise InvalidInput(f"Generation.latency_s must be >= 0, got {latency!r}")

    def to_dict(self) -> dict[str, Any]:
        """A JSON-ready dict."""
        return {
            "text": self.text,
            "prompt_tokens": self.prompt_tokens,
            "completion_tokens": self.completion_tokens,
            "usage_source": self.usage_source,
            "latency_s": self.latency_s,
        }


@runtime_checkable
class Generator(Protocol):
    """Anything that answers chat messages (``[{"role": ..., "content": ...}, ...]``).

    ``max_tokens`` caps the completion. Optional attributes the comparison harness reads when
    present: ``model`` (a string naming the model, part of every cache key), ``context_window``
    (the model's window in tokens: a prompt that cannot fit is refused before the call) and
    ``supports_json_schema`` (``True`` when ``agenerate`` also takes ``json_schema=`` - a
    JSON schema dict the provider enforces on the answer; the judge uses it).

    Register one with the ``register_generators`` plugin hook (kind ``"generator"``);
    ``graphfuse-openai`` provides ``openai`` (chat completions). Errors follow the GraphFuse
    tree: :class:`~graphfuse.RateLimited`, :class:`~graphfuse.ConnectionFailed`,
    :class:`~graphfuse.AuthenticationFailed`, :class:`~graphfuse.InvalidInput`.
    """

    async def agenerate(self, messages: list[dict[str, str]], *, max_tokens: int | None = None) -> Generation: ...


class ContextWindowExceeded(InvalidInput):
    """A prompt does not fit the model's window: refused before the call, with the numbers.

    ``prompt_tokens`` (counted by ``counter``) plus ``max_tokens`` (the answer reserve) exceed
    ``context_window``.
    """

    def __init__(self, *, prompt_tokens: int, max_tokens: int, context_window: int, counter: str, model: str) -> None:
        super().__init__(
            f"the prompt for model {model!r} is {prompt_tokens} tokens (counted with {counter}) and "
            f"{max_tokens} more are reserved for the answer: {prompt_tokens + max_tokens} > the model's "
            f"context window of {context_window} tokens; lower the context budget or use a larger model"
        )
        self.prompt_tokens = prompt_tokens
        self.max_tokens = max_tokens
        self.context_window = context_window
        self.counter = counter


def check_messages(messages: Sequence[Mapping[str, str]]) -> list[dict[str, str]]:
    """Validate chat messages (``role`` in system/user/assistant, ``content`` a string); a copy."""
    if isinstance(messages, (str, bytes)) or not isinstance(messages, Sequence) or not messages:
        raise InvalidInput("messages must be a non-empty list of {'role', 'content'} dicts")
    out: list[dict[str, str]] = []
    for i, message in enumerate(messages):
        if not isinstance(message, Mapping):
            raise InvalidInput(f"message {i} must be a dict with 'role' and 'content', got {type(message).__name__}")
        role, content = message.get("role"), message.get("content")
        if role not in _ROLES:
            raise InvalidInput(f"message {i}: role must be one of {', '.join(_ROLES)}, got {role!r}")
        if not isinstance(content, str):
            raise InvalidInput(f"message {i}: content must be a string, got {type(content).__name__}")
        out.append({"role": role, "content": content})
    return out


def describe_generator(generator: object) -> str:
    """The generator's ``model`` if it names one, else its class name (used in cache keys and reports)."""
    model = getattr(generator, "model", None)
    if isinstance(model, str) and model:
        return model
    return type(generator).__name__
