"""HTTP Basic (the card's `httpAuthSecurityScheme` with scheme `Basic`):
`Authorization: Basic base64(user:password)`, checked against a file of
`USER:HASH` lines made by `a2a-grpc passwd USER`.

Hashes are scrypt (RFC 7914; n=2**14, r=8, p=1, 16-byte salt), never
plain text. scrypt is slow on purpose (about 50 ms here), so it runs off the
event loop, and a credential once verified is remembered (by its SHA-256
digest, at most 1024) so a client's every call does not pay it again.
An unknown user costs the same scrypt as a known one.
"""

from __future__ import annotations

import asyncio
import base64
import hashlib
import hmac
import os
from collections import OrderedDict
from collections.abc import Mapping

from a2a_grpc.auth.identity import Identity
from a2a_grpc.core.call import CallContext
from a2a_grpc.core.errors import UnauthenticatedError

N, R, P, SALT = 2**14, 8, 1, 16
REMEMBERED = 1024


def hash_password(password: str, salt: bytes | None = None) -> str:
    """`scrypt$n$r$p$salt$hash` (salt and hash in base64)."""
    salt = salt if salt is not None else os.urandom(SALT)
    digest = hashlib.scrypt(password.encode(), salt=salt, n=N, r=R, p=P, dklen=32)
    return "$".join(["scrypt", str(N), str(R), str(P), base64.b64encode(salt).decode(),
                     base64.b64encode(digest).decode()])


def _check(password: str, stored: str) -> bool:
    try:
        kind, n, r, p, salt, digest = stored.split("$")
        if kind != "scrypt":
            return False
        expected = base64.b64decode(digest)
        got = hashlib.scrypt(password.encode(), salt=base64.b64decode(salt), n=int(n),
                             r=int(r), p=int(p), dklen=len(expected))
    except ValueError:  # binascii.Error is one
        return False
    return hmac.compare_digest(got, expected)


def parse_users(text: str, where: str) -> dict[str, str]:
    """user -> stored hash, from `USER:HASH` lines (# comments)."""
    users: dict[str, str] = {}
    for number, line in enumerate(text.splitlines(), 1):
        line = line.strip()
        if not line or line.startswith("#"):
            continue
        user, sep, stored = line.partition(":")
        if not sep or not user or not stored.startswith("scrypt$") or stored.count("$") != 5:
            raise ValueError(f"{where}:{number}: write USER:HASH, the hash from "
                             "`a2a-grpc passwd USER` (passwords are never stored in clear)")
        users[user] = stored
    if not users:
        raise ValueError(f"{where}: no users")
    return users


class BasicVerifier:
    def __init__(self, scheme: str, users: Mapping[str, str]) -> None:
        self.scheme = scheme
        self._users = dict(users)
        self._dummy = hash_password("", b"\0" * SALT)  # what an unknown user is checked against
        self._remembered: OrderedDict[bytes, str] = OrderedDict()
        self.challenge = 'Basic realm="a2a", charset="UTF-8"'

    def replace(self, users: Mapping[str, str]) -> None:
        """These users from now on (the file was reloaded): what was remembered
        of the old ones is forgotten, so a removed user or password stops working."""
        self._users = dict(users)
        self._remembered.clear()

    async def verify(self, ctx: CallContext) -> Identity | None:
        header = ctx.metadata.get("authorization", "")
        kind, _, encoded = header.strip().partition(" ")
        if kind.lower() != "basic":
            return None  # no Basic credential (perhaps another scheme's)
        try:
            user, sep, password = base64.b64decode(encoded.strip(), validate=True) \
                .decode().partition(":")
        except ValueError:  # not base64 (binascii.Error), not ASCII, not UTF-8
            sep = ""
        if not sep:
            raise UnauthenticatedError("the Basic credential is not base64 of USER:PASSWORD",
                                       challenge=self.challenge)
        key = hashlib.sha256(f"{user}\0{password}".encode()).digest()
        if self._remembered.get(key) == user:
            self._remembered.move_to_end(key)
            return Identity(user, self.scheme)
        stored = self._users.get(user)
        ok = await asyncio.to_thread(_check, password, stored or self._dummy)
        if not ok or stored is None:
            raise UnauthenticatedError("wrong user name or password", challenge=self.challenge)
        if self._users.get(user) != stored:  # reloaded while the hash was checked
            raise UnauthenticatedError("wrong user name or password", challenge=self.challenge)
        self._remembered[key] = user
        if len(self._remembered) > REMEMBERED:
            self._remembered.popitem(last=False)
        return Identity(user, self.scheme)
