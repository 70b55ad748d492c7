"""Import paths the README named before the layers moved their modules keep working."""

from __future__ import annotations

import importlib
import sys

import pytest


def test_log_secrets_moved_to_config_with_a_deprecation_warning() -> None:
    sys.modules.pop("lakeload.runtime.log_secrets", None)
    with pytest.warns(DeprecationWarning, match="lakeload.config.log_secrets"):
        moved = importlib.import_module("lakeload.runtime.log_secrets")
    from lakeload.config.log_secrets import SecretMaskingFilter

    assert moved.SecretMaskingFilter is SecretMaskingFilter


def test_the_old_daemon_module_runs_the_kernels_daemon() -> None:
    from lakeload.kernel.spark.daemon import main

    assert importlib.import_module("lakeload.spark.executor_daemon").main is main
