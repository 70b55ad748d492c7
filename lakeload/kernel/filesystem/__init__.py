"""Executor-safe: buckets as executors reach them: fsspec file systems with retries, SFTP, file layouts and safe paths."""
