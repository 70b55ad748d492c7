# A source with a secret, signals and logger (the style of dlt's "source" and "rate limits" pages)
from collections.abc import Sequence

from _show import pipeline_for, show

import lakeload as dlt
from lakeload.common import logger
from lakeload.common.runtime import signals
from lakeload.common.typing import TDataItems, TSecretStrValue
from lakeload.extract import DltResource, DltSource


@dlt.source
def api(api_key: TSecretStrValue = dlt.secrets.value) -> Sequence[DltResource]:
    @dlt.resource(write_disposition="replace")
    def pages() -> TDataItems:
        for n in range(3):
            signals.raise_if_signalled()
            logger.info("page %s", n)
            yield {"page": n, "key_suffix": api_key[-2:]}
            signals.sleep(0.01)

    return [pages]


source = api()
assert isinstance(source, DltSource)
pipeline = pipeline_for("polite_source")
pipeline.run(source, loader_file_format="parquet")
show(pipeline, "pages")
