"""The one place calls are authenticated: what the agent card asks for, enforced.

The card's `securityRequirements` are alternatives (any one will do); each
names schemes that must all pass, with the scopes each must carry. A card
with no requirements admits everyone, anonymously. Every scheme a
requirement names needs a verifier (built-in: apikey.py, jwt.py; or your
own), or the server refuses to start: it never advertises a check it does
not make.

Answers: no credential, or a bad one -> UnauthenticatedError (HTTP 401 with
`WWW-Authenticate` naming every accepted scheme, gRPC UNAUTHENTICATED); a
good credential without the scopes asked -> PermissionDeniedError (403,
PERMISSION_DENIED) naming the missing scopes. The admitted identity's
subject owns the caller's tasks: another caller's task is TaskNotFound.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping

from generated.a2a_pb2 import AgentCard

from ..context import CallContext
from ..core.errors import PermissionDeniedError, UnauthenticatedError
from .identity import Identity, Verifier


class Gate:
    def __init__(self, card: AgentCard, verifiers: Mapping[str, Verifier]) -> None:
        self.requirements = [{name: frozenset(scopes.list) for name, scopes in r.schemes.items()}
                             for r in card.security_requirements]
        for requirement in self.requirements:
            for name in requirement:
                if name not in card.security_schemes:
                    raise ValueError(f"the card requires security scheme {name!r} but does not "
                                     "declare it in securitySchemes")
                if name not in verifiers:
                    raise ValueError(f"the card requires security scheme {name!r}: configure "
                                     "how to check it (see README, 'Securing your agent')")
        self.verifiers = dict(verifiers)
        named = dict.fromkeys(n for r in self.requirements for n in r)
        self.challenge = ", ".join(self.verifiers[n].challenge for n in named)

    @property
    def open(self) -> bool:
        return not self.requirements

    async def admit(self, ctx: CallContext) -> CallContext:
        """The call with its identity, or the error that refuses it."""
        if not self.requirements:
            return ctx
        seen: dict[str, Identity | None] = {}
        refused: UnauthenticatedError | None = None
        missing: set[str] = set()
        for requirement in self.requirements:
            identities = []
            for name, scopes in requirement.items():
                if name not in seen:
                    try:
                        seen[name] = await self.verifiers[name].verify(ctx)
                    except UnauthenticatedError as exc:
                        seen[name], refused = None, refused or exc
                identity = seen[name]
                if identity is None:
                    break
                if not scopes <= identity.scopes:
                    missing |= scopes - identity.scopes
                    break
                identities.append(identity)
            else:
                first = identities[0] if identities else None
                if first is None:
                    return ctx
                return dataclasses.replace(ctx, user=first.subject, identity=first)
        if missing and refused is None:
            raise PermissionDeniedError(
                "the credentials lack the scopes this agent requires: "
                + ", ".join(sorted(missing)))
        if refused is not None:
            raise UnauthenticatedError(refused.message, challenge=self._with_all(refused))
        raise UnauthenticatedError(
            "this agent requires credentials: " + self.accepted(), challenge=self.challenge)

    def accepted(self) -> str:
        return " or ".join(" and ".join(sorted(r)) for r in self.requirements)

    def _with_all(self, refused: UnauthenticatedError) -> str:
        others = [v.challenge for v in self.verifiers.values()
                  if v.challenge not in refused.challenge and v.challenge in self.challenge]
        return ", ".join([refused.challenge, *others])
