"""A headless Chromium driven over the Chrome DevTools protocol, for the
viewer's browser tests and benchmark: open a URL, evaluate JavaScript, wait
for a condition, and collect every console error and uncaught exception.
Loopback only: the browser is started with networking features off."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import tempfile
import time
import urllib.request
from typing import Any

import websocket

CANDIDATES = ("chromium", "chromium-browser", "google-chrome")
MISSING = (
    "Chromium is needed by the viewer's browser tests and was not found (tried {names}, and $CHROMIUM). "
    "Install it with `apt-get install -y chromium` (scripts/test.sh does so when apt is usable)."
)


def find_chromium() -> str | None:
    if os.environ.get("CHROMIUM"):
        return os.environ["CHROMIUM"]
    return next((path for name in CANDIDATES if (path := shutil.which(name))), None)


class Browser:
    """One headless browser with one page. Use as a context manager."""

    def __init__(self, executable: str, timeout: float = 30.0) -> None:
        self.timeout = timeout
        self.profile = tempfile.mkdtemp(prefix="fembench-chromium-")
        self.process = subprocess.Popen(
            [
                executable,
                "--headless=new",
                "--no-sandbox",  # root in containers; the pages are our own static files
                "--disable-gpu",
                "--no-first-run",
                "--no-default-browser-check",
                "--disable-background-networking",
                "--disable-component-update",
                "--disable-sync",
                "--allow-file-access-from-files",
                f"--user-data-dir={self.profile}",
                "--remote-debugging-port=0",
                "about:blank",
            ],
            stdout=subprocess.DEVNULL,
            stderr=subprocess.PIPE,
            text=True,
        )
        self.port = self._devtools_port()
        self.ws = websocket.create_connection(self._page_socket(), timeout=timeout, suppress_origin=True)
        self._next_id = 0
        self.events: list[dict[str, Any]] = []
        for domain in ("Runtime", "Log", "Page"):
            self.call(f"{domain}.enable")

    def _devtools_port(self) -> int:
        assert self.process.stderr is not None
        deadline = time.monotonic() + self.timeout
        while time.monotonic() < deadline:
            line = self.process.stderr.readline()
            if "DevTools listening on ws://" in line:
                return int(line.split("ws://", 1)[1].split("/", 1)[0].rsplit(":", 1)[1])
            if not line and self.process.poll() is not None:
                break
        self.close()
        raise RuntimeError("Chromium did not start its DevTools endpoint")

    def _page_socket(self) -> str:
        with urllib.request.urlopen(f"http://127.0.0.1:{self.port}/json/list", timeout=self.timeout) as r:
            targets = json.loads(r.read())
        return str(next(t["webSocketDebuggerUrl"] for t in targets if t["type"] == "page"))

    def call(self, method: str, **params: Any) -> dict[str, Any]:
        self._next_id += 1
        self.ws.send(json.dumps({"id": self._next_id, "method": method, "params": params}))
        while True:
            message = json.loads(self.ws.recv())
            if message.get("id") == self._next_id:
                if "error" in message:
                    raise RuntimeError(f"{method}: {message['error']}")
                return dict(message.get("result", {}))
            self.events.append(message)

    def evaluate(self, expression: str) -> Any:
        result = self.call("Runtime.evaluate", expression=expression, returnByValue=True, awaitPromise=True)
        if "exceptionDetails" in result:
            raise RuntimeError(f"{expression}: {result['exceptionDetails'].get('text')}")
        return result["result"].get("value")

    def wait_for(self, expression: str, timeout: float | None = None) -> Any:
        """Poll `expression` until it is truthy; its value."""
        deadline = time.monotonic() + (timeout or self.timeout)
        while time.monotonic() < deadline:
            value = self.evaluate(expression)
            if value:
                return value
            time.sleep(0.02)
        raise TimeoutError(f"never true: {expression}")

    def open(self, url: str) -> None:
        self.call("Page.navigate", url=url)

    def errors(self) -> list[str]:
        """Console errors, uncaught exceptions and failed loads seen so far."""
        out = []
        for e in self.events:
            method, params = e.get("method"), e.get("params", {})
            if method == "Runtime.exceptionThrown":
                details = params["exceptionDetails"]
                out.append(str(details.get("exception", {}).get("description") or details.get("text")))
            elif method == "Runtime.consoleAPICalled" and params.get("type") in ("error", "assert"):
                out.append(" ".join(str(a.get("value", a.get("description"))) for a in params.get("args", [])))
            elif method == "Log.entryAdded" and params["entry"]["level"] == "error":
                out.append(f"{params['entry'].get('url', '')}: {params['entry']['text']}")
        return out

    def close(self) -> None:
        if getattr(self, "ws", None) is not None:
            self.ws.close()
        self.process.terminate()
        try:
            self.process.wait(timeout=10)
        except subprocess.TimeoutExpired:
            self.process.kill()
            self.process.wait()
        shutil.rmtree(self.profile, ignore_errors=True)

    def __enter__(self) -> Browser:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()
