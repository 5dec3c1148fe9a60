"""Which addresses an ``@url:`` may reach: public unicast only, unless configured.

A name is resolved once, every address it resolves to is checked (one private address among
public ones refuses the name: the connection could land on either), and the request then goes
to the checked address itself, so a second lookup cannot answer differently (DNS
rebinding). Addresses that embed an IPv4 address (IPv4-mapped, 6to4, Teredo, NAT64) are
judged by the address inside too: ``::ffff:127.0.0.1`` is loopback.
"""

from __future__ import annotations

import ipaddress
import socket
import threading
from collections.abc import Callable, Sequence
from typing import Final

from hermes_core.references.refusal import Refused

__all__ = [
    "IPAddress",
    "Resolver",
    "address_problem",
    "checked_addresses",
    "system_resolver",
]

IPAddress = ipaddress.IPv4Address | ipaddress.IPv6Address
#: ``(host, port) -> addresses as text``; the default asks the system (``getaddrinfo``).
Resolver = Callable[[str, int], Sequence[str]]
_NAT64: Final = ipaddress.ip_network("64:ff9b::/96")


def system_resolver(host: str, port: int) -> list[str]:
    """Every address ``getaddrinfo`` gives for ``host`` (TCP)."""
    infos = socket.getaddrinfo(host, port, type=socket.SOCK_STREAM)
    return list(dict.fromkeys(str(info[4][0]) for info in infos))


def _embedded(address: IPAddress) -> list[IPAddress]:
    if not isinstance(address, ipaddress.IPv6Address):
        return []
    inner: list[IPAddress] = []
    if address.ipv4_mapped is not None:
        inner.append(address.ipv4_mapped)
    if address.sixtofour is not None:
        inner.append(address.sixtofour)
    if address.teredo is not None:
        inner.extend(address.teredo)
    if address in _NAT64:
        inner.append(ipaddress.IPv4Address(int(address) & 0xFFFFFFFF))
    return inner


def address_problem(address: IPAddress) -> str | None:
    """What makes ``address`` non-public (``"loopback"``, ``"private"``, ...), or None."""
    for candidate in (*_embedded(address), address):  # the inner address says more
        for flag in ("unspecified", "loopback", "link_local", "multicast", "private", "reserved"):
            if getattr(candidate, f"is_{flag}"):
                return flag.replace("_", "-")
        if not candidate.is_global:
            return "not globally routable"
    return None


def _resolve(resolver: Resolver, host: str, port: int, timeout: float) -> list[str]:
    """``resolver(host, port)`` in a daemon thread, given up after ``timeout`` seconds (the
    system resolver has no timeout of its own)."""
    box: dict[str, object] = {}

    def work() -> None:
        try:
            box["value"] = list(resolver(host, port))
        except Exception as exc:  # noqa: BLE001 - reported to the caller below
            box["error"] = exc

    thread = threading.Thread(target=work, name="hermes-url-resolve", daemon=True)
    thread.start()
    thread.join(timeout)
    if thread.is_alive():
        raise Refused(f"looking up {host} took longer than {timeout:.1f} s (url_timeout)")
    if "error" in box:
        # the error's text may come from a resolver answer: name only its kind
        kind = type(box["error"]).__name__
        raise Refused(f"{host} could not be resolved ({kind}): check the address")
    value = box.get("value")
    assert isinstance(value, list)
    return [str(v) for v in value]


def checked_addresses(
    host: str,
    port: int,
    *,
    allow_private: bool,
    timeout: float,
    resolver: Resolver | None = None,
    is_public: Callable[[IPAddress], bool] | None = None,
) -> list[IPAddress]:
    """The addresses of ``host`` (itself when it is an address), every one checked; raises
    :class:`Refused` when any is not public and private addresses are not allowed."""
    literal = host[1:-1] if host.startswith("[") and host.endswith("]") else host
    try:
        found = [ipaddress.ip_address(literal.split("%", 1)[0])]
    except ValueError:
        texts = _resolve(resolver or system_resolver, host, port, timeout)
        try:
            found = [ipaddress.ip_address(t.split("%", 1)[0]) for t in texts]
        except ValueError as exc:
            raise Refused(f"{host} resolved to something that is not an address") from exc
    if not found:
        raise Refused(f"{host} resolved to no address")
    if allow_private:
        return found
    for address in found:
        public = is_public(address) if is_public else address_problem(address) is None
        if not public:
            kind = address_problem(address) or "not allowed"
            named = (
                f"{host} is"
                if str(address) == literal
                else f"{host} resolves to {address}, which is"
            )
            raise Refused(
                f"{named} {kind}; @url: never reaches loopback, "
                "link-local or private addresses unless references.allow_private_urls is true"
            )
    return found
