"""Runnable examples (also imported by the tests)."""
