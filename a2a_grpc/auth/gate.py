"""The one place calls are authenticated: what the agent card asks for, enforced.

The card's `securityRequirements` are alternatives (any one will do); each
names schemes that must all pass, with the scopes each must carry. A card
with no requirements admits everyone, anonymously. Every scheme a
requirement names needs a verifier (built-in: apikey.py, basic.py, jwt.py,
mtls.py; or your own), or the server refuses to start: it never advertises
a check it does not make.

Skills may ask for more (`AgentSkill.securityRequirements`, same rules). A
caller admitted to the agent but failing a skill's requirements gets that
skill in `CallContext.denied_skills`: the extended card leaves it out, and
`RequestContext.require_skill` refuses it (PermissionDenied).

Answers: no credential, or a bad one -> UnauthenticatedError (HTTP 401 with
`WWW-Authenticate` naming every accepted scheme, gRPC UNAUTHENTICATED); a
good credential without the scopes asked -> PermissionDeniedError (403,
PERMISSION_DENIED) naming the missing scopes. The admitted identity's
subject owns the caller's tasks: another caller's task is TaskNotFound.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Iterable, Mapping

from a2a_grpc.auth.identity import Identity, Verifier
from a2a_grpc.core.call import CallContext
from a2a_grpc.core.errors import PermissionDeniedError, UnauthenticatedError
from a2a_grpc.generated.a2a_pb2 import AgentCard, SecurityRequirement

Requirement = dict[str, frozenset[str]]  # scheme name -> scopes it must carry


def _requirements(card: AgentCard, reqs: Iterable[SecurityRequirement], where: str,
                  verifiers: Mapping[str, Verifier]) -> list[Requirement]:
    out = [{name: frozenset(scopes.list) for name, scopes in r.schemes.items()} for r in reqs]
    for requirement in out:
        for name in requirement:
            if name not in card.security_schemes:
                raise ValueError(f"{where} requires security scheme {name!r} but the card "
                                 "does not declare it in securitySchemes")
            if name not in verifiers:
                raise ValueError(f"{where} requires security scheme {name!r}: configure how "
                                 "to check it (see README, 'Securing your agent')")
    return out


class _Checked:
    """One call's credentials, each scheme verified at most once."""

    def __init__(self, verifiers: Mapping[str, Verifier], ctx: CallContext) -> None:
        self.verifiers, self.ctx = verifiers, ctx
        self.seen: dict[str, Identity | None] = {}
        self.refused: UnauthenticatedError | None = None
        self.missing: set[str] = set()

    async def identity(self, name: str) -> Identity | None:
        if name not in self.seen:
            try:
                self.seen[name] = await self.verifiers[name].verify(self.ctx)
            except UnauthenticatedError as exc:
                self.seen[name], self.refused = None, self.refused or exc
        return self.seen[name]

    async def first_met(self, requirements: list[Requirement]) -> tuple[bool, Identity | None]:
        """Whether any requirement is met, and the identity that met it."""
        for requirement in requirements:
            identities = []
            for name, scopes in requirement.items():
                identity = await self.identity(name)
                if identity is None:
                    break
                if not scopes <= identity.scopes:
                    self.missing |= scopes - identity.scopes
                    break
                identities.append(identity)
            else:
                return True, identities[0] if identities else None
        return False, None


class Gate:
    def __init__(self, card: AgentCard, verifiers: Mapping[str, Verifier]) -> None:
        self.requirements = _requirements(card, card.security_requirements, "the card",
                                          verifiers)
        self.skills = {s.id: _requirements(card, s.security_requirements, f"skill {s.id!r}",
                                           verifiers)
                       for s in card.skills if s.security_requirements}
        self.verifiers = dict(verifiers)
        named = dict.fromkeys(n for r in self.requirements for n in r)
        self.challenge = ", ".join(self.verifiers[n].challenge for n in named)

    @property
    def open(self) -> bool:
        return not self.requirements and not self.skills

    async def admit(self, ctx: CallContext) -> CallContext:
        """The call with its identity, or the error that refuses it. A call the
        host app identified (the ASGI face's `identify`) is admitted as is."""
        if self.open or ctx.identity is not None:
            return ctx
        checked = _Checked(self.verifiers, ctx)
        met, identity = await checked.first_met(self.requirements) if self.requirements \
            else (True, None)
        if not met:
            if checked.missing and checked.refused is None:
                raise PermissionDeniedError(
                    "the credentials lack the scopes this agent requires: "
                    + ", ".join(sorted(checked.missing)))
            if checked.refused is not None:
                raise UnauthenticatedError(checked.refused.message,
                                           challenge=self._with_all(checked.refused))
            raise UnauthenticatedError(
                "this agent requires credentials: " + self.accepted(), challenge=self.challenge)
        denied = []
        for skill, requirements in self.skills.items():
            ok, who = await checked.first_met(requirements)
            if not ok:
                denied.append(skill)
            identity = identity or who
        if identity is None and not denied:
            return ctx
        return dataclasses.replace(ctx, user=identity.subject if identity else ctx.user,
                                   identity=identity, denied_skills=frozenset(denied))

    def accepted(self) -> str:
        return " or ".join(" and ".join(sorted(r)) for r in self.requirements)

    def _with_all(self, refused: UnauthenticatedError) -> str:
        others = [v.challenge for v in self.verifiers.values()
                  if v.challenge not in refused.challenge and v.challenge in self.challenge]
        return ", ".join([refused.challenge, *others])
