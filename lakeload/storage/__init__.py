"""Package storage: the load packages of a pipeline's working folder (extracted, normalized, loaded) and the
working folder itself, shared by extract, normalize and load (below them, above the destinations)."""
