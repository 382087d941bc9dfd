"""The SSRF guard of page fetching: only public addresses, unless FETCH_ALLOW_HOSTS opens a host or network.

A search result's URL comes from the web, so fetching it must not reach this machine, its network or a cloud
metadata service. Every hop is checked after DNS resolution, before any byte is sent, and the fetch then
connects to the address that was checked (no second lookup a rebinding DNS server could answer differently).
"""

from __future__ import annotations

import asyncio
import ipaddress
import socket
from dataclasses import dataclass
from urllib.parse import urlsplit

from agent.core.pages import FailureKind
from agent.errors import Degraded

IPAddress = ipaddress.IPv4Address | ipaddress.IPv6Address
IPNetwork = ipaddress.IPv4Network | ipaddress.IPv6Network
_SHARED_ADDRESS_SPACE = ipaddress.ip_network("100.64.0.0/10")  # carrier-grade NAT, not "private" to ipaddress


class Blocked(Degraded):
    """The URL may not be fetched; the message says why."""

    kind: FailureKind = "blocked"


class Unresolvable(Blocked):
    """The URL's host does not resolve."""

    kind: FailureKind = "dns"


@dataclass(frozen=True)
class Allowlist:
    hosts: frozenset[str]
    networks: tuple[IPNetwork, ...]

    @classmethod
    def parse(cls, setting: str) -> Allowlist:
        """`FETCH_ALLOW_HOSTS`: comma-separated host names (`*.example.org` for subdomains) and IPs or CIDRs."""
        hosts, networks = set(), []
        for item in (i.strip().lower() for i in setting.split(",")):
            if not item:
                continue
            try:
                networks.append(ipaddress.ip_network(item, strict=False))
            except ValueError:
                hosts.add(item)
        return cls(frozenset(hosts), tuple(networks))

    def allows_host(self, host: str) -> bool:
        return host in self.hosts or any(h.startswith("*.") and host.endswith(h[1:]) for h in self.hosts)

    def allows_address(self, address: IPAddress) -> bool:
        return any(address in network for network in self.networks)


def is_public(address: IPAddress) -> bool:
    """Whether `address` is on the public internet; an IPv6 address that carries an IPv4 one (IPv4-mapped, 6to4,
    Teredo's server and client) is judged by what it carries, since the packets go there."""
    if isinstance(address, ipaddress.IPv6Address):
        carried = [a for a in (address.ipv4_mapped, address.sixtofour, *(address.teredo or ())) if a is not None]
        if carried:
            return all(is_public(a) for a in carried)
    return not (address.is_private or address.is_loopback or address.is_link_local or address.is_multicast
                or address.is_reserved or address.is_unspecified or address in _SHARED_ADDRESS_SPACE
                or (isinstance(address, ipaddress.IPv6Address) and address.is_site_local))


def check_address(host: str, address: IPAddress, allow: Allowlist) -> None:
    if not (is_public(address) or allow.allows_host(host) or allow.allows_address(address)):
        raise Blocked(f"{host} resolves to {address}, a non-public address (FETCH_ALLOW_HOSTS can open it)")


async def check_url(url: str, allow: Allowlist) -> IPAddress:
    """The address to connect to for `url`; Blocked unless it is http(s) and every address of its host may be
    reached."""
    try:
        parts = urlsplit(url)
        port = parts.port
    except ValueError as e:
        raise Blocked(f"malformed URL ({e})") from None
    if parts.scheme not in ("http", "https"):
        raise Blocked(f"only http and https URLs are fetched, not {parts.scheme or 'a relative URL'}")
    host = (parts.hostname or "").lower()
    if not host:
        raise Blocked("the URL has no host")
    try:
        infos = await asyncio.get_running_loop().getaddrinfo(host, port or 443, type=socket.SOCK_STREAM)
    except (socket.gaierror, UnicodeError) as e:
        raise Unresolvable(f"{host} does not resolve ({e})") from None
    addresses = [ipaddress.ip_address(sockaddr[0].split("%", 1)[0]) for *_, sockaddr in infos]
    for address in addresses:
        check_address(host, address, allow)
    return addresses[0]
