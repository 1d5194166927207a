"""How a setting's text (a flag, a variable, a TOML string) becomes its value,
said in plain words when it cannot: a whole number, a number, a TCP port, a
duration. settings.py names them as its fields' `convert`; settings_load.py
uses the first two for any int or float setting."""

from __future__ import annotations


def number(text: str) -> int:
    """A whole number, said so when it is not (not int()'s own words)."""
    try:
        return int(text)
    except ValueError:
        raise ValueError(f"{text!r} is not a whole number") from None


def decimal(text: str) -> float:
    """A number, said so when it is not (not float()'s own words)."""
    try:
        return float(text)
    except ValueError:
        raise ValueError(f"{text!r} is not a number") from None


def port(text: str) -> int:
    """A TCP port, 0 to 65535 (0: the system picks one); a larger one would wrap."""
    value = number(text)
    if not 0 <= value <= 65535:
        raise ValueError(f"{value} is not a TCP port (0 to 65535)")
    return value


def duration(text: str) -> float:
    """`90`, `90s`, `30m`, `12h`, `7d` -> seconds."""
    units = {"s": 1, "m": 60, "h": 3600, "d": 86400}
    amount, unit = (text[:-1], text[-1]) if text and text[-1] in units else (text, "s")
    try:
        value = float(amount) * units[unit]
    except ValueError:
        raise ValueError(f"{text!r} is not a duration like 90s, 30m, 12h or 7d") from None
    if value <= 0:
        raise ValueError("a duration must be positive")
    return value
