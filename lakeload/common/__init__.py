"""Contracts every layer shares: the active-pipeline context, and (next) the typed shapes of data that crosses
layers. Imports nothing from lakeload but `schema` and `errors`."""
