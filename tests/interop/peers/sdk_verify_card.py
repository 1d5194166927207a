"""Run by the official a2a-sdk's own virtualenv (never imported by our tests).

Usage: python sdk_verify_card.py BASE_URL
Resolves our card with the SDK's A2ACardResolver and its own signature
verifier (keys from the signature's jku), then checks that a tampered copy is
refused. Prints one JSON object with what it saw.
"""

import asyncio
import json
import sys

import httpx
from a2a.client import A2ACardResolver
from a2a.types import a2a_pb2 as pb
from a2a.utils.signing import SignatureVerificationError, create_signature_verifier
from jwt import PyJWKSet


async def main(base):
    async with httpx.AsyncClient(timeout=30) as http:
        sets = {}

        def key_for(kid, jku):
            if jku not in sets:
                sets[jku] = PyJWKSet.from_dict(httpx.get(jku).json())
            return next(k.key for k in sets[jku].keys if k.key_id == kid)

        verifier = create_signature_verifier(key_for, ["ES256", "RS256"])
        card = await A2ACardResolver(http, base).get_agent_card(signature_verifier=verifier)
        seen = {"verified": True, "signatures": len(card.signatures)}
        forged = pb.AgentCard()
        forged.CopyFrom(card)
        forged.description = "something else"
        try:
            verifier(forged)
            seen["tampered"] = "accepted"
        except SignatureVerificationError as exc:
            seen["tampered"] = type(exc).__name__
    print(json.dumps(seen))


asyncio.run(main(sys.argv[1]))
