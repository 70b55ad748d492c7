"""dlt's `dlt.common.storages` as user code imports it: `fsspec_filesystem.FileItemDict`, the file item a files
source yields (`from dlt.common.storages.fsspec_filesystem import FileItemDict` in a dlt script)."""
