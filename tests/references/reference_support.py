"""Real parts for the @-reference tests: git repositories, loopback HTTP servers, and a
recorder of every file the process opens (to prove a refused file is never read)."""

from __future__ import annotations

import builtins
import io
import os
import socket
import subprocess
import threading
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

import pytest

GIT_ENV = {
    "GIT_AUTHOR_NAME": "Test",
    "GIT_AUTHOR_EMAIL": "test@example.invalid",
    "GIT_COMMITTER_NAME": "Test",
    "GIT_COMMITTER_EMAIL": "test@example.invalid",
    "GIT_CONFIG_NOSYSTEM": "1",
}


def git(repo: Path, *args: str) -> str:
    """Run git in ``repo`` for the test's own setup (identity from the environment)."""
    env = {**os.environ, **GIT_ENV, "HOME": str(repo.parent)}
    done = subprocess.run(
        ["git", *args], cwd=repo, env=env, capture_output=True, text=True, check=True
    )
    return done.stdout


def make_repo(root: Path) -> Path:
    """A repository with two commits, a staged change and an unstaged change.

    first commit: README.md ("hello"); second: app.py ("print(1)"); staged: app.py becomes
    "print(2)"; unstaged: README.md gains "unstaged line".
    """
    root.mkdir(parents=True, exist_ok=True)
    git(root, "init", "-q", "-b", "main")
    (root / "README.md").write_text("hello\n")
    git(root, "add", "README.md")
    git(root, "commit", "-q", "-m", "first commit")
    (root / "app.py").write_text("print(1)\n")
    git(root, "add", "app.py")
    git(root, "commit", "-q", "-m", "second commit")
    (root / "app.py").write_text("print(2)\n")
    git(root, "add", "app.py")
    (root / "README.md").write_text("hello\nunstaged line\n")
    return root


@dataclass
class Route:
    status: int = 200
    body: bytes = b""
    headers: dict[str, str] = field(default_factory=lambda: {"Content-Type": "text/plain"})


@dataclass
class Seen:
    path: str
    host: str


class WebServer:
    """A threading HTTP server on 127.0.0.1 answering from ``routes`` (path -> Route)."""

    def __init__(self) -> None:
        self.routes: dict[str, Route] = {}
        self.seen: list[Seen] = []
        outer = self

        class Handler(BaseHTTPRequestHandler):
            def do_GET(self) -> None:
                outer.seen.append(Seen(self.path, self.headers.get("Host", "")))
                route = outer.routes.get(self.path.split("?", 1)[0], Route(404, b"missing"))
                self.send_response(route.status)
                for name, value in route.headers.items():
                    self.send_header(name, value)
                self.send_header("Content-Length", str(len(route.body)))
                self.end_headers()
                self.wfile.write(route.body)

            def log_message(self, *args: Any) -> None:
                pass

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.port = self.server.server_address[1]
        self.thread = threading.Thread(
            target=self.server.serve_forever, kwargs={"poll_interval": 0.05}, daemon=True
        )

    def url(self, path: str, host: str = "127.0.0.1") -> str:
        return f"http://{host}:{self.port}{path}"

    def __enter__(self) -> WebServer:
        self.thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self.server.shutdown()
        self.server.server_close()


class SilentServer:
    """Accepts connections on 127.0.0.1 and never answers, until closed."""

    def __init__(self) -> None:
        self.sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
        self.sock.bind(("127.0.0.1", 0))
        self.sock.listen(8)
        self.port = self.sock.getsockname()[1]
        self.closed = threading.Event()
        self.held: list[socket.socket] = []
        self.thread = threading.Thread(target=self._accept, daemon=True)

    def _accept(self) -> None:
        self.sock.settimeout(0.1)
        while not self.closed.is_set():
            try:
                conn, _ = self.sock.accept()
            except OSError:
                continue
            self.held.append(conn)

    def __enter__(self) -> SilentServer:
        self.thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self.closed.set()
        self.thread.join(5)
        for conn in self.held:
            conn.close()
        self.sock.close()


@contextmanager
def recorded_opens() -> Iterator[list[str]]:
    """Every path this process opens (``os.open``, ``open``, ``io.open``) while active."""
    opened: list[str] = []
    real_os_open = os.open
    real_open = builtins.open

    def os_open(path: Any, flags: int, mode: int = 0o777, *, dir_fd: int | None = None) -> int:
        opened.append(os.fsdecode(path) if not isinstance(path, int) else f"fd:{path}")
        return real_os_open(path, flags, mode, dir_fd=dir_fd)

    def py_open(file: Any, *args: Any, **kwargs: Any) -> Any:
        if not isinstance(file, int):
            opened.append(os.fsdecode(file))
        return real_open(file, *args, **kwargs)

    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(os, "open", os_open)
        patch.setattr(builtins, "open", py_open)
        patch.setattr(io, "open", py_open)
        yield opened


def names_opened(opened: list[str]) -> set[str]:
    return {Path(p).name for p in opened}


def tokens_by_length(text: str) -> int:
    """A counter whose numbers a test can reason about: one token per character."""
    return len(text)


Counter = Callable[[str], int]
