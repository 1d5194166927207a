"""A pytest plugin for the 1.0-dev kit's second run (`make tck10`): each
tck_id() call gets an id of its own. The kit gives one id per scenario prefix
for a whole session, so its second message with a prefix reuses the first's
messageId; with this, what that reuse hid is seen. Loaded with
`-p tools.tck10_unique_ids` before the kit's modules import tck_id."""

from __future__ import annotations

import itertools

from tck.requirements import base  # type: ignore[import-not-found]  # the kit's, its venv

_made = base.tck_id
_count = itertools.count(1)


def _unique(name: str) -> str:
    return f"{_made(name)}-{next(_count)}"


base.tck_id = _unique
