"""Run by a virtualenv holding the official a2a-sdk, 0.3 or 1.x (never
imported by our tests).

Usage: python read_card.py BASE_URL
The agent's card as the SDK's own client resolves it (it refuses a card its
generation cannot read), printed as JSON: its name and its skills' names."""

import asyncio
import json
import sys

import httpx
from a2a.client import A2ACardResolver


async def main(base):
    async with httpx.AsyncClient(timeout=30) as http:
        card = await A2ACardResolver(http, base).get_agent_card()
    print(json.dumps({"name": card.name, "skills": [s.name for s in card.skills]}))


asyncio.run(main(sys.argv[1]))
