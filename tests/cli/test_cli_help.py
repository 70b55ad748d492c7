"""`lakeload --help` and argument checks: fast, no Spark."""

from __future__ import annotations

import subprocess
import sys

import pytest

from lakeload.cli.main import build_parser, main


def test_top_level_help_lists_demo(capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit) as exit_info:
        main(["--help"])
    assert exit_info.value.code == 0
    out = capsys.readouterr().out
    assert "usage: lakeload" in out
    assert "demo" in out


def test_demo_help_documents_every_option(capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit) as exit_info:
        main(["demo", "--help"])
    assert exit_info.value.code == 0
    out = capsys.readouterr().out
    for option in ("--events", "--bucket", "--dataset", "--format", "--pipelines-dir", "--progress"):
        assert option in out
    assert "jsonl,parquet,csv" in out
    assert "log,tqdm,rich,none" in out


def test_demo_defaults() -> None:
    args = build_parser().parse_args(["demo"])
    assert (args.events, args.bucket, args.dataset, args.file_format) == (100_000, "./_storage", "github_events", "parquet")
    assert args.pipelines_dir is None  # the library default, ~/.lakeload/pipelines
    assert args.progress is None  # rich on a terminal, log otherwise


@pytest.mark.parametrize("argv", [["demo", "--events", "0"], ["demo", "--format", "xml"], ["demo", "--progress", "bar"], []])
def test_bad_arguments_exit_2(argv: list[str], capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit) as exit_info:
        main(argv)
    assert exit_info.value.code == 2
    assert "usage: lakeload" in capsys.readouterr().err


def test_module_help_does_not_start_spark() -> None:
    code = (
        "import sys\n"
        "from lakeload.cli.main import main\n"
        "try:\n"
        "    main(['demo', '--help'])\n"
        "except SystemExit as exc:\n"
        "    assert exc.code == 0, exc.code\n"
        "print('pyspark loaded' if 'pyspark' in sys.modules else 'no pyspark')\n"
    )
    result = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120)
    assert result.returncode == 0, result.stderr
    assert result.stdout.strip().endswith("no pyspark")
    result = subprocess.run([sys.executable, "-m", "lakeload.cli", "--version"], capture_output=True, text=True, timeout=120)
    assert result.returncode == 0, result.stderr
    assert result.stdout.startswith("lakeload ")
