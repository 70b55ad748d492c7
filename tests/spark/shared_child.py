"""Child process: one client of the local Connect server's shared session (`lakeload.spark.shared_session`).

usage: shared_child.py JSON  with key mode and, per mode:

- ``run``: a 10-record pipeline (``pipelines_dir``, ``bucket``); prints the session id, whether it is shared, the
  process tag and the row counts;
- ``hold``: records this client as the pipeline folder ``root``'s (as a pipeline run does), then runs a Spark
  operation that writes ``<out>/started-<name>`` and waits while ``<out>/hold-<name>`` exists, then writes
  ``<out>/finished-<name>``; prints the session id and tag once the operation runs;
- ``cleanup``: what the next run of that pipeline does first (``stop_abandoned``); prints how many operations
  it stopped;
- ``stop``: opens the session, stops it (``spark.stop()``); ``release``: releases the server session by hand,
  as a client outside lakeload could;
- ``exit``: opens the session, runs a query and exits; when the process exits, a hook that runs after pyspark's
  own prints whether pyspark's hook found the client closed (then it makes no call to the server).

HOME names the server (the ``connect_server`` fixture's).
"""

from __future__ import annotations

import json
import os
import sys
import threading
import time
from typing import Any


def wait_on_flag(out: str, name: str) -> Any:
    """A mapInPandas function: runs on the server's Python worker until the flag file is removed."""

    def run(frames: Any) -> Any:
        import os
        import time

        open(os.path.join(out, f"started-{name}"), "w").close()
        deadline = time.time() + 120
        while os.path.exists(os.path.join(out, f"hold-{name}")) and time.time() < deadline:
            time.sleep(0.1)
        open(os.path.join(out, f"finished-{name}"), "w").close()
        yield from frames

    return run


def main() -> None:
    args = json.loads(sys.argv[1])
    from lakeload.spark import shared_session
    from lakeload.spark.session import get_spark
    from lakeload.spark.shared_session import PROCESS_TAG, is_shared

    mode = args["mode"]
    if mode == "run":
        import lakeload

        pipeline = lakeload.pipeline("shared", destination=lakeload.destinations.filesystem(args["bucket"]),
                                     dataset_name="ds", pipelines_dir=args["pipelines_dir"])
        info = pipeline.run([{"id": i, "tags": ["a", "b"]} for i in range(10)], table_name="users")
        spark = pipeline.spark
        print(json.dumps({"session_id": spark.session_id, "shared": is_shared(spark), "tag": PROCESS_TAG,
                          "rows": dict(info.row_counts)}))
        return
    spark = get_spark()
    if mode == "hold":
        from lakeload.runtime.connect_prep import stop_abandoned

        out, name = args["out"], args["name"]
        stop_abandoned(args["root"], args["url"], spark.session_id, is_shared(spark))
        frame = spark.range(0, 1, numPartitions=1).mapInPandas(wait_on_flag(out, name), "id long")
        worker = threading.Thread(target=lambda: print(json.dumps({"rows": frame.count()}), flush=True), daemon=True)
        worker.start()
        while not os.path.exists(os.path.join(out, f"started-{name}")):
            time.sleep(0.05)
        print(json.dumps({"session_id": spark.session_id, "tag": PROCESS_TAG}), flush=True)
        worker.join()
    elif mode == "cleanup":
        import logging

        from lakeload.runtime.connect_prep import stop_abandoned

        messages: list[str] = []
        handler = logging.Handler()
        handler.emit = lambda record: messages.append(record.getMessage())  # type: ignore[method-assign]
        logging.getLogger("lakeload.spark").addHandler(handler)
        stop_abandoned(args["root"], args["url"], spark.session_id, is_shared(spark))
        print(json.dumps({"session_id": spark.session_id, "messages": messages}))
    elif mode == "stop":
        session_id = spark.session_id
        assert spark.range(3).count() == 3
        spark.stop()
        print(json.dumps({"session_id": session_id}))
    elif mode == "exit":
        import atexit

        client = spark.client
        assert spark.range(3).count() == 3
        pyspark_hook = client._on_exit

        def closed_for_pyspark() -> None:
            print(json.dumps({"closed": bool(client._closed)}), flush=True)

        atexit.unregister(pyspark_hook)  # pyspark's hook runs right after ours, seeing what it would see
        atexit.register(lambda: (closed_for_pyspark(), pyspark_hook()))
        atexit.unregister(shared_session._close_at_exit)
        atexit.register(shared_session._close_at_exit, spark)
    elif mode == "release":
        spark.client.release_session()
        print(json.dumps({"session_id": spark.session_id}))


if __name__ == "__main__":
    main()
