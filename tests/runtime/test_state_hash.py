"""The pipeline state's version hash and destination are dlt's, so a state either tool stored is not bumped
by the other for nothing, and dlt can rebuild the destination it names."""

from __future__ import annotations

import datetime as dt
from decimal import Decimal

from lakeload.runtime.state import bump_state, new_state, staged_state, state_hash


def test_state_hash_is_dlts_with_typed_values() -> None:
    from dlt.common.versioned_state import generate_state_version_hash

    state = new_state("p", "ds", "filesystem", None)
    state["sources"] = {"p": {"resources": {"events": {"incremental": {"at": {
        "last_value": dt.datetime(2024, 5, 1, 12, tzinfo=dt.timezone.utc), "amount": Decimal("1.50"),
        "day": dt.date(2024, 5, 1), "unique_hashes": ["a"]}}}}}}
    assert bump_state(state) and state["_state_version"] == 1
    assert state_hash(state) == generate_state_version_hash(dict(state), exclude_attrs=["_local"]) == state["_version_hash"]
    assert not bump_state(state)


def test_staged_state_names_dlts_destination_type_and_the_given_name() -> None:
    import lakeload

    state = new_state("p", "ds", "filesystem", None)
    state["destination_type"] = "lakeload.destinations.filesystem"  # as older lakeload versions stored it
    staged = staged_state(state, {}, lakeload.destinations.filesystem("/tmp/b", destination_name="prod"))
    assert (staged["destination_type"], staged["destination_name"]) == ("dlt.destinations.filesystem", "prod")
    assert new_state("p", "ds", "filesystem", None)["destination_type"] == "dlt.destinations.filesystem"
