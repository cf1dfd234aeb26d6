"""An OpenAI-compatible chat server on a loopback port, standing in for a
remote provider in tests and benchmarks (only the remote model is faked: the
client, litellm and HTTP are real)."""

from __future__ import annotations

import json
import threading
import time
from collections.abc import Callable
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any


class _Server(ThreadingHTTPServer):
    request_queue_size = 128  # connections opened at once wait in the kernel, not refused
    daemon_threads = True


class StandIn:
    """An OpenAI-compatible chat server on a loopback port. `refuse` makes it
    answer 401 (echoing the key it was sent, as careless providers do),
    `too_long` 400 to the prompts holding that text; `requests` holds the
    Authorization header of every request received, `bodies` every request."""

    def __init__(
        self,
        reply: str | Callable[[list[dict[str, Any]]], str],
        refuse: bool = False,
        too_long: str | None = None,
        latency: float = 0.0,
    ) -> None:
        self.reply = reply  # the answer, or a function of the request's messages giving it
        self.latency = latency  # seconds before each answer
        self.in_flight = 0
        self.max_in_flight = 0
        self._busy_seconds = 0.0  # integral of requests in flight over time
        self._since = time.perf_counter()
        self._lock = threading.Lock()
        self.refuse = refuse
        self.too_long = too_long  # a prompt holding this text exceeds the context window
        self.requests: list[str] = []
        self.bodies: list[dict[str, Any]] = []
        stand_in = self

        class Handler(BaseHTTPRequestHandler):
            def do_POST(self) -> None:  # noqa: N802 - http.server's name
                body = json.loads(self.rfile.read(int(self.headers.get("Content-Length", 0))) or b"{}")
                key = self.headers.get("Authorization", "")
                stand_in.requests.append(key)
                stand_in.bodies.append(body)
                stand_in._enter()
                try:
                    time.sleep(stand_in.latency)
                    self._answer(body, key)
                finally:
                    stand_in._leave()

            def _answer(self, body: dict[str, Any], key: str) -> None:
                if stand_in.refuse:
                    self._send(
                        401,
                        {
                            "error": {
                                "message": f"Incorrect API key provided: {key.removeprefix('Bearer ')}",
                                "type": "invalid_request_error",
                                "code": "invalid_api_key",
                            }
                        },
                    )
                    return
                if stand_in.too_long and stand_in.too_long in json.dumps(body.get("messages")):
                    self._send(
                        400,
                        {
                            "error": {
                                "message": "This model's maximum context length is 4096 tokens",
                                "type": "invalid_request_error",
                                "code": "context_length_exceeded",
                            }
                        },
                    )
                    return
                self._send(
                    200,
                    {
                        "id": "chatcmpl-standin",
                        "object": "chat.completion",
                        "created": 0,
                        "model": body.get("model"),
                        "choices": [
                            {
                                "index": 0,
                                "finish_reason": "stop",
                                "message": {"role": "assistant", "content": stand_in.answer(body)},
                            }
                        ],
                        "usage": {"prompt_tokens": 11, "completion_tokens": 7, "total_tokens": 18},
                    },
                )

            def _send(self, status: int, payload: dict[str, Any]) -> None:
                data = json.dumps(payload).encode()
                self.send_response(status)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(data)))
                self.end_headers()
                self.wfile.write(data)

            def log_message(self, *args: Any) -> None:
                pass

        self.server = _Server(("127.0.0.1", 0), Handler)
        self.thread = threading.Thread(target=self.server.serve_forever, daemon=True)
        self.thread.start()

    def answer(self, body: dict[str, Any]) -> str:
        return self.reply(body.get("messages") or []) if callable(self.reply) else self.reply

    def _account(self) -> None:
        now = time.perf_counter()
        self._busy_seconds += self.in_flight * (now - self._since)
        self._since = now

    def _enter(self) -> None:
        with self._lock:
            self._account()
            self.in_flight += 1
            self.max_in_flight = max(self.max_in_flight, self.in_flight)

    def _leave(self) -> None:
        with self._lock:
            self._account()
            self.in_flight -= 1

    def busy_seconds(self) -> float:
        """Requests in flight, integrated over time: divided by a wall time, the
        mean number in flight."""
        with self._lock:
            self._account()
            return self._busy_seconds

    @property
    def api_base(self) -> str:
        return f"http://127.0.0.1:{self.server.server_address[1]}/v1"

    def close(self) -> None:
        self.server.shutdown()
        self.server.server_close()
