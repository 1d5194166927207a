"""Which webhook URLs the server may call (the SSRF guard, spec §13.2).

A URL must be absolute http(s) (plain http only when the operator allows it),
and every address its host resolves to must be public: loopback, private,
link-local (169.254.169.254 included), multicast, unspecified, reserved and
their IPv6 forms (::1, fc00::/7, fe80::/10, v4-mapped) are refused, unless
the operator allowed that host name or network (`--allow-push-to`).

When a config is created, the URL is checked without asking DNS
(`check_at_creation`): its scheme, a literal address, and `localhost` names
(RFC 6761: always loopback). A name that does not resolve today may resolve
tomorrow, and one that resolves today may point elsewhere at delivery. What
counts is the check at every delivery attempt, inside the HTTP client's
resolver, so the address connected to is the one that was checked (no DNS
rebinding between check and connect). Redirects are never followed.
"""

from __future__ import annotations

import ipaddress
import socket
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any
from urllib.parse import urlsplit

from aiohttp.abc import AbstractResolver, ResolveResult
from aiohttp.resolver import DefaultResolver

from a2a_grpc.core.errors import FieldViolation, InvalidParamsError

Network = ipaddress.IPv4Network | ipaddress.IPv6Network
Address = ipaddress.IPv4Address | ipaddress.IPv6Address


class PushTargetRefused(OSError):
    """The webhook's host is not one the server may call."""


def _why_refused(ip: Address) -> str | None:
    if isinstance(ip, ipaddress.IPv6Address) and ip.ipv4_mapped is not None:
        return _why_refused(ip.ipv4_mapped)
    checks = [("loopback", ip.is_loopback), ("link-local", ip.is_link_local),
              ("multicast", ip.is_multicast), ("unspecified", ip.is_unspecified),
              ("private", ip.is_private), ("reserved", ip.is_reserved)]
    for name, hit in checks:
        if hit:
            return f"a {name} address"
    return None if ip.is_global else "not a public address"


@dataclass(frozen=True, slots=True)
class PushPolicy:
    allowed_hosts: frozenset[str] = frozenset()
    allowed_networks: tuple[Network, ...] = ()
    allow_http: bool = False
    _resolver: Any = field(default=None, compare=False)

    @classmethod
    def from_flags(cls, allow_to: Sequence[str] = (), allow_http: bool = False) -> PushPolicy:
        """`--allow-push-to` values: host names (`.example.com` = it and its
        subdomains), addresses or CIDRs."""
        hosts, nets = set(), []
        for item in allow_to:
            try:
                nets.append(ipaddress.ip_network(item.strip(), strict=False))
            except ValueError:
                hosts.add(item.strip().lower().rstrip("."))
        return cls(frozenset(hosts), tuple(nets), allow_http)

    def check_syntax(self, url: str, field_name: str = "url") -> str:
        """The URL's host, or InvalidParams when the URL itself is not allowed."""
        parts = urlsplit(url)
        schemes = ("https", "http") if self.allow_http else ("https",)
        if parts.scheme not in schemes or not parts.hostname:
            need = "http(s)" if self.allow_http else "https"
            raise _invalid(field_name, f"must be an absolute {need} URL, got {url!r}")
        return parts.hostname.lower().rstrip(".")

    def host_allowed(self, host: str) -> bool:
        return host in self.allowed_hosts or any(
            p.startswith(".") and (host == p[1:] or host.endswith(p)) for p in self.allowed_hosts)

    def refusal(self, host: str, ip: Address) -> str | None:
        """Why `ip` (an address of `host`) may not be called, or None."""
        if self.host_allowed(host) or any(ip in net for net in self.allowed_networks):
            return None
        reason = _why_refused(ip)
        return f"{host} resolves to {ip}, {reason}" if reason else None

    def check_at_creation(self, url: str, field_name: str = "url") -> None:
        """Creation-time check, with no DNS: syntax, then the host if it is an
        address or a localhost name. Names are checked at delivery."""
        host = self.check_syntax(url, field_name)
        if self.host_allowed(host):
            return  # the operator trusts this name, wherever it points
        try:
            ip: Address = ipaddress.ip_address(host.strip("[]").split("%")[0])
        except ValueError:
            if host == "localhost" or host.endswith(".localhost"):
                ip = ipaddress.ip_address("127.0.0.1")
            else:
                return
        why = self.refusal(host, ip)
        if why:
            raise _invalid(field_name, f"{why}; push notifications go to public "
                           "addresses only (the operator can allow this one with "
                           "--allow-push-to)")

    def resolver(self) -> GuardedResolver:
        return GuardedResolver(self)


def _invalid(field_name: str, message: str) -> InvalidParamsError:
    return InvalidParamsError(f"push notification URL {message}",
                              violations=[FieldViolation(field_name, message)])


class GuardedResolver(AbstractResolver):
    """aiohttp resolver that refuses hosts resolving to forbidden addresses."""

    def __init__(self, policy: PushPolicy) -> None:
        self._policy = policy
        self._inner = DefaultResolver()

    async def resolve(self, host: str, port: int = 0,
                      family: socket.AddressFamily = socket.AF_INET) -> list[ResolveResult]:
        results = await self._inner.resolve(host, port, family)
        name = host.lower().rstrip(".")
        for result in results:
            why = self._policy.refusal(name, ipaddress.ip_address(result["host"]))
            if why:
                raise PushTargetRefused(why)
        return results

    async def close(self) -> None:
        await self._inner.close()
