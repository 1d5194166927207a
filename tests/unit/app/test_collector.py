"""What `serve` does to the garbage collector once it is up (app/http.py)."""

from __future__ import annotations

import subprocess
import sys

from a2a_grpc.app.http import FIRST_GENERATION

SCRIPT = """
import gc
from a2a_grpc.app.http import tune_collector
before = gc.get_threshold()
tune_collector()
print(gc.get_freeze_count() > 0, *gc.get_threshold(), *before)
"""


def test_start_up_is_frozen_and_young_objects_are_collected_less_often() -> None:
    # In a process of its own: the test runner's collector stays as it is.
    out = subprocess.run([sys.executable, "-c", SCRIPT], capture_output=True, text=True,
                         check=True).stdout.split()
    frozen, first, second, third, _, before_second, before_third = out
    assert frozen == "True"
    assert int(first) == FIRST_GENERATION > 700
    assert (second, third) == (before_second, before_third)  # the older generations as they were
