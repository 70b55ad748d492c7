"""Executor-safe: the Delta tasks: data files written, read, rewritten, keys and drops (driver side: lakeload.delta)."""
