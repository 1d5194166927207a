"""Signed cards (spec §8.4): what we sign, what we refuse to believe."""

from __future__ import annotations

import asyncio
import sys
from pathlib import Path

import pytest

from a2a_grpc.cards.card import card_for
from a2a_grpc.cards.signing import CardSignatureError, canonical, sign, verify
from a2a_grpc.demos.demo import DemoAgent
from a2a_grpc.push.signing import load_keys
from tests.processes import reap, start_server

ROOT = Path(__file__).resolve().parents[2]


def test_sign_verify_and_tamper(tmp_path: Path) -> None:
    [key] = load_keys(tmp_path)
    card = sign(card_for(DemoAgent()), key, jku="https://agent.example.com/.well-known/jwks.json")
    assert verify(card, lambda kid, jku: key.private.public_key()) == key.kid
    assert b'"signatures"' not in canonical(card)  # the signature never covers itself
    card.skills[0].name = "something else"
    with pytest.raises(CardSignatureError, match="no signature"):
        verify(card, lambda kid, jku: key.private.public_key())
    del card.signatures[:]
    with pytest.raises(CardSignatureError, match="not signed"):
        verify(card, lambda kid, jku: key.private.public_key())


def test_the_canonical_form_is_rfc_8785() -> None:
    card = card_for(DemoAgent())
    card.capabilities.extensions.add(uri="urn:x", params={"b": 1.0, "a": [1e-7, "é"]})
    text = canonical(card).decode()
    assert '"params":{"a":[1e-7,"é"],"b":1}' in text
    assert text.startswith('{"capabilities":') and ', "' not in text and '": ' not in text


async def test_our_cli_says_when_a_card_is_not_signed() -> None:
    server = await start_server("serve", "--store", "memory")
    try:
        cli = await asyncio.create_subprocess_exec(
            sys.executable, "-m", "a2a_grpc", "card", server.url, "--verify", cwd=ROOT,
            stdout=asyncio.subprocess.PIPE, stderr=asyncio.subprocess.PIPE)
        _, err = await cli.communicate()
    finally:
        reap(server.proc)
    assert cli.returncode == 5 and "not signed" in err.decode()
