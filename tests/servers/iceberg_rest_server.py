"""An Iceberg REST catalog server for the tests: the REST catalog API (the parts pyiceberg's `RestCatalog` calls:
config, namespaces, tables, staged creates, commits, register, rename, drop) over HTTP on 127.0.0.1, each request
carried out by a pyiceberg SQL catalog on an SQLite file (which checks a commit's requirements against the stored
metadata, so a commit on a stale snapshot is refused with 409 as by any REST catalog).

Run as a process: `python iceberg_rest_server.py <port> <sqlite file> <warehouse uri> [<bearer token>]`; it prints "ready"
once it listens, and every request must carry `Authorization: Bearer <token>` when a token is given. The fixture
`iceberg_rest_catalog` (`servers.iceberg_rest`) starts one for a test (a fresh SQLite file) and stops it after.
"""

from __future__ import annotations

import json
import re
import signal
import sys
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any
from urllib.parse import parse_qs, unquote, urlsplit

from pyiceberg.catalog.rest import CreateTableRequest, RegisterTableRequest, TableResponse
from pyiceberg.catalog.sql import SqlCatalog
from pyiceberg.exceptions import (
    CommitFailedException,
    NamespaceAlreadyExistsError,
    NamespaceNotEmptyError,
    NoSuchNamespaceError,
    NoSuchTableError,
    TableAlreadyExistsError,
)
from pyiceberg.partitioning import UNPARTITIONED_PARTITION_SPEC
from pyiceberg.table import CommitTableRequest
from pyiceberg.table.metadata import new_table_metadata
from pyiceberg.table.sorting import UNSORTED_SORT_ORDER

SEPARATOR = "\x1f"
ERRORS: dict[type[Exception], tuple[int, str]] = {
    NoSuchTableError: (404, "NoSuchTableException"),
    NoSuchNamespaceError: (404, "NoSuchNamespaceException"),
    TableAlreadyExistsError: (409, "AlreadyExistsException"),
    NamespaceAlreadyExistsError: (409, "AlreadyExistsException"),
    NamespaceNotEmptyError: (409, "NamespaceNotEmptyException"),
    CommitFailedException: (409, "CommitFailedException"),
}


class _Named:
    """What the SQL catalog's `commit_table` reads of the table it is given: its identifier."""

    def __init__(self, identifier: tuple[str, ...]) -> None:
        self.identifier = identifier

    def name(self) -> tuple[str, ...]:
        return self.identifier


class Catalogs:
    """The backing SQL catalog; one request at a time changes it."""

    def __init__(self, database: str, warehouse: str) -> None:
        self.sql = SqlCatalog("rest_backend", uri=f"sqlite:///{database}", warehouse=warehouse)
        self.warehouse = warehouse.rstrip("/")
        self.lock = threading.Lock()
        self.commits = 0  # commits carried out (for the tests' checks)

    def table(self, identifier: tuple[str, ...]) -> dict[str, Any]:
        loaded = self.sql.load_table(identifier)
        return _dump(TableResponse(**{"metadata-location": loaded.metadata_location, "metadata": loaded.metadata}))

    def create(self, namespace: tuple[str, ...], request: CreateTableRequest) -> dict[str, Any]:
        identifier = (*namespace, request.name)
        if not self.sql.namespace_exists(namespace):
            raise NoSuchNamespaceError(f"Namespace does not exist: {namespace}")
        if not request.stage_create:
            self.sql.create_table(identifier, request.table_schema, request.location,
                                  request.partition_spec or UNPARTITIONED_PARTITION_SPEC,
                                  request.write_order or UNSORTED_SORT_ORDER, request.properties)
            return self.table(identifier)
        if self.sql.table_exists(identifier):
            raise TableAlreadyExistsError(f"Table already exists: {identifier}")
        location = request.location or f"{self.warehouse}/{'/'.join(namespace)}/{request.name}"
        metadata = new_table_metadata(request.table_schema, request.partition_spec or UNPARTITIONED_PARTITION_SPEC,
                                      request.write_order or UNSORTED_SORT_ORDER, location, dict(request.properties))
        return _dump(TableResponse(metadata=metadata))

    def commit(self, request: CommitTableRequest) -> dict[str, Any]:
        identifier = (*request.identifier.namespace.root, request.identifier.name)
        response = self.sql.commit_table(_Named(identifier), request.requirements, request.updates)  # type: ignore[arg-type]
        self.commits += 1
        return json.loads(response.model_dump_json(by_alias=True))


def _dump(response: TableResponse) -> dict[str, Any]:
    return json.loads(response.model_dump_json(by_alias=True, exclude_none=True))


def _namespace(text: str) -> tuple[str, ...]:
    return tuple(unquote(text).split(SEPARATOR))


ROUTES = [
    ("GET", r"/v1/config"),
    ("GET", r"/v1/namespaces"),
    ("POST", r"/v1/namespaces"),
    ("GET", r"/v1/namespaces/(?P<ns>[^/]+)"),
    ("HEAD", r"/v1/namespaces/(?P<ns>[^/]+)"),
    ("DELETE", r"/v1/namespaces/(?P<ns>[^/]+)"),
    ("GET", r"/v1/namespaces/(?P<ns>[^/]+)/tables"),
    ("POST", r"/v1/namespaces/(?P<ns>[^/]+)/tables"),
    ("POST", r"/v1/namespaces/(?P<ns>[^/]+)/register"),
    ("GET", r"/v1/namespaces/(?P<ns>[^/]+)/tables/(?P<table>[^/]+)"),
    ("HEAD", r"/v1/namespaces/(?P<ns>[^/]+)/tables/(?P<table>[^/]+)"),
    ("POST", r"/v1/namespaces/(?P<ns>[^/]+)/tables/(?P<table>[^/]+)"),
    ("DELETE", r"/v1/namespaces/(?P<ns>[^/]+)/tables/(?P<table>[^/]+)"),
    ("POST", r"/v1/tables/rename"),
]


def handle(catalogs: Catalogs, method: str, path: str, query: dict[str, list[str]], body: bytes) -> tuple[int, Any]:
    """One request: its status and JSON answer (None: no body)."""
    for route_method, pattern in ROUTES:
        found = re.fullmatch(pattern, path)
        if found and route_method == method:
            return _carry_out(catalogs, method, pattern, found.groupdict(), query, body)
    return 404, {"error": {"message": f"No route for {method} {path}", "type": "NotFoundException", "code": 404}}


def _carry_out(catalogs: Catalogs, method: str, pattern: str, parts: dict[str, str], query: dict[str, list[str]],
               body: bytes) -> tuple[int, Any]:
    sql = catalogs.sql
    ns = _namespace(parts["ns"]) if "ns" in parts else ()
    identifier = (*ns, unquote(parts["table"])) if "table" in parts else ()
    if pattern == r"/v1/config":
        return 200, {"defaults": {}, "overrides": {}}
    if pattern == r"/v1/namespaces":
        if method == "GET":
            return 200, {"namespaces": [list(n) for n in sql.list_namespaces()]}
        request = json.loads(body)
        sql.create_namespace(tuple(request["namespace"]), request.get("properties") or {})
        return 200, {"namespace": request["namespace"], "properties": request.get("properties") or {}}
    if pattern.endswith("/register"):
        register = RegisterTableRequest.model_validate_json(body)
        sql.register_table((*ns, register.name), register.metadata_location)
        return 200, catalogs.table((*ns, register.name))
    if pattern == r"/v1/tables/rename":
        request = json.loads(body)
        source, target = request["source"], request["destination"]
        sql.rename_table((*source["namespace"], source["name"]), (*target["namespace"], target["name"]))
        return 204, None
    if pattern.endswith("/tables"):
        if method == "GET":
            return 200, {"identifiers": [{"namespace": list(i[:-1]), "name": i[-1]} for i in sql.list_tables(ns)]}
        return 200, catalogs.create(ns, CreateTableRequest.model_validate_json(body))
    if "table" in parts:
        if method == "GET":
            return 200, catalogs.table(identifier)
        if method == "HEAD":
            return (204 if sql.table_exists(identifier) else 404), None
        if method == "DELETE":
            (sql.purge_table if query.get("purgeRequested") == ["true"] else sql.drop_table)(identifier)
            return 204, None
        return 200, catalogs.commit(CommitTableRequest.model_validate_json(body))
    if method == "HEAD":
        return (204 if sql.namespace_exists(ns) else 404), None
    if method == "DELETE":
        sql.drop_namespace(ns)
        return 204, None
    return 200, {"namespace": list(ns), "properties": sql.load_namespace_properties(ns)}


def serve(port: int, database: str, warehouse: str, token: str | None) -> None:
    signal.signal(signal.SIGTERM, signal.SIG_DFL)  # stoppable by SIGTERM whatever the parent's disposition
    catalogs = Catalogs(database, warehouse)

    class Handler(BaseHTTPRequestHandler):
        def log_message(self, format: str, *args: Any) -> None:  # quiet
            return

        def _answer(self) -> None:
            if token is not None and self.headers.get("Authorization") != f"Bearer {token}":
                self._send(401, {"error": {"message": "Not authorized", "type": "NotAuthorizedException", "code": 401}})
                return
            url = urlsplit(self.path)
            body = self.rfile.read(int(self.headers.get("Content-Length") or 0))
            try:
                with catalogs.lock:
                    status, answer = handle(catalogs, self.command, url.path, parse_qs(url.query), body)
            except Exception as exc:  # noqa: BLE001 - every failure is the client's to see
                status, kind = next(((s, k) for t, (s, k) in ERRORS.items() if isinstance(exc, t)), (500, type(exc).__name__))
                answer = {"error": {"message": str(exc), "type": kind, "code": status}}
            self._send(status, answer)

        def _send(self, status: int, answer: Any) -> None:
            data = b"" if answer is None or self.command == "HEAD" else json.dumps(answer).encode()
            self.send_response(status)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(data)))
            self.end_headers()
            self.wfile.write(data)

        do_GET = do_POST = do_HEAD = do_DELETE = _answer

    server = ThreadingHTTPServer(("127.0.0.1", port), Handler)
    print("ready", flush=True)
    server.serve_forever()


if __name__ == "__main__":
    serve(int(sys.argv[1]), sys.argv[2], sys.argv[3], sys.argv[4] if len(sys.argv) > 4 else None)

