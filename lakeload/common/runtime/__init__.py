"""dlt's `dlt.common.runtime` as user code imports it: `signals` (`from lakeload.common.runtime import signals`)."""
