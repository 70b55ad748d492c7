"""No name, layout or callback writes outside the bucket's dataset folder and the pipeline's working folder.

Every attempt runs in a sandbox: the bucket is ``<tmp>/sb/a/b/bucket`` (or a bucket prefix ``.../a/b/bucket``
on memory:// and on the moto S3 server) and pipelines live in ``<tmp>/sb/pipelines``, so a ``../../x`` that
escaped would land where the test sees it. Absolute values point inside the sandbox for the same reason.
After each attempt the test asserts the error (type and message) and that no file appeared outside the
bucket and the pipelines folder (local disk, the in-memory store, the S3 server, and ``/`` itself).
"""

from __future__ import annotations

import importlib
import os
import uuid
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import fsspec
import pytest
from servers.fixtures import fresh_prefix

import lakeload
from lakeload.errors import InvalidNameError, PipelineStepFailed, UnsafeLayoutPathError
from lakeload.storage.packages import EXTRACTED, EXTRACTING, NORMALIZED, NORMALIZING

ROWS = [{"id": 1, "kind": "a"}, {"id": 2, "kind": "b"}]
PACKAGE_STAGES = (EXTRACTING, EXTRACTED, NORMALIZING, NORMALIZED)


@dataclass
class Sandbox:
    """A bucket (local folder, memory:// or S3 prefix) two levels below a root the test watches."""

    tmp: Path
    backend: str
    bucket_url: str
    destination_kwargs: dict[str, Any]
    s3: Any = None
    before: dict[str, set[str]] = field(default_factory=dict)

    @property
    def root(self) -> Path:
        return self.tmp / "sb"

    @property
    def pipelines(self) -> Path:
        return self.root / "pipelines"

    def destination(self, **kwargs: Any) -> Any:
        return lakeload.destinations.filesystem(self.bucket_url, **self.destination_kwargs, **kwargs)

    def pipeline(self, name: str | None = None, **kwargs: Any) -> lakeload.Pipeline:
        name = name or f"esc_{uuid.uuid4().hex[:8]}"
        kwargs.setdefault("destination", self.destination())
        return lakeload.pipeline(name, pipelines_dir=str(self.pipelines), **kwargs)

    def _bucket_key(self) -> str:
        return self.bucket_url.split("://", 1)[-1].rstrip("/")

    def files(self) -> dict[str, set[str]]:
        """Every file the attempt could have written: under tmp, at /, in the memory store, on the S3 server."""
        found = {"local": {str(p) for p in self.tmp.rglob("*") if not p.is_dir()}, "/": set(os.listdir("/"))}
        if self.backend == "memory":
            found["memory"] = set(fsspec.filesystem("memory").store)
        if self.backend == "s3":
            fs = fsspec.filesystem("s3", endpoint_url=self.s3.endpoint_url, key=self.s3.access_key,
                                   secret=self.s3.secret_key, skip_instance_cache=True)
            found["s3 buckets"] = set(fs.ls("", detail=False))
            found["s3"] = set(fs.find(self.s3.bucket))
        return found

    def snapshot(self) -> None:
        self.before = self.files()

    def outside(self) -> list[str]:
        """New files outside the bucket's folder and the pipelines folder (or with '.'/'..' segments)."""
        inside = (str(self.root / "a" / "b" / "bucket") + "/", str(self.pipelines) + "/")
        bucket_key = self._bucket_key() + "/"
        escaped: list[str] = []
        for where, now in self.files().items():
            for path in sorted(now - self.before.get(where, set())):
                dotted = any(part in (".", "..") for part in path.split("/"))
                allowed = {"local": inside, "memory": bucket_key, "s3": bucket_key}.get(where)  # None: nothing new
                if allowed is None or dotted or not path.lstrip("/" if where != "local" else "").startswith(allowed):
                    escaped.append(f"{where}: {path}")
        return escaped


def make_sandbox(backend: str, tmp_path: Path, request: pytest.FixtureRequest) -> Sandbox:
    tag = uuid.uuid4().hex[:10]
    if backend == "local":
        bucket = tmp_path / "sb" / "a" / "b" / "bucket"
        bucket.mkdir(parents=True)
        return Sandbox(tmp_path, backend, str(bucket), {})
    if backend == "memory":
        return Sandbox(tmp_path, backend, f"memory://escape-{tag}/a/b/bucket", {})
    s3 = request.getfixturevalue("s3_server")
    credentials = s3.credentials()
    url = f"s3://{s3.bucket}/{fresh_prefix('escape')}/a/b/bucket"
    return Sandbox(tmp_path, backend, url, {"credentials": credentials}, s3)


@pytest.fixture(params=["local", "memory", "s3"])
def sandbox(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[Sandbox]:
    box = make_sandbox(request.param, tmp_path, request)
    box.snapshot()
    yield box
    assert box.outside() == []


@pytest.fixture(params=["local", "memory"])
def quick_sandbox(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[Sandbox]:
    """The same, without S3, for entry points whose check does not depend on the bucket."""
    box = make_sandbox(request.param, tmp_path, request)
    box.snapshot()
    yield box
    assert box.outside() == []


def no_packages(p: lakeload.Pipeline) -> bool:
    return all(not p.storage.list_packages(stage) for stage in PACKAGE_STAGES)


def dlt_table_name(naming: str, name: str) -> str:
    return str(importlib.import_module(f"dlt.common.normalizers.naming.{naming}").NamingConvention().normalize_tables_path(name))


# -- pipeline and dataset names ----------------------------------------------------------------------


@pytest.mark.parametrize("name", ["../escape_pipe", "../../escape_pipe", "a/b", "..", ".", "a\\b", "a\x00b", "ABS"])
def test_pipeline_name_that_leaves_pipelines_dir_is_rejected(quick_sandbox: Sandbox, name: str) -> None:
    name = str(quick_sandbox.root / "abs_pipe") if name == "ABS" else name
    with pytest.raises(InvalidNameError) as raised:
        quick_sandbox.pipeline(name)
    assert isinstance(raised.value, ValueError) and "Pipeline name" in str(raised.value) and repr(name) in str(raised.value)
    with pytest.raises(InvalidNameError, match="it is empty"):
        lakeload.Pipeline("", pipelines_dir=str(quick_sandbox.pipelines))


@pytest.mark.parametrize("name", ["../../escape_ds", "..", "a/b", "a\\b", "a\x00b", "  ", "ABS"])
def test_dataset_name_that_leaves_the_bucket_is_rejected(sandbox: Sandbox, name: str) -> None:
    name = str(sandbox.root / "abs_ds") if name == "ABS" else name
    with pytest.raises(InvalidNameError, match="Dataset name") as raised:
        sandbox.pipeline(dataset_name=name)
    assert repr(name) in str(raised.value) and "Fix: pass a dataset_name" in str(raised.value)
    p = sandbox.pipeline(dataset_name="ds")  # the same name given later, to run() or load(), is rejected too
    with pytest.raises(InvalidNameError, match="Dataset name"):
        p.run(ROWS, table_name="t", dataset_name=name)
    with pytest.raises(InvalidNameError, match="Dataset name"):
        p.load(dataset_name=name)
    assert p.dataset_name == "ds" and no_packages(p)


# -- table names -------------------------------------------------------------------------------------

Entry = Callable[[lakeload.Pipeline, str], Any]


def via_run(p: lakeload.Pipeline, name: str) -> Any:
    return p.run(ROWS, table_name=name)


def via_resource_decorator(p: lakeload.Pipeline, name: str) -> Any:
    @lakeload.resource(table_name=name)
    def rows() -> Iterator[dict[str, Any]]:
        yield from ROWS

    return p.run(rows())


def via_apply_hints(p: lakeload.Pipeline, name: str) -> Any:
    return p.run(lakeload.resource(ROWS, name="rows").apply_hints(table_name=name))


def via_with_hints(p: lakeload.Pipeline, name: str) -> Any:
    return p.run(lakeload.resource(ROWS, name="rows").with_hints(table_name=name))


def via_resource_name(p: lakeload.Pipeline, name: str) -> Any:
    return p.run(lakeload.resource(ROWS, name=name))


def via_source(p: lakeload.Pipeline, name: str) -> Any:
    @lakeload.source
    def crm() -> Any:
        return [lakeload.resource(ROWS, name="ok"), lakeload.resource(ROWS, name="rows", table_name=name)]

    return p.run(crm())


ENTRIES = [via_run, via_resource_decorator, via_apply_hints, via_with_hints, via_resource_name, via_source]
DIRECT_BAD = ["../x", "../../escape", "a/b", "..", "a\\b", "a\x00b", "ABS"]


@pytest.mark.parametrize("entry", ENTRIES, ids=lambda e: e.__name__)
@pytest.mark.parametrize("name", DIRECT_BAD)
def test_table_names_kept_unsafe_by_direct_naming_are_rejected_before_extract(
    quick_sandbox: Sandbox, entry: Entry, name: str
) -> None:
    name = str(quick_sandbox.root / "abs_table") if name == "ABS" else name
    p = quick_sandbox.pipeline(destination=quick_sandbox.destination(naming_convention="direct"))
    with pytest.raises(InvalidNameError, match="Table name") as raised:
        entry(p, name)
    message = str(raised.value)
    assert repr(name) in message and "'direct' naming convention" in message and "Fix:" in message
    assert no_packages(p) and not p.state.get("default_schema_name")  # nothing extracted, state untouched


@pytest.mark.parametrize("entry", ENTRIES, ids=lambda e: e.__name__)
@pytest.mark.parametrize("naming", ["snake_case", "sql_cs_v1", "direct"])
def test_empty_table_names_are_rejected(quick_sandbox: Sandbox, entry: Entry, naming: str) -> None:
    p = quick_sandbox.pipeline(destination=quick_sandbox.destination(naming_convention=naming))
    for name in ("", "   "):
        if entry in (via_resource_name, via_apply_hints, via_with_hints) and name == "":
            continue  # resource(data, name="") falls back to the data's or the default name, and
            # apply_hints(table_name="") removes the hint (the resource's name is used), as in dlt
        with pytest.raises(InvalidNameError, match="it is empty"):
            entry(p, name)
    assert no_packages(p)


@pytest.mark.parametrize("name", ["../../escape", "a/b"])
def test_table_names_on_s3_are_rejected(request: pytest.FixtureRequest, tmp_path: Path, name: str) -> None:
    box = make_sandbox("s3", tmp_path, request)
    box.snapshot()
    p = box.pipeline(destination=box.destination(naming_convention="direct"))
    with pytest.raises(InvalidNameError, match="Table name"):
        p.run(ROWS, table_name=name)
    assert box.outside() == [] and no_packages(p)


def kinds(names: list[Any], consumed: list[Any]) -> Iterator[dict[str, Any]]:
    for i, name in enumerate(names):
        consumed.append(name)
        yield {"id": i, "kind": name}


@pytest.mark.parametrize(
    ("naming", "bad"), [("direct", "../../escape"), ("direct", "a/b"), ("duck_case", ".."), ("snake_case", ""),
                        ("snake_case", None)]
)
def test_table_name_callable_is_checked_per_item_before_the_item_is_written(
    quick_sandbox: Sandbox, naming: str, bad: Any
) -> None:
    p = quick_sandbox.pipeline(destination=quick_sandbox.destination(naming_convention=naming))
    consumed: list[Any] = []
    data = lakeload.resource(kinds(["ok", "ok", bad, "later"], consumed), name="events", table_name=lambda item: item["kind"])
    with pytest.raises(PipelineStepFailed) as raised:
        p.run(data)
    assert raised.value.step == "extract" and isinstance(raised.value.__cause__, InvalidNameError)
    assert repr(bad) in str(raised.value)
    assert consumed == ["ok", "ok", bad]  # stopped at the bad name, before "later" was read
    assert no_packages(p)  # the package with the earlier items was discarded


# -- schema names ------------------------------------------------------------------------------------


@pytest.mark.parametrize("name", ["../s", "..", "a/b", "a\\b", "a\x00b"])
def test_schema_names_are_rejected(quick_sandbox: Sandbox, name: str) -> None:
    p = quick_sandbox.pipeline()
    with pytest.raises(InvalidNameError, match="Schema name"):
        p.run(ROWS, table_name="t", schema=name)
    with pytest.raises(InvalidNameError, match="Schema name"):
        lakeload.source(name=name)(lambda: [])
    with pytest.raises(InvalidNameError, match="Schema name"):
        p.run(lakeload.Source(name, {"r": lakeload.resource(ROWS, name="r")}))
    assert no_packages(p) and not p.state.get("default_schema_name") and not p.state["schema_names"]


# -- layouts -----------------------------------------------------------------------------------------


@pytest.mark.filterwarnings("ignore:Extra placeholders")
@pytest.mark.parametrize(
    ("layout", "extras"),
    [
        ("{table_name}/../../x/{load_id}.{file_id}.{ext}", None),
        ("{table_name}/../../../../../x/{load_id}.{file_id}.{ext}", None),
        ("ABS/{table_name}/{load_id}.{file_id}.{ext}", None),
        ("{table_name}/{env}/{load_id}.{file_id}.{ext}", {"env": "../../../y"}),
        ("{table_name}/{load_id}.{file_id}.{ext}", {"table_name": "../../z"}),
    ],
)
def test_unsafe_layouts_fail_before_anything_is_extracted(sandbox: Sandbox, layout: str, extras: Any) -> None:
    layout = layout.replace("ABS", str(sandbox.root / "abs_layout"))
    p = sandbox.pipeline(destination=sandbox.destination(layout=layout, extra_placeholders=extras))
    with pytest.raises(UnsafeLayoutPathError, match="would leave the dataset folder") as raised:
        p.run(ROWS, table_name="t")
    assert isinstance(raised.value, ValueError) and layout in str(raised.value)
    assert no_packages(p)


def escape_for_b(schema_name: str, table_name: str, load_id: str, file_id: str, ext: str) -> str:
    """Fine for table `a`, out of the dataset for table `b`: only rendering (on executors) can tell."""
    return "../../../../escaped" if table_name == "b" else "fine"


@pytest.mark.usefixtures("spark")
def test_layout_callback_escaping_at_render_time_fails_the_load(sandbox: Sandbox) -> None:
    dest = sandbox.destination(layout="{table_name}/{env}/{load_id}.{file_id}.{ext}",
                               extra_placeholders={"env": escape_for_b})
    p = sandbox.pipeline(destination=dest, dataset_name="ds")
    with pytest.raises(PipelineStepFailed) as raised:
        p.run(lakeload.resource(ROWS, name="rows", table_name=lambda item: item["kind"]))
    assert raised.value.step == "load"
    message = str(raised.value)
    assert "would leave the dataset folder" in message and "'b/../../../../escaped/" in message
    now = sandbox.files()  # new files only: other tests share the S3 bucket and the memory store
    written = [f for where in ("local", "memory", "s3") for f in now.get(where, set()) - sandbox.before.get(where, set())]
    assert not [f for f in written if "/_dlt_loads/" in f]  # the load did not complete
    assert [f for f in written if "/ds/a/fine/" in f]  # table a's file went where the layout put it


@pytest.mark.usefixtures("spark")
def test_nested_table_names_from_data_keys_are_checked(quick_sandbox: Sandbox) -> None:
    p = quick_sandbox.pipeline(destination=quick_sandbox.destination(naming_convention="direct"))
    with pytest.raises(PipelineStepFailed) as raised:  # direct naming keeps the key: t▶../../../../../../../../esc
        p.run([{"id": 1, "../../../../../../../../esc": [{"v": 1}]}], table_name="t")
    assert raised.value.step == "normalize"
    assert "Table name 't▶../../../../../../../../esc' cannot be used" in str(raised.value)


# -- sinks and valid unusual names -------------------------------------------------------------------


def collect(items: list[dict[str, Any]], table: dict[str, Any]) -> None:
    """A sink that keeps nothing: the test looks at the files on disk, not at the calls."""


@pytest.mark.usefixtures("spark")
def test_sink_names_are_not_paths_and_sink_tables_are_checked(tmp_path: Path, request: pytest.FixtureRequest) -> None:
    box = make_sandbox("local", tmp_path, request)
    box.snapshot()
    odd_sink = lakeload.destination(collect, name="../../sink_escape")
    p = box.pipeline(destination=odd_sink)
    assert p.run(ROWS, table_name="events").destination_name == "../../sink_escape"
    with pytest.raises(InvalidNameError, match="'direct' naming convention"):  # sinks use direct naming
        p.run(ROWS, table_name="../../events")
    assert box.outside() == []


@pytest.mark.usefixtures("spark")
@pytest.mark.parametrize("backend", ["local", "memory", "s3"])
def test_unusual_names_that_normalize_to_safe_ones_load_as_in_dlt(
    backend: str, tmp_path: Path, request: pytest.FixtureRequest
) -> None:
    box = make_sandbox(backend, tmp_path, request)
    box.snapshot()
    p = box.pipeline(dataset_name="My Data")
    odd = ["a/b", "../x", "..", "/abs"]
    for name in odd:
        p.run(ROWS, table_name=name)
    expected = {dlt_table_name("snake_case", name) for name in odd}
    assert expected == {"a_b", "_x", "x", "_abs"}
    counts = dict(p.dataset().row_counts())
    assert {name: counts[name] for name in expected} == dict.fromkeys(expected, len(ROWS))
    assert box.outside() == []
    if backend == "local":
        assert {f.name for f in (Path(box.bucket_url) / "My Data").iterdir()} >= expected


def test_schema_names_read_from_the_bucket_cannot_leave_the_working_folder(quick_sandbox: Sandbox) -> None:
    """A bucket written by someone else, whose stored schema is named '../../../evil', is refused when restored."""
    import json

    import pendulum

    from lakeload.destinations.impl.filesystem import state_files
    from lakeload.destinations.impl.filesystem.client import FilesystemClient
    from lakeload.schema.schema import Schema

    dest = quick_sandbox.destination()
    client = FilesystemClient(dest.configuration("restored"), "ds")
    schema = Schema("evil")
    schema.name = "../../../evil"  # what a tampered _dlt_version record says
    for path, content in (
        state_files.version_record(schema_name="evil", version=1, version_hash="aGFzaA==", schema_json=schema.to_json(),
                                   inserted_at=pendulum.now("UTC"), precise_time=1.5),
        state_files.pipeline_state_record(pipeline_name="restored", load_id="1.5", state={"schema_names": ["evil"]},
                                          state_version=1, state_version_hash="", schema_version_hash="aGFzaA==",
                                          created_at=pendulum.now("UTC")),
    ):
        client.write_bytes(path, content)
    quick_sandbox.snapshot()  # what the test wrote into the bucket is not what is checked
    p = quick_sandbox.pipeline("restored", destination=dest, dataset_name="ds")
    with pytest.raises(InvalidNameError, match=r"Schema name '\.\./\.\./\.\./evil'"):
        p.run()
    assert json.loads(schema.to_json())["name"] == "../../../evil"
