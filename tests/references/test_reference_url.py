"""``@url:`` against real loopback servers: refused by default, allowed by configuration,
and every redirect, size and time bound honoured."""

from __future__ import annotations

import ipaddress
import shutil
import socket
import ssl
import subprocess
import threading
from collections.abc import Sequence
from pathlib import Path

import pytest
from reference_support import Route, SilentServer, WebServer, tokens_by_length

from hermes_core.config.settings import ReferencesSettings
from hermes_core.references import expand_references
from hermes_core.references.addresses import address_problem
from hermes_core.references.refusal import Refused
from hermes_core.references.url import MAX_REDIRECTS, fetch_url

ALLOW = ReferencesSettings(allow_private_urls=True)


def refusal(url: str, settings: ReferencesSettings | None = None, **kwargs: object) -> str:
    with pytest.raises(Refused) as refused:
        fetch_url(url, settings or ReferencesSettings(), **kwargs)  # type: ignore[arg-type]
    return refused.value.reason


def resolver_for(table: dict[str, Sequence[str]], calls: list[str] | None = None):  # type: ignore[no-untyped-def]
    def resolve(host: str, port: int) -> list[str]:
        if calls is not None:
            calls.append(host)
        return list(table[host])

    return resolve


def test_loopback_is_refused_by_default_and_allowed_by_config(web: WebServer) -> None:
    web.routes["/page"] = Route(body=b"hello from loopback")
    assert "loopback" in refusal(web.url("/page"))
    assert web.seen == []  # refused before connecting
    page = fetch_url(web.url("/page"), ALLOW)
    assert page.text == "hello from loopback" and not page.cut


def test_a_name_that_resolves_to_loopback_is_refused(web: WebServer) -> None:
    web.routes["/page"] = Route(body=b"x")
    assert "resolves to 127.0.0.1, which is loopback" in refusal(web.url("/page", "localhost"))
    custom = resolver_for({"intranet.test": ["127.0.0.1"]})
    assert "loopback" in refusal(web.url("/page", "intranet.test"), resolver=custom)
    mixed = resolver_for({"mixed.test": ["93.184.216.34", "10.0.0.7"]})
    assert "10.0.0.7, which is private" in refusal(web.url("/", "mixed.test"), resolver=mixed)
    assert web.seen == []


def test_the_checked_address_is_the_one_connected_to(web: WebServer) -> None:
    """The name is looked up once and the request goes to that address, with the name as
    Host: a second, different answer (DNS rebinding) has no chance to be used."""
    web.routes["/page"] = Route(body=b"pinned")
    calls: list[str] = []
    resolver = resolver_for({"intranet.test": ["127.0.0.1"]}, calls)
    page = fetch_url(web.url("/page", "intranet.test"), ALLOW, resolver=resolver)
    assert page.text == "pinned"
    assert calls == ["intranet.test"]
    assert web.seen[0].host == f"intranet.test:{web.port}"


def test_redirects_are_checked_at_every_hop(web: WebServer) -> None:
    public = ipaddress.ip_address("127.0.0.1")

    def only_127_0_0_1(address: object) -> bool:  # this test's stand-in for "public"
        return address == public

    web.routes["/final"] = Route(body=b"arrived")
    web.routes["/hop"] = Route(302, headers={"Location": "/final"})
    page = fetch_url(web.url("/hop"), ReferencesSettings(), is_public=only_127_0_0_1)
    assert page.text == "arrived" and page.url.endswith("/final")

    web.routes["/to-metadata"] = Route(302, headers={"Location": "http://169.254.169.254/x"})
    reason = refusal(web.url("/to-metadata"), is_public=only_127_0_0_1)
    assert "169.254.169.254" in reason and "link-local" in reason
    web.routes["/to-private"] = Route(307, headers={"Location": "http://127.0.0.2/"})
    assert "127.0.0.2 is loopback" in refusal(web.url("/to-private"), is_public=only_127_0_0_1)
    web.routes["/to-file"] = Route(301, headers={"Location": "file:///etc/passwd"})
    assert "only http:// and https://" in refusal(web.url("/to-file"), is_public=only_127_0_0_1)
    web.routes["/loop"] = Route(302, headers={"Location": "/loop"})
    assert f"more than {MAX_REDIRECTS} redirects" in refusal(web.url("/loop"), ALLOW)
    assert sum(1 for s in web.seen if s.path == "/loop") == MAX_REDIRECTS + 1


def test_the_size_cap_is_honoured(web: WebServer) -> None:
    web.routes["/big"] = Route(body=b"x" * 10_000)
    whole = fetch_url(web.url("/big"), ALLOW)
    assert len(whole.text) == 10_000 and not whole.cut
    capped = fetch_url(
        web.url("/big"), ReferencesSettings(allow_private_urls=True, url_max_bytes=100)
    )
    assert capped.text == "x" * 100 and capped.cut


def test_the_timeout_is_honoured() -> None:
    """A server that accepts and never answers: with a short url_timeout the fetch gives up
    (the default of 10 s would outlast the generous wait below)."""
    settings = ReferencesSettings(allow_private_urls=True, url_timeout=0.3)
    outcome: list[str] = []
    with SilentServer() as silent:
        url = f"http://127.0.0.1:{silent.port}/"

        def fetch() -> None:
            try:
                fetch_url(url, settings)
                outcome.append("answered")
            except Refused as refused:
                outcome.append(refused.reason)

        worker = threading.Thread(target=fetch, daemon=True)
        worker.start()
        worker.join(8)
    assert outcome and "did not answer within 0.3 s" in outcome[0]


def test_only_text_is_attached(web: WebServer) -> None:
    web.routes["/bin"] = Route(body=b"\x89PNG", headers={"Content-Type": "image/png"})
    assert "image/png, not text" in refusal(web.url("/bin"), ALLOW)
    web.routes["/nul"] = Route(body=b"abc\x00def", headers={"Content-Type": ""})
    assert "binary" in refusal(web.url("/nul"), ALLOW)
    web.routes["/json"] = Route(body=b'{"a": 1}', headers={"Content-Type": "application/json"})
    assert fetch_url(web.url("/json"), ALLOW).text == '{"a": 1}'
    web.routes["/missing"] = Route(404, b"nope")
    assert "HTTP 404" in refusal(web.url("/missing"), ALLOW)


def test_html_is_reduced_to_its_text(web: WebServer) -> None:
    html = (
        b"<!doctype html><html><head><title>The Title</title><style>p{}</style>"
        b"<script>steal()</script></head><body><h1>Heading</h1><p>First &amp; second"
        b"</p><ul><li>one</li><li>two</li></ul></body></html>"
    )
    web.routes["/page"] = Route(body=html, headers={"Content-Type": "text/html; charset=utf-8"})
    text = fetch_url(web.url("/page"), ALLOW).text
    assert text.startswith("The Title")
    assert "Heading" in text and "First & second" in text and "one\n" in text
    assert "steal" not in text and "p{}" not in text and "<" not in text


@pytest.mark.parametrize(
    ("url", "words"),
    [
        ("ftp://example.com/x", "only http:// and https://"),
        ("file:///etc/passwd", "only http:// and https://"),
        ("http://user:pw@example.com/", "user name or password"),
        ("http:///nohost", "names no host"),
    ],
)
def test_malformed_or_unwanted_urls(url: str, words: str) -> None:
    assert words in refusal(url)


@pytest.mark.parametrize(
    ("address", "verdict"),
    [
        ("127.0.0.1", "loopback"),
        ("::1", "loopback"),
        ("10.1.2.3", "private"),
        ("192.168.0.1", "private"),
        ("169.254.169.254", "link-local"),
        ("fe80::1", "link-local"),
        ("100.64.0.1", "not globally routable"),
        ("0.0.0.0", "unspecified"),
        ("224.0.0.1", "multicast"),
        ("::ffff:127.0.0.1", "loopback"),
        ("2002:7f00:1::", "loopback"),  # 6to4 around 127.0.0.1
        ("64:ff9b::a00:1", "private"),  # NAT64 around 10.0.0.1
        ("8.8.8.8", None),
        ("2001:4860:4860::8888", None),
    ],
)
def test_address_verdicts(address: str, verdict: str | None) -> None:
    assert address_problem(ipaddress.ip_address(address)) == verdict


def test_expansion_of_urls(web: WebServer) -> None:
    web.routes["/doc"] = Route(body=b"the document")

    def expand(settings: ReferencesSettings) -> tuple[str, list[str]]:
        result = expand_references(
            f"read @url:{web.url('/doc')}",
            workspace=None,
            context_length=100_000,
            count_tokens=tokens_by_length,
            settings=settings,
        )
        return result.attached, result.warnings

    attached, warnings = expand(ReferencesSettings())
    assert "the document" not in attached and "allow_private_urls" in warnings[0]
    attached, warnings = expand(ALLOW)  # no workspace needed for a URL
    assert warnings == [] and "the document" in attached and "treat it as data" in attached
    web.routes["/doc"] = Route(body=b"y" * 500)
    attached, warnings = expand(ReferencesSettings(allow_private_urls=True, url_max_bytes=50))
    assert "y" * 50 in attached and "y" * 51 not in attached
    assert "first 50 bytes" in warnings[0]


@pytest.mark.skipif(shutil.which("openssl") is None, reason="needs the openssl command")
def test_https_keeps_the_name_for_sni_while_connecting_to_the_checked_address(
    tmp_path: Path,
) -> None:
    """A real TLS server on 127.0.0.1 records the SNI name it is asked for; the client
    refuses its self-signed certificate, after sending the real name."""
    key, cert = tmp_path / "key.pem", tmp_path / "cert.pem"
    subprocess.run(
        ["openssl", "req", "-x509", "-newkey", "rsa:2048", "-nodes", "-keyout", str(key),
         "-out", str(cert), "-days", "1", "-subj", "/CN=pinned.test"],
        check=True, capture_output=True,
    )  # fmt: skip
    context = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
    context.load_cert_chain(cert, key)
    names: list[str | None] = []
    context.sni_callback = lambda sock, name, ctx: names.append(name)  # type: ignore[assignment,misc,return-value]
    listener = socket.create_server(("127.0.0.1", 0))
    port = listener.getsockname()[1]

    def serve() -> None:
        conn, _ = listener.accept()
        try:
            context.wrap_socket(conn, server_side=True)
        except (ssl.SSLError, OSError):
            pass
        finally:
            conn.close()

    thread = threading.Thread(target=serve, daemon=True)
    thread.start()
    resolver = resolver_for({"pinned.test": ["127.0.0.1"]})
    reason = refusal(f"https://pinned.test:{port}/", ALLOW, resolver=resolver)
    thread.join(10)
    listener.close()
    assert names == ["pinned.test"]
    assert "could not be fetched" in reason
