"""The generator interface: chat messages in, an answer with its token usage out."""

from __future__ import annotations

from collections.abc import Mapping, Sequence

from .._core._errors import InvalidInput
from .._core._protocols import Generator
from .._core._types import Generation, UsageSource

__all__ = ["ContextWindowExceeded", "Generation", "Generator", "UsageSource", "check_messages", "describe_generator"]

_ROLES = ("system", "user", "assistant")


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
