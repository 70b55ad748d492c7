"""dev_mode=True as dlt 1.31: a fresh working folder per instance, a dataset of its own, no restore from the bucket."""

from __future__ import annotations

import re
from datetime import datetime
from pathlib import Path
from typing import Any

import pytest

import lakeload

pytestmark = pytest.mark.usefixtures("spark")
SUFFIX = re.compile(r"^(?P<base>.+?)_?(?P<stamp>\d{14})$")


def _make(lib: Any, root: Path, **kwargs: Any) -> Any:
    return lib.pipeline("dev", destination=lib.destinations.filesystem(str(root / "bucket")),
                        pipelines_dir=str(root / "pipelines"), **kwargs)


@pytest.mark.parametrize("dataset_name", ["ds", "ds_", None])
def test_the_dataset_name_gets_dlts_suffix(dataset_name: str | None, tmp_path: Path) -> None:
    import dlt

    theirs = _make(dlt, tmp_path / "dlt", dev_mode=True, dataset_name=dataset_name).dataset_name
    ours = _make(lakeload, tmp_path / "lakeload", dev_mode=True, dataset_name=dataset_name).dataset_name
    base_theirs, base_ours = SUFFIX.match(theirs), SUFFIX.match(ours)
    assert base_theirs is not None and base_ours is not None
    assert base_ours["base"] == base_theirs["base"] and ours.count("__") == theirs.count("__") == 0
    stamps = [datetime.strptime(m["stamp"], "%Y%m%d%I%M%S") for m in (base_theirs, base_ours)]
    assert abs((stamps[0] - stamps[1]).total_seconds()) < 30  # the same clock, dlt's 12-hour format


def _state_after(lib: Any, root: Path) -> dict[str, Any]:
    @lib.resource(name="items")
    def items() -> Any:
        lib.current.resource_state()["runs"] = lib.current.resource_state().get("runs", 0) + 1
        yield {"id": 1}

    normal = _make(lib, root, dataset_name="ds")
    normal.run(items())
    dev = _make(lib, root, dataset_name="ds", dev_mode=True)
    fresh = {"first_run": dev.first_run, "schemas": list(dev.schema_names), "sources": dev.state.get("sources")}
    dev.run(items())
    after_dev = dev.state["sources"]
    back = _make(lib, root, dataset_name="ds")
    back.run(items())  # leaving dev_mode resets the local state; the bucket's "ds" state is restored
    return {"fresh": fresh, "after_dev": after_dev, "back": back.state["sources"], "dev_mode": dev.dev_mode,
            "datasets": len([p for p in (root / "bucket").iterdir() if p.is_dir()])}


def test_dev_mode_starts_fresh_and_never_restores(tmp_path: Path) -> None:
    import dlt

    ours = _state_after(lakeload, tmp_path / "lakeload")
    assert ours == _state_after(dlt, tmp_path / "dlt")
    assert ours["fresh"] == {"first_run": True, "schemas": [], "sources": None} and ours["datasets"] == 2
    assert ours["after_dev"]["dev"]["resources"]["items"] == {"runs": 1}  # nothing restored into the dev instance
    assert ours["back"]["dev"]["resources"]["items"] == {"runs": 2}  # the state of "ds", restored from the bucket


def test_attach_keeps_a_dev_mode_pipeline(tmp_path: Path) -> None:
    p = _make(lakeload, tmp_path, dev_mode=True, dataset_name="ds")
    p.run([{"id": 1}], table_name="items")
    attached = lakeload.attach("dev", pipelines_dir=str(tmp_path / "pipelines"))
    assert attached.dev_mode and attached.dataset_name == p.dataset_name
    assert attached.list_completed_load_packages() == p.list_completed_load_packages() != []
    assert attached.dataset().items.df()["id"].tolist() == [1]
