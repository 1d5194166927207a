"""The Python examples of the documentation, as a reader copies them: each
name they use is imported or defined in the example, save the reader's own
things the prose names (their agent, their graph); and each is Python (a
syntax error is ruff's too). A `pb.` without its import fails here (ruff's
undefined-name check, F821, over each example)."""

from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
EXAMPLE = re.compile(r"```python\n(.*?)```", re.S)
# The reader's own objects, which a page's prose introduces before its example.
THEIRS = {"root_agent", "WordCount", "graph", "builder", "MyAgent", "sdk_task", "agent"}
UNDEFINED = re.compile(r"F821 Undefined name `(\w+)`")


def test_every_name_an_example_uses_is_imported_or_the_readers(tmp_path: Path) -> None:
    written = []
    for page in sorted((ROOT / "docs").rglob("*.md")):
        for number, found in enumerate(EXAMPLE.finditer(page.read_text())):
            code = found.group(1)
            if "import " not in code:  # a fragment of a longer example before it
                continue
            path = tmp_path / f"{page.stem}_{number}.py"
            path.write_text(code)
            written.append(path)
    assert any(p.name.startswith("client_") for p in written)  # the examples were found
    done = subprocess.run(
        [sys.executable, "-m", "ruff", "check", "--isolated", "--no-cache", "--select",
         "F821", "--output-format", "concise", str(tmp_path)],
        capture_output=True, text=True, timeout=120)
    assert done.returncode in (0, 1) and "error:" not in done.stderr, done.stderr  # it ran
    lines = [line for line in done.stdout.splitlines() if line.startswith(str(tmp_path))]
    unknown = [line for line in lines
               if (m := UNDEFINED.search(line)) is None or m.group(1) not in THEIRS]
    assert not unknown, "\n".join(unknown)
