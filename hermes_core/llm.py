"""A small OpenAI-compatible chat client over httpx, with failures sorted into kinds.

The compressor decides what to do after a failed summary by its kind (spec 10 §5): retry on
the main model, cool down, fall back to a static summary, or abort. So every failure, whether
HTTP status, transport error or unusable body, becomes one :class:`LLMError` with a ``kind``.
Background review offers tools (``tools=``); the answer's tool calls are checked here, so a
caller only ever sees calls it can execute and answer (an id, a name, arguments as text).
httpx is imported inside the methods: importing ``hermes_core`` must stay fast.
"""

from __future__ import annotations

import json
import os
import threading
from collections.abc import Mapping
from dataclasses import dataclass, field
from itertools import takewhile
from typing import TYPE_CHECKING, Any, Literal

from hermes_core.errors import HermesError
from hermes_core.redact import redact
from hermes_core.transcript.tool_calls import parse_tool_calls

if TYPE_CHECKING:
    import httpx

# fmt: off
__all__ = [
    "ChatClient", "ChatEndpoint", "ChatReply", "ErrorKind", "LLMError", "aborts",
    "cooldown_kind", "parse_tool_calls", "retry_on_main_model",
]
ErrorKind = Literal[
    "auth", "not_found", "unavailable", "rate_limited", "server", "bad_request", "timeout",
    "network", "malformed", "empty", "rejected",
]
# fmt: on

_RETRY_ON_MAIN: frozenset[str] = frozenset({"not_found", "unavailable", "timeout", "malformed"})
_ABORT: frozenset[str] = frozenset({"auth", "network"})
_DETAIL_MAX = 200

_HINTS: dict[str, str] = {
    "auth": "check the API key in the environment variable named by api_key_env",
    "not_found": "check base_url (it usually ends in /v1) and the model name",
    "unavailable": "the server is overloaded or starting; try again later",
    "rate_limited": "the provider is rate limiting; wait or raise the quota",
    "server": "the server failed; try again later",
    "bad_request": "the server refused the request; check the model name and the server logs",
    "timeout": "the server did not answer in time; raise the timeout or use a faster model",
    "network": "check that base_url is right and the server is running",
    "malformed": "the server's answer is not an OpenAI chat completion; check base_url",
    "empty": "the model answered with no text; try another model",
}


def retry_on_main_model(kind: str) -> bool:
    """Layer 1: the auxiliary model is missing, overloaded, slow or speaks garbage."""
    return kind in _RETRY_ON_MAIN


def aborts(kind: str) -> bool:
    """Layer 4: a bad key or an unreachable network will not be fixed by a static summary."""
    return kind in _ABORT


def cooldown_kind(kind: str) -> str:
    """Layer 2: timeouts climb their own cooldown ladder; every other failure shares one."""
    return "timeout" if kind == "timeout" else "other"


class LLMError(HermesError):
    """A chat completion failed; ``kind`` says how, ``status`` is the HTTP status if any.

    ``attempts`` lists ``(model, kind or "ok")`` for every call made before giving up, when
    the raiser tried more than one model. ``usage`` is the ``usage`` object of an answer that
    was unusable (an empty or choice-less body can still bill tokens); empty otherwise.
    """

    def __init__(
        self,
        message: str,
        *,
        kind: ErrorKind,
        status: int | None = None,
        model: str = "",
    ) -> None:
        super().__init__(message)
        self.kind: ErrorKind = kind
        self.status = status
        self.model = model
        self.attempts: list[tuple[str, str]] = []
        self.usage: dict[str, Any] = {}


@dataclass
class ChatEndpoint:
    """Where to send a chat completion; the key itself stays in the environment."""

    base_url: str
    model: str
    api_key_env: str = ""
    timeout: float = 60.0

    @property
    def url(self) -> str:
        return self.base_url.rstrip("/") + "/chat/completions"


@dataclass(frozen=True)
class ChatReply:
    """The first choice of a completion.

    ``tool_calls`` holds the well-formed calls, each ``{"id", "type": "function", "function":
    {"name", "arguments"}}`` with ``arguments`` a string; ``dropped_tool_calls`` says why each
    malformed one was left out (no id, no name, a repeated id, arguments neither text nor an
    object).
    """

    text: str
    finish_reason: str | None
    model: str
    usage: dict[str, Any] = field(default_factory=dict)
    tool_calls: list[dict[str, Any]] = field(default_factory=list)
    dropped_tool_calls: tuple[str, ...] = ()


def kind_for_status(status: int) -> ErrorKind:
    """The failure kind of a non-2xx HTTP status."""
    if status in (401, 403):
        return "auth"
    if status == 404:
        return "not_found"
    if status == 408:
        return "timeout"
    if status == 429:
        return "rate_limited"
    if status == 503:
        return "unavailable"
    if 400 <= status < 500:
        return "bad_request"
    return "server"


class ChatClient:
    """POSTs ``{base_url}/chat/completions`` and returns the first choice or raises LLMError.

    ``client``: a shared connection pool (not closed here); ``transport``: where the owned
    client goes. The key is read from ``environ`` at each call, never shown or logged."""

    def __init__(
        self,
        endpoint: ChatEndpoint,
        *,
        environ: Mapping[str, str] | None = None,
        transport: httpx.BaseTransport | None = None,
        client: httpx.Client | None = None,
    ) -> None:
        if not endpoint.base_url.strip():
            raise ValueError("ChatEndpoint.base_url is empty")
        self.endpoint = endpoint
        self._environ: Mapping[str, str] = os.environ if environ is None else environ
        self._transport = transport
        self._client = client
        self._owns_client = client is None

    def __repr__(self) -> str:
        return f"ChatClient({_safe_url(self.endpoint.url)!r}, model={self.endpoint.model!r})"

    def __enter__(self) -> ChatClient:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def close(self) -> None:
        """Close the owned connection pool (a client passed in stays open)."""
        if self._owns_client and self._client is not None:
            self._client.close()
            self._client = None

    def _http(self) -> httpx.Client:
        if self._client is None:
            import httpx

            self._client = httpx.Client(transport=self._transport, follow_redirects=False)
        return self._client

    def _key(self) -> str:
        env = self.endpoint.api_key_env
        return self._environ.get(env, "").strip() if env else ""

    def _headers(self) -> dict[str, str]:
        headers = {
            "Content-Type": "application/json",
            "Accept": "application/json",
            "User-Agent": "hermes-context",
        }
        key = self._key()
        if key:
            headers["Authorization"] = f"Bearer {key}"
        return headers

    def _error(
        self, kind: ErrorKind, what: str, status: int | None = None, *, hint: str | None = None
    ) -> LLMError:
        where = f"{_safe_url(self.endpoint.url)} (model {self.endpoint.model!r})"
        if hint is None:
            hint = _HINTS.get(kind, "")
            if kind == "auth" and self.endpoint.api_key_env:
                hint = f"check the API key in ${self.endpoint.api_key_env}"
        message = f"chat completion at {where} failed: {self._scrub(what)}"
        if hint:
            message += f"; {hint}"
        return LLMError(message, kind=kind, status=status, model=self.endpoint.model)

    def _scrub(self, text: str) -> str:
        """Redact key shapes and the literal key, however odd its shape."""
        key = self._key()
        if key:
            text = text.replace(key, "[REDACTED]")
        return redact(text)

    def complete(
        self,
        messages: list[dict[str, Any]],
        *,
        temperature: float | None = None,
        tools: list[dict[str, Any]] | None = None,
    ) -> ChatReply:
        """One non-streaming completion; no ``max_tokens`` is sent (the budget is in the prompt).

        With ``tools`` (OpenAI function schemas) the model may answer with tool calls instead
        of text (``tool_choice`` is ``auto``); without, an answer with no text is ``empty``.
        """
        import httpx

        body: dict[str, Any] = {"model": self.endpoint.model, "messages": messages}
        if temperature is not None:
            body["temperature"] = temperature
        if tools:
            body["tools"] = tools
            body["tool_choice"] = "auto"
        try:
            status, text = self._exchange(json.dumps(body, ensure_ascii=False).encode("utf-8"))
        except httpx.TimeoutException as exc:
            what = f"no answer within {self.endpoint.timeout:g} s ({type(exc).__name__})"
            raise self._error("timeout", what) from None
        except (httpx.RemoteProtocolError, httpx.ReadError, httpx.WriteError) as exc:
            what = f"the connection broke before a whole answer arrived ({_describe(exc)})"
            hint = "the server or a proxy dropped the request; check the server logs"
            raise self._error("malformed", what, hint=hint) from None
        except (httpx.TransportError, httpx.InvalidURL) as exc:
            raise self._error("network", f"cannot reach the server ({_describe(exc)})") from None
        return self._parse(status, text, with_tools=bool(tools))

    def _exchange(self, body: bytes) -> tuple[int, str]:
        """POST ``body``: status and whole answer within ``endpoint.timeout`` s in all (httpx
        bounds each read only, so a byte-a-second server could hold a caller for ever); the
        caller stops waiting at the deadline and the worker drops the rest of the answer."""
        import httpx

        client, limit = self._http(), self.endpoint.timeout
        url, headers, timeout = self.endpoint.url, self._headers(), httpx.Timeout(limit)
        done, late = threading.Event(), threading.Event()
        outcome: list[tuple[int, str] | Exception] = []

        def run() -> None:
            try:
                request = client.build_request("POST", url, content=body, headers=headers)
                request.extensions["timeout"] = timeout.as_dict()
                response = client.send(request, stream=True)
                try:
                    chunks = takewhile(lambda _: not late.is_set(), response.iter_bytes())
                    data = b"".join(chunks).decode(response.charset_encoding or "utf-8", "replace")
                    outcome.append((response.status_code, data))
                finally:
                    response.close()
            except Exception as exc:  # noqa: BLE001 - sorted into kinds by the caller
                outcome.append(exc)
            finally:
                done.set()

        threading.Thread(target=run, name="hermes-llm-request", daemon=True).start()
        if not done.wait(limit):
            late.set()
            raise self._error("timeout", f"no whole answer within {limit:g} s in all")
        if isinstance(result := outcome[0], Exception):
            raise result
        return result

    def _parse(self, status: int, text: str, *, with_tools: bool = False) -> ChatReply:
        if not 200 <= status < 300:
            detail = _error_detail(text)
            what = f"HTTP {status}" + (f": {detail}" if detail else "")
            raise self._error(kind_for_status(status), what, status)
        try:
            payload = json.loads(text)
        except ValueError:
            what = f"the body is not JSON: {_clip(text)!r}"
            raise self._error("malformed", what, status) from None
        usage = payload.get("usage") if isinstance(payload, dict) else None
        choices = payload.get("choices") if isinstance(payload, dict) else None
        if not isinstance(choices, list) or not choices or not isinstance(choices[0], dict):
            detail = _error_detail(text) if isinstance(payload, dict) else ""
            what = "the answer has no choices" + (f": {detail}" if detail else "")
            raise _billed(self._error("malformed", what, status), usage)
        choice = choices[0]
        message = choice.get("message")
        if not isinstance(message, dict):
            error = self._error("malformed", "the first choice has no message", status)
            raise _billed(error, usage)
        content = _content_text(message.get("content"))
        calls, dropped = parse_tool_calls(message.get("tool_calls")) if with_tools else ([], [])
        if not content.strip() and not calls:
            if dropped:
                what = "every tool call in the answer is malformed: " + "; ".join(dropped[:3])
                hint = "the server's tool calling is broken; try another model or server"
                error = self._error("malformed", what, status, hint=hint)
                raise _billed(error, usage)
            raise _billed(self._error("empty", "the answer has no content", status), usage)
        finish = choice.get("finish_reason")
        model = payload.get("model")
        return ChatReply(
            text=content,
            finish_reason=finish if isinstance(finish, str) else None,
            model=model if isinstance(model, str) and model else self.endpoint.model,
            usage=dict(usage) if isinstance(usage, dict) else {},
            tool_calls=calls,
            dropped_tool_calls=tuple(dropped),
        )


def _billed(error: LLMError, usage: object) -> LLMError:
    """``error`` carrying the answer's ``usage``: an unusable answer may still cost tokens."""
    error.usage = dict(usage) if isinstance(usage, dict) else {}
    return error


def _content_text(content: object) -> str:
    """A message content as text: a string, the text parts of a list joined, or, as
    llama.cpp-style servers sometimes answer, a JSON object or array written out as JSON
    (its ``text`` or ``content`` string when it has one)."""
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        texts = [
            part if isinstance(part, str) else part["text"]
            for part in content
            if isinstance(part, str)
            or (isinstance(part, dict) and isinstance(part.get("text"), str))
        ]
        if texts:
            return "".join(texts)
        return json.dumps(content, ensure_ascii=False) if content else ""
    if isinstance(content, dict):
        for key in ("text", "content"):
            if isinstance(content.get(key), str):
                return str(content[key])
        return json.dumps(content, ensure_ascii=False) if content else ""
    return ""


def _error_detail(text: str) -> str:
    """The provider's own error message (``{"error": {"message": ...}}``), else the body's start."""
    try:
        payload = json.loads(text)
    except ValueError:
        return _clip(text)
    if isinstance(payload, dict):
        error = payload.get("error")
        if isinstance(error, dict) and isinstance(error.get("message"), str):
            return _clip(error["message"])
        if isinstance(error, str):
            return _clip(error)
        if isinstance(payload.get("message"), str):
            return _clip(payload["message"])
    return _clip(text)


def _describe(exc: BaseException) -> str:
    detail = _clip(str(exc))
    return f"{type(exc).__name__}: {detail}" if detail else type(exc).__name__


def _clip(text: str) -> str:
    text = " ".join(text.split())
    return text if len(text) <= _DETAIL_MAX else text[: _DETAIL_MAX - 3] + "..."


def _safe_url(url: str) -> str:
    """The URL without credentials or query string (either could carry a secret)."""
    url = url.split("?", 1)[0]
    scheme, sep, rest = url.partition("://")
    if sep and "@" in rest.split("/", 1)[0]:
        host_and_path = rest.split("@", 1)[1]
        url = f"{scheme}://{host_and_path}"
    return redact(url)
