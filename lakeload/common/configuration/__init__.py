"""dlt's `dlt.common.configuration`, as far as user code imports it: `providers.CustomLoaderDocProvider`, the
configuration provider a script registers with `lakeload.config.register_provider(...)`.

>>> from lakeload.common.configuration.providers import CustomLoaderDocProvider
>>> CustomLoaderDocProvider("settings", lambda: {"sources": {"api": {"page_size": 5}}}).name
'settings'
"""
