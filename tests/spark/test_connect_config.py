"""`[spark] mode` / `[spark] remote` / SPARK_REMOTE: resolution, validation and masking (no Spark needed)."""

from __future__ import annotations

from pathlib import Path

import pytest

from lakeload.errors import ConfigurationError, SparkSetupError
from lakeload.runtime.config_report import render_configuration, show_configuration
from lakeload.spark.connect_session import connect_url, mask_connect_url, resolve_engine

TOKEN = "s3cr3t-t0ken"
URL = f"sc://spark.example.com:443/;use_ssl=true;token={TOKEN}"


def test_connect_url_parameters_are_masked() -> None:
    assert mask_connect_url(URL) == "sc://spark.example.com:443/;use_ssl=***;token=***"
    assert mask_connect_url("sc://127.0.0.1:15002") == "sc://127.0.0.1:15002"
    engine = resolve_engine(None, {"SPARK_REMOTE": URL})
    assert engine.remote == URL and engine.mode == "auto"
    assert TOKEN not in repr(engine) and "token=***" in repr(engine)


def test_remote_precedence_and_mode_validation(tmp_path: Path) -> None:
    config = Path(".lakeload")
    config.mkdir()
    (config / "config.toml").write_text('[spark]\nmode = "remote"\nremote = "sc://from-toml:15002"\n')
    assert resolve_engine(None, {}).remote == "sc://from-toml:15002"
    assert resolve_engine(None, {}).mode == "remote"
    assert resolve_engine(None, {"SPARK_REMOTE": "sc://spark-remote:1"}).remote == "sc://spark-remote:1"
    both = {"SPARK_REMOTE": "sc://spark-remote:1", "SPARK__REMOTE": "sc://lakeload-env:2"}
    assert resolve_engine(None, both).remote == "sc://lakeload-env:2"
    with pytest.raises(ConfigurationError, match="not one of auto, local, remote"):
        resolve_engine(None, {"SPARK__MODE": "cluster"})
    with pytest.raises(ConfigurationError, match=r"must start with sc://") as bad:
        resolve_engine(None, {"SPARK_REMOTE": f"http://host/;token={TOKEN}"})
    assert TOKEN not in str(bad.value)


def test_mode_decides_the_engine() -> None:
    # HOME is a fresh folder (conftest): no `lakeload spark start` server is recorded
    assert connect_url(resolve_engine(None, {})) is None  # auto: in-process
    assert connect_url(resolve_engine(None, {"SPARK__MODE": "local", "SPARK_REMOTE": URL})) is None
    assert connect_url(resolve_engine(None, {"SPARK_REMOTE": URL})) == URL  # auto takes a configured URL
    with pytest.raises(SparkSetupError, match="lakeload spark start"):
        connect_url(resolve_engine(None, {"SPARK__MODE": "remote"}))


def test_config_show_masks_the_connect_url(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("SPARK_REMOTE", URL)
    monkeypatch.setenv("SPARK__MODE", "remote")
    text = render_configuration(show_configuration())
    assert TOKEN not in text
    assert "spark.remote = sc://spark.example.com:443/;use_ssl=***;token=***  (environment variable SPARK_REMOTE)" in text
    assert "spark.mode = remote  (environment variable SPARK__MODE)" in text
