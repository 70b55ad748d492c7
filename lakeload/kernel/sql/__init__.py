"""Executor-safe: reading a dataset's table files in Spark tasks (driver side: lakeload.sql)."""
