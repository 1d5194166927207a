"""Authentication from the agent card's security schemes (see gate.py)."""

from .apikey import ApiKeyVerifier
from .gate import Gate
from .identity import Identity, Verifier
from .jwt import Jwks, JwtVerifier
from .service import AuthenticatedService

__all__ = ["ApiKeyVerifier", "AuthenticatedService", "Gate", "Identity", "Jwks", "JwtVerifier",
           "Verifier"]
