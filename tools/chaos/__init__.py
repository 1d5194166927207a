"""A chaos run of replicas under load, and its checker: `python -m tools.chaos`."""
