"""serve's settings (app/settings.py): one declaration gives the flags, the
environment variables and the TOML file, and a flag wins over a variable,
which wins over the file, which wins over the default."""

from __future__ import annotations

import argparse
from pathlib import Path

import pytest

from a2a_grpc.app.settings import GROUPS, ServeSettings
from a2a_grpc.app.settings_load import add_flags, load


def parse(*argv: str) -> argparse.Namespace:
    parser = argparse.ArgumentParser()
    parser.add_argument("--config", type=Path)
    add_flags(parser, *GROUPS)
    return parser.parse_args(argv)


def settings(*argv: str, env: dict[str, str] | None = None,
             toml: str | None = None, tmp: Path | None = None) -> ServeSettings:
    config = None
    if toml is not None:
        assert tmp is not None
        config = tmp / "a2a.toml"
        config.write_text(toml)
    return load(parse(*argv), config, env or {})


def test_nothing_given_is_the_defaults() -> None:
    assert settings() == ServeSettings()
    assert ServeSettings().network.grpc_port == 50051
    assert ServeSettings().store.url == "sqlite:///a2a-grpc.db"


def test_a_flag_wins_over_a_variable_which_wins_over_the_file(tmp_path: Path) -> None:
    toml = """
[network]
keepalive = 7
http_port = 9000
[store]
url = "memory"
retention = "2h"
[push]
allow_push_to = ["10.0.0.0/8", ".example.com"]
allow_http_push = true
"""
    from_file = settings(toml=toml, tmp=tmp_path)
    assert from_file.network.keepalive == 7.0 and from_file.network.http_port == 9000
    assert from_file.store.url == "memory" and from_file.store.retention == 7200
    assert from_file.push.allow_push_to == ("10.0.0.0/8", ".example.com")
    assert from_file.push.allow_http_push is True
    env = {"A2A_GRPC_KEEPALIVE": "3", "A2A_GRPC_ALLOW_PUSH_TO": "a.example, b.example",
           "A2A_GRPC_ALLOW_HTTP_PUSH": "false", "A2A_GRPC_STORE": "sqlite:///x.db"}
    from_env = settings(env=env, toml=toml, tmp=tmp_path)
    assert from_env.network.keepalive == 3.0 and from_env.network.http_port == 9000
    assert from_env.push.allow_push_to == ("a.example", "b.example")
    assert from_env.push.allow_http_push is False and from_env.store.url == "sqlite:///x.db"
    flags = settings("--keepalive", "0.5", "--allow-push-to", "c.example", "--store",
                     "memory", "--allow-http-push", env=env, toml=toml, tmp=tmp_path)
    assert flags.network.keepalive == 0.5 and flags.push.allow_push_to == ("c.example",)
    assert flags.store.url == "memory" and flags.push.allow_http_push is True
    assert flags.network.http_port == 9000  # what no flag names still comes from below


@pytest.mark.parametrize(("toml", "env", "error"), [
    ("[nets]\nhost = 'x'", {}, "no such section ['nets']"),
    ("[network]\nhots = 'x'", {}, "[network] has no setting ['hots']"),
    ("[network]\ngrpc_port = 'many'", {}, "[network] grpc_port in"),
    ("[network]\ngrpc_port = 1.5", {}, "1.5 is not of type int"),
    ("[observability]\nlog_format = 'xml'", {}, "'xml' is not one of text, json"),
    ("[store]\nretention = '-3d'", {}, "duration must be positive"),
    ("", {"A2A_GRPC_ALLOW_HTTP_PUSH": "maybe"}, "A2A_GRPC_ALLOW_HTTP_PUSH: 'maybe' is not true"),
    ("", {"A2A_GRPC_GRPC_PUBLIC_ADDRESS": "grpc://"}, "A2A_GRPC_GRPC_PUBLIC_ADDRESS"),
    ("not toml = = ", {}, "--config"),
    ("", {"A2A_GRPC_HTTP_PORT": "abc"}, "A2A_GRPC_HTTP_PORT: 'abc' is not a whole number"),
    ("", {"A2A_GRPC_KEEPALIVE": "soon"}, "A2A_GRPC_KEEPALIVE: 'soon' is not a number"),
    ("[network]\ngrpc_port = 99999", {}, "99999 is not a TCP port (0 to 65535)"),
    ("[network]\nhttp_port = 'x'", {}, "'x' is not a whole number"),
])
def test_bad_settings_say_which_and_where(tmp_path: Path, toml: str, env: dict[str, str],
                                          error: str) -> None:
    with pytest.raises(ValueError) as info:
        settings(env=env, toml=toml, tmp=tmp_path)
    assert error in str(info.value)


def test_help_groups_the_flags() -> None:
    parser = argparse.ArgumentParser()
    add_flags(parser, *GROUPS)
    text = parser.format_help()
    sections = [line.split(":")[0] for line in text.splitlines()
                if (line and not line.startswith(" ") and line.endswith(":")) or (": " in line
                and not line.startswith(" "))]
    for name in ("network", "store", "security", "push notifications", "observability",
                 "limits per caller"):
        assert any(s.startswith(name) for s in sections), (name, sections)
    assert text.index("--grpc-port") < text.index("--store") < text.index("--api-keys") \
        < text.index("--allow-push-to") < text.index("--metrics-port") < text.index("--rate-limit")


def test_a_store_url_is_shown_without_its_password() -> None:
    shown = settings("--store", "postgresql://app:s3cret@db:5432/a2a").store.shown
    assert shown == "postgresql://app:***@db:5432/a2a"
    assert settings("--store", "sqlite:///tasks.db").store.shown == "sqlite:///tasks.db"
