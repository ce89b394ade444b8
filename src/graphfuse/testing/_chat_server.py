"""A local stand-in for OpenAI's chat-completions API (``POST /v1/chat/completions``) on 127.0.0.1.

For tests, benchmarks and documentation: generators and judges run against it with the real
``openai`` SDK (``base_url=server.url``), so nothing reaches the internet.
"""

from __future__ import annotations

import json
import re
import threading
import time
from collections.abc import Callable, Mapping
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

__all__ = ["ChatCompletionsServer", "PlanStep"]

PlanStep = tuple[Any, ...]
"""``("error", status, headers)``, ``("stall", seconds)``, ``("reply", text)`` or ``("usage", False)``."""

Responder = Callable[[list[dict[str, str]], dict[str, Any]], str]

_WORDS = re.compile(r"\w+|[^\w\s]")
_PUNCT = re.compile(r"[^\w\s]")


def _normal(text: str) -> str:
    return " ".join(re.sub(r"\b(a|an|the)\b", " ", _PUNCT.sub("", text.lower())).split())


def _field(text: str, label: str) -> str:
    match = re.search(rf"^{label}: (.*?)(?:\n\n|\Z)", text, re.S | re.M)
    return match.group(1).strip() if match else ""


class ChatCompletionsServer:
    """Answers chat completions on a free loopback port, in a background thread.

    ::

        with ChatCompletionsServer(answers={"capital of France": "Paris"}) as server:
            generator = OpenAIGenerator("gpt-4o-mini", base_url=server.url, api_key=server.api_key)

    - ``answers``: a reply per question: the first key found in the last user message wins;
      otherwise ``default_answer``.
    - A request that asks for a verdict (the judge's ``Ground truth:``/``Answer to grade:``
      message) gets a JSON verdict: 9s when the normalised answer contains the ground truth,
      2s otherwise.
    - ``responder(messages, body) -> str`` replaces both rules.
    - ``delay``: seconds to wait before each reply (a model's latency).
    - ``plan``: steps consumed one per request, in arrival order, before the rules above:
      ``("error", status, headers)`` answers an HTTP error, ``("stall", seconds)`` waits that
      long first (:meth:`close` cuts it short), ``("reply", text)`` answers ``text`` verbatim,
      ``("usage", False)`` leaves the usage field out of the next reply.
    - ``usage``: report token usage (words and punctuation counted) in every reply.
    - ``slots``: answer llama.cpp's ``GET /props`` (``total_slots``) and ``GET /slots`` with
      this many slots; without it, GET requests get 404 as from a server that has no such routes.

    ``received`` keeps every request body; ``api_key`` is the only key accepted (others get 401).
    """

    api_key = "sk-local-test"

    def __init__(
        self,
        *,
        answers: Mapping[str, str] | None = None,
        default_answer: str = "unknown",
        responder: Responder | None = None,
        delay: float = 0.0,
        usage: bool = True,
        slots: int | None = None,
    ) -> None:
        self.answers = dict(answers or {})
        self.default_answer = default_answer
        self.responder = responder
        self.delay = delay
        self.usage = usage
        self.slots = slots
        self.plan: list[PlanStep] = []
        self.received: list[dict[str, Any]] = []
        self._lock = threading.Lock()
        self._stop = threading.Event()
        self._http: ThreadingHTTPServer | None = None
        self._thread: threading.Thread | None = None

    @property
    def url(self) -> str:
        """The API root to give an OpenAI client as ``base_url`` (``http://127.0.0.1:PORT/v1``)."""
        if self._http is None:
            raise RuntimeError("the server is not started: use it as a context manager or call start()")
        host, port = self._http.server_address[:2]
        return f"http://{host!s}:{port}/v1"

    def start(self) -> ChatCompletionsServer:
        """Start serving (idempotent)."""
        if self._http is None:
            self._http = ThreadingHTTPServer(("127.0.0.1", 0), _handler(self))
            self._http.daemon_threads = True
            self._thread = threading.Thread(target=self._http.serve_forever, name="fake-openai-chat", daemon=True)
            self._thread.start()
        return self

    def close(self) -> None:
        """Stop serving; stalled requests are released."""
        self._stop.set()
        if self._http is not None:
            self._http.shutdown()
            self._http.server_close()
            self._http = None

    def __enter__(self) -> ChatCompletionsServer:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.close()

    def reply(self, messages: list[dict[str, str]], body: dict[str, Any]) -> str:
        """The reply the rules give (``responder``, verdicts, ``answers``)."""
        if self.responder is not None:
            return self.responder(messages, body)
        last = next((m["content"] for m in reversed(messages) if m.get("role") == "user"), "")
        if "Answer to grade:" in last:
            truth, answer = _normal(_field(last, "Ground truth")), _normal(_field(last, "Answer to grade"))
            good = bool(truth) and f" {truth} " in f" {answer} "
            grade = 9 if good else 2
            verdict: dict[str, Any] = {
                k: grade for k in ("score", "correctness", "completeness", "clarity", "relevance")
            }
            verdict["reasoning"] = "matches the ground truth" if good else "does not match the ground truth"
            return json.dumps(verdict)
        question = last.rpartition("Question: ")[2] if "Question: " in last else last
        return next((a for key, a in self.answers.items() if key in question), self.default_answer)

    def _next_step(self) -> PlanStep | None:
        with self._lock:
            return self.plan.pop(0) if self.plan else None


def _count(text: str) -> int:
    return len(_WORDS.findall(text))


def _handler(server: ChatCompletionsServer) -> type[BaseHTTPRequestHandler]:
    class Handler(BaseHTTPRequestHandler):
        protocol_version = "HTTP/1.1"

        def log_message(self, format: str, *args: Any) -> None:  # quiet
            return

        def _send(self, status: int, payload: Any, headers: Mapping[str, str] | None = None) -> None:
            blob = json.dumps(payload).encode()
            self.send_response(status)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(blob)))
            for key, value in (headers or {}).items():
                self.send_header(key, value)
            self.end_headers()
            self.wfile.write(blob)

        def do_GET(self) -> None:
            path, slots = self.path.rstrip("/"), server.slots
            if slots is not None and path == "/props":
                self._send(200, {"total_slots": slots, "model_path": "local.gguf"})
            elif slots is not None and path == "/slots":
                self._send(200, [{"id": i, "is_processing": False} for i in range(slots)])
            else:
                self._send(404, {"error": {"message": f"no route {self.path}", "type": "not_found_error"}})

        def do_POST(self) -> None:
            length = int(self.headers.get("Content-Length") or 0)
            body: dict[str, Any] = json.loads(self.rfile.read(length) or b"{}")
            with server._lock:
                server.received.append(body)
            if not self.path.rstrip("/").endswith("/chat/completions"):
                self._send(404, {"error": {"message": f"no route {self.path}", "type": "invalid_request_error"}})
                return
            if self.headers.get("Authorization") != f"Bearer {server.api_key}":
                problem = {"message": "Incorrect API key provided", "type": "invalid_request_error"}
                self._send(401, {"error": {**problem, "code": "invalid_api_key"}})
                return
            usage, text = server.usage, None
            step = server._next_step()
            if step is not None:
                if step[0] == "error":
                    problem = {"message": f"planned {step[1]}", "type": "server_error", "code": "planned"}
                    self._send(step[1], {"error": problem}, step[2] if len(step) > 2 else None)
                    return
                if step[0] == "stall":
                    server._stop.wait(step[1])
                elif step[0] == "reply":
                    text = step[1]
                elif step[0] == "usage":
                    usage = bool(step[1])
            if server.delay:
                server._stop.wait(server.delay)
            messages = body.get("messages") or []
            if text is None:
                text = server.reply(messages, body)
            payload: dict[str, Any] = {
                "id": f"chatcmpl-{len(server.received)}",
                "object": "chat.completion",
                "created": int(time.time()),
                "model": body.get("model", "unknown"),
                "choices": [
                    {
                        "index": 0,
                        "message": {"role": "assistant", "content": text},
                        "finish_reason": "stop",
                        "logprobs": None,
                    }
                ],
            }
            if usage:
                prompt = sum(_count(str(m.get("content", ""))) + 4 for m in messages) + 3
                completion = _count(text)
                payload["usage"] = {
                    "prompt_tokens": prompt,
                    "completion_tokens": completion,
                    "total_tokens": prompt + completion,
                }
            self._send(200, payload)

    return Handler
