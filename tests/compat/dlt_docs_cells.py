"""Run chosen cells of a marimo notebook of dlt's courses as marimo would, without marimo.

``python dlt_docs_cells.py NOTEBOOK.py 3 7 9 [--raises TEXT] [--serve URL=FILE ...]`` executes the notebook's cells number 3, 7 and 9 (counted from 0 over the
functions decorated with ``@app.cell``, the notebook's order) in that order: each cell is a function whose parameters
are the names it reads from earlier cells and whose ``return`` tuple names what it defines for later ones. Nothing else
of the file runs (no ``import marimo``, no ``app``). Used by ``test_dlt_docs_snippets.py``; the notebook text it gets is
already import-substituted. With ``--raises TEXT`` the last cell is one the notebook shows failing ("the run below
will fail"): it must raise, and the text of its exception chain must contain TEXT (case-insensitive); the exit status is
0 then, 1 when it does not raise. With ``--serve URL=FILE`` a cell that downloads URL (``urllib.request.urlopen``/
``urlretrieve`` or ``requests``, as the course notebooks do) gets the bytes of the local FILE instead, the network
untouched; any other URL fails ("not served offline").
"""

from __future__ import annotations

import ast
import email.message
import sys
import urllib.error
import urllib.request
import urllib.response
from pathlib import Path
from typing import IO, Any


def cells(tree: ast.Module) -> list[ast.FunctionDef]:
    """The notebook's cells in order: the module-level functions decorated with ``@app.cell`` (with or without args)."""
    found = []
    for node in tree.body:
        if isinstance(node, ast.FunctionDef) and any(
            ast.unparse(d.func if isinstance(d, ast.Call) else d) == "app.cell" for d in node.decorator_list
        ):
            found.append(node)
    return found


def returned_names(cell: ast.FunctionDef) -> list[str]:
    """The names a cell hands on: ``return (a, b)`` / ``return a, b`` / ``return a`` (as marimo generates them)."""
    last = cell.body[-1] if cell.body else None
    if not isinstance(last, ast.Return) or last.value is None:
        return []
    values = last.value.elts if isinstance(last.value, ast.Tuple) else [last.value]
    return [value.id for value in values if isinstance(value, ast.Name)]


def chain_text(exc: BaseException | None) -> str:
    texts = []
    while exc is not None:
        texts.append(f"{type(exc).__name__}: {exc}")
        exc = exc.__cause__ or exc.__context__
    return "\n".join(texts)


class OfflineHandler(urllib.request.BaseHandler):
    """urllib's handler of http(s) URLs that answers the served ones from local files and refuses the others."""

    handler_order = 100  # before urllib's own http(s) handlers

    def __init__(self, served: dict[str, Path]) -> None:
        self.served = served

    def http_open(self, request: urllib.request.Request) -> urllib.response.addinfourl:
        path = served_file(self.served, request.full_url, urllib.error.URLError)
        headers = email.message.Message()
        headers["Content-Length"] = str(path.stat().st_size)
        body: IO[bytes] = path.open("rb")
        response = urllib.response.addinfourl(body, headers, request.full_url, 200)
        response.msg = "OK"  # urllib's HTTPErrorProcessor reads it, as from http.client's responses
        return response

    https_open = http_open


def served_file(served: dict[str, Path], url: str, error: type[Exception]) -> Path:
    if url not in served:
        raise error(f"{url} is not served offline (the case's `downloads` in cases.toml serve {sorted(served)})")
    return served[url]


def serve_offline(served: dict[str, Path]) -> None:
    """Downloads of `served` URLs (urllib's and requests') read the local files; other URLs fail."""
    urllib.request.install_opener(urllib.request.build_opener(OfflineHandler(served)))
    try:
        import requests
        import requests.adapters
    except ImportError:
        return

    def send(adapter: Any, request: Any, **kwargs: Any) -> Any:
        path = served_file(served, request.url, requests.ConnectionError)
        response = requests.Response()
        response.status_code, response.url, response.request = 200, request.url, request
        response._content = path.read_bytes()  # noqa: SLF001 - a response built without a socket
        response.headers["Content-Length"] = str(len(response._content))  # noqa: SLF001
        return response

    requests.adapters.HTTPAdapter.send = send  # type: ignore[method-assign]


def run_cells(path: Path, numbers: list[int], raises: str | None = None) -> int:
    source = path.read_text(encoding="utf-8")
    tree = ast.parse(source, filename=str(path))
    every = cells(tree)
    namespace: dict[str, Any] = {}
    for number in numbers:
        cell = every[number]
        cell.decorator_list = []
        module = ast.Module(body=[cell], type_ignores=[])
        scope: dict[str, Any] = {"__name__": "__main__"}
        exec(compile(module, f"{path.name}#cell{number}", "exec"), scope)  # noqa: S102 - the notebook's own code
        args = [namespace[arg.arg] for arg in cell.args.args]
        print(f"--- cell {number}", flush=True)
        if raises is not None and number == numbers[-1]:
            try:
                scope[cell.name](*args)
            except Exception as exc:  # noqa: BLE001 - the failure the notebook shows
                text = chain_text(exc)
                print(f"--- cell {number} raised, as the notebook shows:\n{text}", flush=True)
                return 0 if raises.lower() in text.lower() else 1
            print(f"--- cell {number} did not raise (the notebook shows it failing)", flush=True)
            return 1
        result = scope[cell.name](*args)
        names = returned_names(cell)
        values = result if isinstance(result, tuple) else (result,)
        namespace.update(zip(names, values, strict=False))
    return 0


def option_values(arguments: list[str], name: str) -> list[str]:
    """The values of every `name VALUE` pair in `arguments`, removed from them."""
    values = []
    while name in arguments:
        at = arguments.index(name)
        values.append(arguments[at + 1])
        del arguments[at:at + 2]
    return values


if __name__ == "__main__":
    arguments = sys.argv[2:]
    expected = next(iter(option_values(arguments, "--raises")), None)
    served = dict(value.rsplit("=", 1) for value in option_values(arguments, "--serve"))
    if served:
        serve_offline({url: Path(path) for url, path in served.items()})
    sys.exit(run_cells(Path(sys.argv[1]), [int(n) for n in arguments], expected))
