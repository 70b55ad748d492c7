"""Executor-safe: what runs inside Spark's Python workers: the task runner, the Python daemon, the working bucket, warm-up."""
