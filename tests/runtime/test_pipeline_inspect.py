"""Pipeline and LoadInfo introspection (first_run, pending data, package lists, attach) checked against dlt 1.31."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

import lakeload
from lakeload.errors import CannotRestorePipelineError, LakeloadError, LoadPackageNotFoundError

pytestmark = pytest.mark.usefixtures("spark")

USERS = [{"id": 1, "pets": [{"name": "Fluffy"}]}, {"id": 2, "pets": []}]


def snapshot(p: Any) -> tuple[Any, ...]:
    """What both tools report about a pipeline at one point of its lifecycle."""
    return (
        p.first_run,
        p.has_pending_data,
        list(p.schema_names),
        sorted(p.schemas.keys()),
        len(p.list_extracted_load_packages()),
        len(p.list_normalized_load_packages()),
        len(p.list_completed_load_packages()),
    )


def lifecycle(tool: Any, root: Path) -> tuple[list[tuple[Any, ...]], list[str], Any, Any]:
    """fresh -> extract -> normalize -> load -> run again; snapshots, package states of the first load id, infos."""
    p = tool.pipeline("inspect", destination=tool.destinations.filesystem(str(root / "bucket")),
                      pipelines_dir=str(root / "pipelines"), dataset_name="ds")
    snaps, states = [snapshot(p)], []
    p.extract(USERS, table_name="users")
    snaps.append(snapshot(p))
    load_id = p.list_extracted_load_packages()[0]
    states.append(p.get_load_package_info(load_id).state)
    p.normalize()
    snaps.append(snapshot(p))
    states.append(p.get_load_package_info(load_id).state)
    first = p.load()
    snaps.append(snapshot(p))
    states.append(p.get_load_package_info(load_id).state)
    second = p.run([{"id": 3}], table_name="users")
    snaps.append(snapshot(p))
    return snaps, states, first, second


def test_lifecycle_matches_dlt(tmp_path: Path) -> None:
    import dlt

    ours = lifecycle(lakeload, tmp_path / "lakeload")
    theirs = lifecycle(dlt, tmp_path / "dlt")
    assert ours[0] == theirs[0]
    assert ours[0][0] == (True, False, [], [], 0, 0, 0)
    assert ours[0][1] == (True, True, ["inspect"], ["inspect"], 1, 0, 0)
    assert ours[0][-1] == (False, False, ["inspect"], ["inspect"], 0, 0, 2)
    assert ours[1] == theirs[1] == ["extracted", "normalized", "loaded"]
    for info, dlt_info in ((ours[2], theirs[2]), (ours[3], theirs[3])):
        assert info.first_run == dlt_info.first_run
        assert info.has_failed_jobs is dlt_info.has_failed_jobs is False
        assert info.raise_on_failed_jobs() is None and dlt_info.raise_on_failed_jobs() is None
        assert [p.state for p in info.load_packages] == [p.state for p in dlt_info.load_packages] == ["loaded"]
        assert [p.schema_name for p in info.load_packages] == [p.schema_name for p in dlt_info.load_packages]
    assert ours[2].first_run is True and ours[3].first_run is False


def test_load_info_asdict_has_dlts_keys(tmp_path: Path) -> None:
    import dlt

    ours = lifecycle(lakeload, tmp_path / "lakeload")[2]
    theirs = lifecycle(dlt, tmp_path / "dlt")[2]
    shared = {"pipeline", "destination_name", "destination_type", "dataset_name", "load_packages", "loads_ids",
              "started_at", "finished_at", "first_run"}
    ours_dict, theirs_dict = ours.asdict(), theirs.asdict()
    assert shared <= set(ours_dict) and shared <= set(theirs_dict)
    for key in ("dataset_name", "destination_name", "first_run"):
        assert ours_dict[key] == theirs_dict[key], key
    assert ours_dict["pipeline"]["pipeline_name"] == theirs_dict["pipeline"]["pipeline_name"] == "inspect"
    assert len(ours_dict["loads_ids"]) == len(theirs_dict["loads_ids"]) == 1
    package = ours_dict["load_packages"][0]
    dlt_package = theirs_dict["load_packages"][0]
    assert {"load_id", "state", "schema_name", "jobs"} <= set(package) & set(dlt_package)
    assert package["state"] == dlt_package["state"] == "loaded" and package["load_id"] == ours_dict["loads_ids"][0]
    assert sorted(f["table"] for f in package["jobs"]["completed_jobs"]) == ["users", "users__pets"]
    assert package["jobs"]["failed_jobs"] == [] and ours_dict["finished_at"] >= ours_dict["started_at"]
    json.dumps(ours_dict)  # serializable as it is
    assert ours.asstr() == str(ours)
    verbose = ours.asstr(verbosity=1)
    assert verbose.startswith(str(ours).splitlines()[0]) and all(f["path"] in verbose for f in ours.packages[0].files)


def test_package_info_counts_and_files(tmp_path: Path) -> None:
    p = lakeload.pipeline("counts", destination=lakeload.destinations.filesystem(str(tmp_path / "bucket")),
                          pipelines_dir=str(tmp_path / "pipelines"))
    load_id = p.extract(USERS, table_name="users").loads_ids[0]
    extracted = p.get_load_package_info(load_id)
    assert (extracted.state, extracted.schema_name, extracted.row_counts) == ("extracted", "counts", {"users": 2})
    assert extracted.jobs["new_jobs"] and not extracted.jobs["completed_jobs"]
    job = extracted.jobs["new_jobs"][0]  # an extracted file: `<split>.<table>.<ext>`, its size from the working folder
    assert job.job_file_info.table_name == "users" and job.job_file_info.file_id != "users" and job.file_size > 0
    p.normalize()
    normalized = p.get_load_package_info(load_id)
    assert normalized.row_counts == {"users": 2, "users__pets": 1}
    assert sorted(f["table"] for f in normalized.files) == ["users", "users__pets"]
    p.load()
    loaded = p.get_load_package_info(load_id)
    assert (loaded.state, loaded.row_counts) == ("loaded", {"users": 2, "users__pets": 1})
    assert loaded.created_at == normalized.created_at is not None
    with pytest.raises(LoadPackageNotFoundError, match="list_completed_load_packages") as err:
        p.get_load_package_info("1.0")
    assert isinstance(err.value, KeyError) and isinstance(err.value, LakeloadError)


def test_attach_opens_the_working_folder(tmp_path: Path) -> None:
    bucket = tmp_path / "bucket"
    p = lakeload.pipeline("att", destination=lakeload.destinations.filesystem(str(bucket)),
                          pipelines_dir=str(tmp_path / "pipelines"), dataset_name="my_data")
    p.run(USERS, table_name="users")
    pending = p.extract([{"id": 3}], table_name="users").loads_ids[0]
    attached = lakeload.attach("att", pipelines_dir=str(tmp_path / "pipelines"))
    assert attached.dataset_name == "my_data" and attached.first_run is False
    assert attached.list_extracted_load_packages() == [pending]
    assert attached.list_completed_load_packages() == p.list_completed_load_packages()
    info = attached.run()  # the recorded bucket: the pending package loads there
    assert info.loads_ids == [pending] and info.dataset_name == "my_data"
    assert sorted(attached.dataset().users.df()["id"]) == [1, 2, 3]


def test_attach_missing_pipeline_names_the_folder(tmp_path: Path) -> None:
    import dlt
    from dlt.pipeline.exceptions import CannotRestorePipelineException

    with pytest.raises(CannotRestorePipelineException):
        dlt.attach("nope", pipelines_dir=str(tmp_path / "dlt"))
    with pytest.raises(CannotRestorePipelineError, match="does not exist") as err:
        lakeload.attach("nope", pipelines_dir=str(tmp_path / "pipelines"))
    assert err.value.folder == str(tmp_path / "pipelines" / "nope") and err.value.folder in str(err.value)
    assert isinstance(err.value, LakeloadError) and "destination=" in str(err.value)


def test_attach_with_destination_restores_from_the_bucket(tmp_path: Path) -> None:
    bucket = str(tmp_path / "bucket")
    p = lakeload.pipeline("restore", destination=lakeload.destinations.filesystem(bucket),
                          pipelines_dir=str(tmp_path / "pipelines"), dataset_name="ds")
    p.run(USERS, table_name="users")
    p.drop()  # the working folder goes; the bucket keeps state and schema
    with pytest.raises(CannotRestorePipelineError, match="no pipeline state|does not exist"):
        lakeload.attach("restore", pipelines_dir=str(tmp_path / "pipelines"))
    with pytest.raises(CannotRestorePipelineError, match="nor in dataset 'other'"):
        lakeload.attach("restore", pipelines_dir=str(tmp_path / "pipelines"),
                        destination=lakeload.destinations.filesystem(bucket), dataset_name="other")
    attached = lakeload.attach("restore", pipelines_dir=str(tmp_path / "pipelines"),
                               destination=lakeload.destinations.filesystem(bucket), dataset_name="ds")
    assert attached.schema_names == ["restore"] and "users" in attached.schemas["restore"].tables


def test_attach_does_not_rebuild_a_masked_bucket_url(tmp_path: Path) -> None:
    from lakeload.storage.packages import PipelineStorage, write_json_atomic

    folder = tmp_path / "pipelines" / "masked"
    PipelineStorage(str(folder)).save_state({"pipeline_name": "masked", "dataset_name": "ds", "schema_names": []})
    record = {"destination_type": "filesystem", "destination_name": "filesystem", "bucket_url": "sftp://me:***@localhost/data",
              "dataset_name": "ds"}
    write_json_atomic(str(folder / "load" / "loaded" / "1.5" / "package.json"), {"schema_name": "masked", "destination": record})
    assert lakeload.attach("masked", pipelines_dir=str(tmp_path / "pipelines")).destination is None
    given = lakeload.destinations.filesystem(str(tmp_path / "bucket"))
    assert lakeload.attach("masked", pipelines_dir=str(tmp_path / "pipelines"), destination=given).destination is given
