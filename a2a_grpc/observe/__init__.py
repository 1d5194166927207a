"""Observability: metrics (metrics.py), traces (tracing.py), each binding's
calls counted and traced (service.py), and JSON logs (logs.py)."""
