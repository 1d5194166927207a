"""Fixtures of the store tests: each test once per store kind, on its real backend."""

from __future__ import annotations

from collections.abc import AsyncIterator
from pathlib import Path

import pytest

from a2a_grpc.stores import TaskStore
from tests.stores import KINDS, Maker, store_maker


@pytest.fixture(params=KINDS)
async def maker(request: pytest.FixtureRequest, tmp_path: Path) -> AsyncIterator[Maker]:
    async with store_maker(request.param, tmp_path) as make:
        yield make


@pytest.fixture
async def store(maker: Maker) -> TaskStore:
    return await maker()
