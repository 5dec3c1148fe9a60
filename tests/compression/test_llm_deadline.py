"""The chat client's timeout bounds a whole request, not each read: a server that keeps a
connection alive with a byte at a time must not hold a caller (a write waiting for the
threat judge, a summary) for as long as it likes."""

from __future__ import annotations

import json
import socket
import threading
from collections.abc import Iterator

import pytest

from hermes_core.compression.summarizer import LLMSummarizer
from hermes_core.config.settings import AuxiliaryCompressionSettings, ModelSettings
from hermes_core.llm import ChatClient, ChatEndpoint, LLMError

ANSWER = json.dumps({"choices": [{"message": {"role": "assistant", "content": "ok"}}]}).encode()
PADDING = 2000  # bytes of leading whitespace, one at a time: far longer than any deadline


class Drip:
    """A raw loopback server answering with ``PADDING`` spaces sent one by one (each well
    within a read timeout), then the completion; it records how many bytes it served."""

    def __init__(self) -> None:
        self.sock = socket.create_server(("127.0.0.1", 0))
        self.served = 0
        self.stop = threading.Event()
        self.finished = threading.Event()
        self.thread = threading.Thread(target=self._run, daemon=True)
        self.thread.start()

    @property
    def base_url(self) -> str:
        return f"http://127.0.0.1:{self.sock.getsockname()[1]}/v1"

    def _run(self) -> None:
        conn, _ = self.sock.accept()
        with conn:
            data = b""
            while b"\r\n\r\n" not in data:
                data += conn.recv(65536)
            body = b" " * PADDING + ANSWER
            head = b"HTTP/1.1 200 OK\r\nContent-Type: application/json\r\n"
            conn.sendall(head + b"Content-Length: %d\r\n\r\n" % len(body))
            try:
                for byte in range(PADDING):
                    if self.stop.wait(0.02):
                        return
                    conn.sendall(body[byte : byte + 1])
                    self.served += 1
                conn.sendall(body[PADDING:])
                self.finished.set()
            except OSError:
                return


@pytest.fixture
def drip() -> Iterator[Drip]:
    server = Drip()
    yield server
    server.stop.set()
    server.sock.close()


def test_the_timeout_bounds_the_whole_request(drip: Drip) -> None:
    endpoint = ChatEndpoint(drip.base_url, "aux-model", "", timeout=0.5)
    with ChatClient(endpoint, environ={}) as client, pytest.raises(LLMError) as caught:
        client.complete([{"role": "user", "content": "hi"}])
    assert caught.value.kind == "timeout"
    assert "no whole answer within 0.5 s in all" in str(caught.value)
    # the call ended while the server still had bytes to send
    assert not drip.finished.is_set()
    assert drip.served < PADDING


def test_the_summariser_is_bound_by_its_timeout_in_all(drip: Drip) -> None:
    """auxiliary.compression.timeout reaches the client as the deadline of a whole summary."""
    aux = AuxiliaryCompressionSettings(base_url=drip.base_url, model="aux-model", timeout=1.0)
    summarizer = LLMSummarizer(aux, ModelSettings(), environ={})
    with pytest.raises(LLMError) as caught:
        summarizer.summarize([{"role": "user", "content": "Fix the build."}], None, 500)
    assert caught.value.kind == "timeout"
    assert "no whole answer within 1 s in all" in str(caught.value)
    assert not drip.finished.is_set() and drip.served < PADDING
