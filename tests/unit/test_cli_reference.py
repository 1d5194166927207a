"""docs/cli-reference.md is the parser's own account of every command and
flag: regenerate it with `python -m tools.cli_reference` when a flag changes."""

from __future__ import annotations

from tools.cli_reference import OUT, render


def test_the_reference_page_lists_the_flags_there_are() -> None:
    assert OUT.read_text() == render(), (
        "docs/cli-reference.md is stale: run `python -m tools.cli_reference`")


def test_it_has_every_flag_the_docs_were_missing() -> None:
    page = render()
    for flag in ("--rate-limit", "--rate-burst", "--max-streams", "--max-tasks",
                 "--stream-backlog", "--oauth2-token-url", "--basic-users", "--agent NAME",
                 "--user", "--client-id", "--out", "--ca", "--cert", "--key"):
        assert f"`{flag}" in page, flag
