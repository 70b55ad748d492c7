"""Executor-safe: the load tasks: copying a package's files into a bucket, checking them, delivering them to a sink."""
