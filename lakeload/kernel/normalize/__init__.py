"""Executor-safe: the normalize tasks over a package's splits: relational normalization, coercion, contracts, writers."""
