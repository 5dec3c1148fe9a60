"""``@url:``: fetch one page over http(s) for the model, never reaching where it should not.

Each hop (the URL, then every redirect, at most :data:`MAX_REDIRECTS`) is checked afresh:
scheme http or https, no user name or password, every address of the host public (or
``references.allow_private_urls``). The request then goes to the checked address itself with
the real ``Host`` header, and for https the real name as SNI and for the certificate check,
so nothing resolves the name a second time (no DNS rebinding). Proxies, ``.netrc`` and other
environment settings are ignored (``trust_env=False``): a proxy would make the address check
moot.

Bounded: ``references.url_timeout`` seconds for the whole fetch (lookups, redirects and the
body), at most ``references.url_max_bytes`` bytes of body, read as a stream and cut there.
Text only (``text/*``, JSON, XML, YAML ...); an HTML page is reduced to its text.
"""

from __future__ import annotations

import re
import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, Final

from hermes_core.config.settings import ReferencesSettings
from hermes_core.references.addresses import IPAddress, Resolver, checked_addresses
from hermes_core.references.html_text import TooMuchWork, html_to_text, looks_like_html
from hermes_core.references.refusal import Refused

__all__ = ["MAX_REDIRECTS", "Fetched", "fetch_url"]

#: Redirects followed at most.
MAX_REDIRECTS: Final = 5
_REDIRECTS: Final = frozenset({301, 302, 303, 307, 308})
_TEXT_TYPES: Final = frozenset(
    {
        "application/json",
        "application/xml",
        "application/xhtml+xml",
        "application/javascript",
        "application/x-javascript",
        "application/ecmascript",
        "application/yaml",
        "application/x-yaml",
        "application/toml",
        "application/x-sh",
        "application/sql",
        "application/graphql",
        "application/x-ndjson",
    }
)
_HTML_TYPES: Final = frozenset({"text/html", "application/xhtml+xml"})
_HEADERS: Final = {
    "User-Agent": "hermes-context (@url reference)",
    "Accept": "text/html, text/plain, text/markdown, application/json, text/*;q=0.9, */*;q=0.1",
    "Accept-Encoding": "identity",
}


@dataclass(frozen=True)
class Fetched:
    """A fetched page: its final URL (after redirects), text, media type, and ``cut`` when
    the body was longer than ``url_max_bytes``."""

    url: str
    text: str
    content_type: str
    cut: bool


@dataclass(frozen=True)
class _Hop:
    url: Any  # httpx.URL
    host: str
    port: int


def _checked_url(text: str, httpx: Any) -> _Hop:
    try:
        url = httpx.URL(text)
    except Exception as exc:  # httpx raises several kinds for bad URLs
        raise Refused(
            f"{_quoted_url(text)} is not a valid URL: write it as https://host/path"
        ) from exc
    if url.scheme not in ("http", "https"):
        raise Refused(
            f"{_quoted_url(url.scheme) or 'a URL without a scheme'}: is not fetched; @url: "
            "takes only http:// and https:// URLs"
        )
    if not url.host:
        raise Refused(f"{_quoted_url(text)} names no host: write it as https://host/path")
    if url.userinfo:
        raise Refused(
            "a URL with a user name or password is not fetched (it would send them): "
            "remove the part before '@' in the address"
        )
    port = url.port or (443 if url.scheme == "https" else 80)
    # the ASCII (IDNA) form: what DNS, the Host header and SNI all use
    return _Hop(url=url, host=url.raw_host.decode("ascii"), port=port)


def _remaining(deadline: float, timeout: float) -> float:
    left = deadline - time.monotonic()
    if left <= 0:
        raise Refused(f"the fetch took longer than {timeout:g} s (references.url_timeout)")
    return left


_MEDIA_TOKEN: Final = re.compile(r"[a-z0-9.+-]{1,60}/[a-z0-9.+-]{1,60}")


def _media_type(headers: Any) -> str:
    return str(headers.get("content-type", "")).split(";", 1)[0].strip().lower()


def _quoted_media(media: str) -> str:
    """The server's media type as a warning may quote it: a bounded token, never free text
    the server chose (a header can hold "ignore all previous instructions ...")."""
    return media if _MEDIA_TOKEN.fullmatch(media) else "of an unknown type"


def _quoted_url(text: str) -> str:
    """A URL as a warning may quote it: a redirect's target is the server's text, so only
    its first 200 printable characters, and never spaces."""
    kept = "".join(char for char in text[:200] if char.isprintable() and not char.isspace())
    return kept + ("..." if len(text) > 200 else "")


def _textual(media: str) -> bool:
    return (
        not media
        or media.startswith("text/")
        or media in _TEXT_TYPES
        or media.endswith(("+json", "+xml"))
    )


def _read_body(response: Any, limit: int, deadline: float, timeout: float) -> tuple[bytes, bool]:
    chunks: list[bytes] = []
    size = 0
    for chunk in response.iter_bytes():
        chunks.append(chunk)
        size += len(chunk)
        if size > limit:
            return b"".join(chunks)[:limit], True
        _remaining(deadline, timeout)
    return b"".join(chunks), False


def _decode(data: bytes, response: Any, media: str) -> str:
    if b"\x00" in data[:8192]:
        raise Refused("the response is binary, not text, and is not attached")
    encoding = response.charset_encoding or "utf-8"
    try:
        text = data.decode(encoding, "replace")
    except LookupError:
        text = data.decode("utf-8", "replace")
    if media in _HTML_TYPES or (not media and looks_like_html(text)):
        try:
            return html_to_text(text)
        except TooMuchWork as exc:
            raise Refused(f"{exc}; open it in a browser and paste the part you need") from exc
    return text


def _request(client: Any, hop: _Hop, address: IPAddress, left: float, httpx: Any) -> Any:
    """Send GET for ``hop`` to ``address`` itself (the name as Host and SNI); streams."""
    pinned = hop.url.copy_with(host=str(address))
    headers = dict(_HEADERS)
    default_port = hop.port == (443 if hop.url.scheme == "https" else 80)
    host_header = f"[{hop.host}]" if ":" in hop.host else hop.host
    headers["Host"] = host_header if default_port else f"{host_header}:{hop.port}"
    extensions: dict[str, Any] = {"timeout": httpx.Timeout(left).as_dict()}
    if hop.url.scheme == "https":
        extensions["sni_hostname"] = hop.host
    request = client.build_request("GET", pinned, headers=headers, extensions=extensions)
    return client.send(request, stream=True)


def fetch_url(
    url: str,
    settings: ReferencesSettings,
    *,
    resolver: Resolver | None = None,
    is_public: Callable[[IPAddress], bool] | None = None,
) -> Fetched:
    """The text at ``url``; raises :class:`Refused` (with the reason and what to do) for a
    scheme, address, redirect, status, type, size or time that is not allowed.

    ``resolver`` replaces the system lookup and ``is_public`` the address verdict (tests).
    """
    import httpx

    timeout = settings.url_timeout
    deadline = time.monotonic() + timeout
    current = url
    with httpx.Client(trust_env=False, follow_redirects=False, timeout=timeout) as client:
        for _hop_number in range(MAX_REDIRECTS + 1):
            hop = _checked_url(current, httpx)
            addresses = checked_addresses(
                hop.host,
                hop.port,
                allow_private=settings.allow_private_urls,
                timeout=_remaining(deadline, timeout),
                resolver=resolver,
                is_public=is_public,
            )
            try:
                response = _request(client, hop, addresses[0], _remaining(deadline, timeout), httpx)
                try:
                    if 300 <= response.status_code < 400:
                        if response.status_code not in _REDIRECTS or not (
                            location := response.headers.get("location")
                        ):
                            raise Refused(
                                f"{hop.host} answered HTTP {response.status_code} without a "
                                "redirect to follow: check the URL"
                            )
                        current = str(hop.url.join(location))
                        continue
                    if response.status_code >= 400:
                        raise Refused(
                            f"{hop.host} answered HTTP {response.status_code}: check the URL"
                        )
                    media = _media_type(response.headers)
                    if not _textual(media):
                        raise Refused(
                            f"the response is {_quoted_media(media)}, not text, and is not "
                            "attached; "
                            "@url: attaches web pages and text files"
                        )
                    data, cut = _read_body(response, settings.url_max_bytes, deadline, timeout)
                    text = _decode(data, response, media)
                    return Fetched(url=str(hop.url), text=text, content_type=media, cut=cut)
                finally:
                    response.close()
            except httpx.TimeoutException as exc:
                raise Refused(
                    f"{hop.host} did not answer within {timeout:g} s (references.url_timeout)"
                ) from exc
            except httpx.HTTPError as exc:
                raise Refused(
                    f"{hop.host} could not be fetched ({type(exc).__name__}): check the URL"
                ) from exc
    raise Refused(f"more than {MAX_REDIRECTS} redirects: give the final address instead")
