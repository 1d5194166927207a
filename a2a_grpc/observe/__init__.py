"""Observability: metrics (metrics.py), traces (tracing.py), each binding's
calls counted and traced (observed.py), and JSON logs (logs.py)."""
