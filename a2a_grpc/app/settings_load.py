"""Reading `ServeSettings` (settings.py) from flags, the environment
(`A2A_GRPC_` and the flag in capitals) and a TOML file: a flag wins over the
environment, the environment over the file, the file over the default."""

from __future__ import annotations

import argparse
import dataclasses
import os
import tomllib
import types
import typing
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path
from typing import Any

from a2a_grpc.app.settings import GROUPS, ServeSettings
from a2a_grpc.app.settings_values import decimal, number

ENV_PREFIX = "A2A_GRPC_"


def flag_of(f: dataclasses.Field[Any]) -> str:
    return str(f.metadata.get("flag") or "--" + f.name.replace("_", "-"))


def env_of(f: dataclasses.Field[Any]) -> str:
    return ENV_PREFIX + flag_of(f).removeprefix("--").replace("-", "_").replace(".", "_").upper()


def _kind(group: type[Any], f: dataclasses.Field[Any]) -> tuple[type[Any], bool]:
    """(the value's type, whether it is a repeatable setting: a tuple)."""
    hint = typing.get_type_hints(group)[f.name]
    if typing.get_origin(hint) is tuple:
        return typing.get_args(hint)[0], True
    if isinstance(hint, types.UnionType):  # X | None
        return next(a for a in typing.get_args(hint) if a is not type(None)), False
    return hint, False


def _from_text(group: type[Any], f: dataclasses.Field[Any], text: str) -> Any:
    base, repeated = _kind(group, f)
    if repeated:
        return tuple(_text(f, base, part.strip()) for part in text.split(",") if part.strip())
    return _text(f, base, text)


def _text(f: dataclasses.Field[Any], base: type[Any], text: str) -> Any:
    if base is bool:
        if text.strip().lower() in ("1", "true", "yes", "on"):
            return True
        if text.strip().lower() in ("0", "false", "no", "off", ""):
            return False
        raise ValueError(f"{text!r} is not true or false")
    choices = f.metadata.get("choices")
    if choices and text not in choices:
        raise ValueError(f"{text!r} is not one of {', '.join(choices)}")
    return _converter(f, base)(text)


def _converter(f: dataclasses.Field[Any], base: type[Any]) -> Callable[[str], Any]:
    """A setting's own conversion, else its type's, said in plain words."""
    convert: Callable[[str], Any] = (f.metadata.get("convert")
                                     or {int: number, float: decimal}.get(base, base))
    return convert


def add_flags(parser: argparse.ArgumentParser, *groups: str,
              only: Sequence[str] | None = None) -> None:
    """The flags of these groups, each group a section of --help. A flag left
    out of the command line is absent from the parsed namespace (its value
    comes from the environment, the file or the default: `load`)."""
    for name in groups:
        group = GROUPS[name]
        section = parser.add_argument_group((group.__doc__ or name).strip())
        for f in dataclasses.fields(group):
            if only is not None and f.name not in only:
                continue
            base, repeated = _kind(group, f)
            meta = f.metadata
            kwargs: dict[str, Any] = {"dest": f"{name}.{f.name}", "help": meta["help"],
                                      "default": argparse.SUPPRESS}
            if base is bool and not repeated:
                kwargs["action"] = "store_true"
            else:
                kwargs["type"] = _argtype(group, f, base)
                if meta.get("choices"):
                    kwargs["choices"] = meta["choices"]
                else:
                    kwargs["metavar"] = meta.get("metavar") or f.name.upper()
                if repeated:
                    kwargs["action"] = "append"
            section.add_argument(flag_of(f), **kwargs)


def _argtype(group: type[Any], f: dataclasses.Field[Any], base: type[Any]) -> Callable[[str], Any]:
    convert = _converter(f, base)

    def parse(text: str) -> Any:
        try:
            return convert(text)
        except ValueError as exc:
            raise argparse.ArgumentTypeError(str(exc)) from None

    parse.__name__ = base.__name__  # argparse names the type in its errors
    return parse


def load(args: argparse.Namespace, config: Path | None = None,
         environ: Mapping[str, str] | None = None) -> ServeSettings:
    """Flags (what `add_flags` parsed), over the environment, over the TOML file,
    over the defaults. ValueError names the setting and where it came from."""
    environ = os.environ if environ is None else environ
    table: dict[str, Any] = {}
    if config is not None:
        try:
            table = tomllib.loads(config.read_text())
        except (OSError, tomllib.TOMLDecodeError) as exc:
            raise ValueError(f"--config {config}: {exc}") from None
        unknown = set(table) - set(GROUPS)
        if unknown:
            raise ValueError(f"--config {config}: no such section {sorted(unknown)}; the "
                             f"sections are {', '.join(GROUPS)}")
    given = vars(args)
    values: dict[str, Any] = {}
    for name in GROUPS:
        group = GROUPS[name]
        section = table.get(name, {})
        known = {f.name for f in dataclasses.fields(group)}
        if set(section) - known:
            raise ValueError(f"--config {config}: [{name}] has no setting "
                             f"{sorted(set(section) - known)}")
        fields: dict[str, Any] = {}
        for f in dataclasses.fields(group):
            key = f"{name}.{f.name}"
            try:
                if key in given:
                    fields[f.name] = _given(group, f, given[key])
                elif env_of(f) in environ:
                    fields[f.name] = _from_text(group, f, environ[env_of(f)])
                elif f.name in section:
                    fields[f.name] = _from_file(group, f, section[f.name])
            except (TypeError, ValueError) as exc:
                where = (flag_of(f) if key in given else env_of(f) if env_of(f) in environ
                         else f"[{name}] {f.name} in {config}")
                raise ValueError(f"{where}: {exc}") from None
        values[name] = group(**fields)
    return ServeSettings(**values)


def _given(group: type[Any], f: dataclasses.Field[Any], value: Any) -> Any:
    _, repeated = _kind(group, f)
    return tuple(value) if repeated else value


def _from_file(group: type[Any], f: dataclasses.Field[Any], value: Any) -> Any:
    base, repeated = _kind(group, f)
    if repeated:
        items = value if isinstance(value, list) else [value]
        return tuple(_one(f, base, item) for item in items)
    return _one(f, base, value)


def _one(f: dataclasses.Field[Any], base: type[Any], value: Any) -> Any:
    if isinstance(value, str) and base is not bool:
        return _text(f, base, value)
    if base is bool and isinstance(value, bool):
        return value
    if base is float and isinstance(value, int | float) and not isinstance(value, bool):
        return _converter(f, base)(str(value))  # its own checks: a duration is positive
    if base is int and isinstance(value, int) and not isinstance(value, bool):
        return _converter(f, base)(str(value))  # a port's range
    raise TypeError(f"{value!r} is not of type {base.__name__}")
