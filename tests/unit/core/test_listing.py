from __future__ import annotations

import pytest

from a2a_grpc.core import listing
from a2a_grpc.core.errors import InvalidParamsError
from a2a_grpc.generated.a2a_pb2 import ListTasksRequest


def test_cursor_round_trip() -> None:
    key = (1_795_000_000_123_456_789, "task-ü")
    assert listing.decode_cursor(listing.encode_cursor(key)) == key


@pytest.mark.parametrize("token", ["garbage!", "bm90IGpzb24", listing.encode_cursor((1, "x"))[:-3],
                                   "WyJhIiwiYiJd"])
def test_foreign_page_tokens_are_invalid_params(token: str) -> None:
    with pytest.raises(InvalidParamsError, match="pageToken"):
        listing.decode_cursor(token)


@pytest.mark.parametrize("size", [0, -1, 101])
def test_page_size_bounds(size: int) -> None:
    with pytest.raises(InvalidParamsError, match="pageSize"):
        listing.query_of(ListTasksRequest(page_size=size), owner="")


def test_defaults() -> None:
    q = listing.query_of(ListTasksRequest(), owner="me")
    assert (q.page_size, q.cursor, q.history_length, q.include_artifacts, q.owner) == (
        50, None, None, False, "me")


def test_unknown_status_number_is_invalid() -> None:
    with pytest.raises(InvalidParamsError, match="status"):
        listing.query_of(ListTasksRequest(status=42), owner="")  # type: ignore[arg-type]
