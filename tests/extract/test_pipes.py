"""Resource pipes (issue 14, group 3): what dlt does not show. Side by side with dlt: tests/compat/test_compat_pipes.py."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

import lakeload

pytestmark = pytest.mark.usefixtures("spark")


def test_an_unfed_transformer_says_how_to_feed_it(tmp_path: Path) -> None:
    @lakeload.transformer
    def orphan(item: Any) -> Any:
        yield item

    p = lakeload.pipeline("pipes_orphan", destination=lakeload.destinations.filesystem(str(tmp_path / "b")),
                          pipelines_dir=str(tmp_path / "p"))
    with pytest.raises(lakeload.PipelineStepFailed, match=r"pipe a resource into it"):
        p.run(orphan())


def test_limit_closes_the_generator(tmp_path: Path) -> None:
    produced: list[int] = []

    def endless() -> Any:
        n = 0
        while True:
            produced.append(n)
            yield {"n": n}
            n += 1

    res = lakeload.resource(endless(), name="endless").add_limit(5)
    p = lakeload.pipeline("pipes_endless", destination=lakeload.destinations.filesystem(str(tmp_path / "b")),
                          pipelines_dir=str(tmp_path / "p"))
    assert p.run(res).row_counts == {"endless": 5}
    assert produced == [0, 1, 2, 3, 4]
