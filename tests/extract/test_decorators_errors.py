"""A keyword `@transformer` does not take is refused at decoration, as Python says it of `@resource` (and dlt of
both): a `TypeError` naming the keyword, not an error of lakeload's internals."""

from __future__ import annotations

import pytest

import lakeload


def test_transformer_refuses_an_unknown_keyword() -> None:
    with pytest.raises(TypeError, match=r"^transformer\(\) got an unexpected keyword argument 'unknown_kw'$"):
        lakeload.transformer(unknown_kw=1)


def test_transformer_takes_resource_hints() -> None:
    @lakeload.transformer(primary_key="id", write_disposition="merge", columns={"a": {"data_type": "text"}},
                          table_name="details")
    def details(item: dict[str, int]) -> object:
        yield item

    assert details.name == "details"
