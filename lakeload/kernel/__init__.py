"""Executor-safe: the kernel, every piece of lakeload that Spark ships to its Python workers.

Its modules import only the kernel itself, `lakeload.common`, `lakeload.schema`, `lakeload.errors` and the
libraries a bare worker with lakeload installed has (pyarrow, numpy, orjson, pendulum, fsspec, pyspark's worker
side, paramiko); never the driver's configuration, pipeline, loaders, SQL client or a driver-only library
(deltalake, duckdb, ...). `pyproject.toml`'s import contracts check that for every import, and
`lakeload.spark.kernel_code.require_kernel` lets only kernel functions into `run_tasks` / `map_in_arrow`.

Its sub-packages follow the driver-side package they serve: `normalize` (the normalize tasks), `delta` (data
files of Delta tables), `filesystem` (buckets: fsspec, retries, layouts, paths), `load` (copying and sink
delivery), `spark` (the task runner, the Python daemon, the working bucket), `sql` (reading tables).
"""
