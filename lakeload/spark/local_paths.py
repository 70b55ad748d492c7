"""Local paths as Spark reads and writes them: `file://` URIs, so a cluster whose default file system is
HDFS (or another) still finds the pipeline's folders (working_url) and local sources.

>>> local_uri("/data/pkg/000001.users.spark")
'file:///data/pkg/000001.users.spark'
"""

from __future__ import annotations

import os


def local_uri(path: str) -> str:
    """A `file://` URI of a local path (absolute); a path that already is a URI is returned as it is."""
    if "://" in path:
        return path
    return "file://" + os.path.abspath(path)
