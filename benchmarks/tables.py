"""What every benchmark section's tables are made of: rows, results by
server, medians and the way figures are written."""

from __future__ import annotations

import statistics
from pathlib import Path
from typing import NamedTuple

from .drive import Result

ROOT = Path(__file__).resolve().parents[1]
NAN = float("nan")


class Row(NamedTuple):
    scenario: str
    binding: str
    concurrency: int

    @property
    def title(self) -> str:
        return f"{self.scenario} {self.binding} c={self.concurrency}"


Table = dict[Row, dict[str, list[Result]]]


def med(results: list[Result] | None, key: str = "rate") -> float:
    if not results:
        return NAN
    return statistics.median(r.extra.get(key, NAN) if key in ("first_event_ms",)
                             else getattr(r, key) for r in results)


def _f(value: float, digits: int = 0) -> str:
    return "-" if value != value else f"{value:,.{digits}f}"


def _x(a: float, b: float, digits: int = 1) -> str:
    return "-" if a != a or b != b or b == 0 else f"{a / b:.{digits}f}x"


def _pct(a: float, b: float) -> str:
    return "-" if a != a or b != b or b == 0 else f"{a / b:.0%}"
