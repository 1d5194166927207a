"""docs/cli-reference.md, written from the command line's own parser, so the
flags it lists are the flags there are: `python -m tools.cli_reference`
rewrites it; tests/unit/test_cli_reference.py fails when it is stale."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from a2a_grpc.app.cli import _parser

OUT = Path(__file__).resolve().parent.parent / "docs" / "cli-reference.md"
HEAD = """# Command-line reference

Every command and flag of `a2a-grpc`, written from its parser
(`python -m tools.cli_reference`; a test fails when this page is stale).
[Command line](cli.md) and [Calling agents](client.md) say how they fit
together. Each `serve` and `bridge` setting may also come from the
environment, `A2A_GRPC_` and the flag in capitals (`--grpc-port` is
`A2A_GRPC_GRPC_PORT`), or from `--config FILE`.
"""


def _flag(action: argparse.Action) -> str:
    return _flag_text(action).replace("|", "\\|")  # a table's cell


def _flag_text(action: argparse.Action) -> str:
    if not action.option_strings:
        return f"`{action.metavar or action.dest.upper()}`"
    names = ", ".join(action.option_strings)
    if action.nargs == 0:
        return f"`{names}`"
    shown = action.metavar or (
        "{" + ",".join(map(str, action.choices)) + "}" if action.choices else action.dest.upper())
    return f"`{names} {shown}`"


def _help(action: argparse.Action) -> str:
    text = " ".join((action.help or "").split()).replace("|", "\\|")
    if action.help and "%(default)" in action.help:
        text = text.replace("%(default)s", str(action.default))
    return text


def _command(name: str, parser: argparse.ArgumentParser, summary: str) -> list[str]:
    lines = [f"## a2a-grpc {name}", ""]
    about = " ".join((parser.description or summary).split())
    if about:
        lines += [about, ""]
    for group in parser._action_groups:
        actions = [a for a in group._group_actions if not isinstance(a, argparse._HelpAction)]
        if not actions:
            continue
        title = group.title or ""
        if title not in ("positional arguments", "options"):
            lines += [f"**{title}**" + (f": {group.description}" if group.description else ""),
                      ""]
        lines += ["| flag | what it does |", "| --- | --- |"]
        lines += [f"| {_flag(a)} | {_help(a)} |" for a in actions]
        lines.append("")
    return lines


Command = tuple[argparse.ArgumentParser, str]  # its parser, and its line of help


def _subcommands(parser: argparse.ArgumentParser) -> dict[str, Command]:
    found: dict[str, Command] = {}
    for action in parser._actions:
        if isinstance(action, argparse._SubParsersAction):
            said = {a.dest: a.help or "" for a in action._choices_actions}
            for name, sub in action.choices.items():
                nested = _subcommands(sub)
                if nested:
                    found.update({f"{name} {n}": c for n, c in nested.items()})
                else:
                    found[name] = (sub, said.get(name, ""))
    return found


def render() -> str:
    lines = [HEAD]
    for name, (sub, summary) in _subcommands(_parser()).items():
        lines += _command(name, sub, summary)
    return "\n".join(lines).rstrip() + "\n"


def main() -> int:
    OUT.write_text(render())
    print(OUT, file=sys.stderr)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
