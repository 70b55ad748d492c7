"""A password in the bucket URL (`sftp://user:pw@host/...`) is never shown: load info, trace, reprs,
`lakeload config show` — against the real SFTP test server."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from servers.fixtures import SftpServer, fresh_prefix

import lakeload
from lakeload.cli.main import main as lakeload_cli


def password_url(s: SftpServer, prefix: str) -> str:
    return f"sftp://{s.username}:{s.password}@{s.host}:{s.port}{s.root}/{prefix}"


def test_sftp_password_in_bucket_url_is_masked_everywhere(
    sftp_server: SftpServer, pipelines_dir: Path, spark: Any, monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> None:
    s = sftp_server
    prefix = fresh_prefix("secret-url")
    url = password_url(s, prefix)
    monkeypatch.setenv("DESTINATION__FILESYSTEM__CREDENTIALS__SFTP_KNOWN_HOSTS", s.known_hosts)
    monkeypatch.setenv("DESTINATION__FILESYSTEM__CREDENTIALS__SFTP_LOOK_FOR_KEYS", "false")
    monkeypatch.setenv("DESTINATION__FILESYSTEM__CREDENTIALS__SFTP_ALLOW_AGENT", "false")
    destination = lakeload.destinations.filesystem(url)
    p = lakeload.pipeline("secret_url", destination=destination, dataset_name="ds",
                          pipelines_dir=str(pipelines_dir), spark=spark)
    info = p.run([{"id": i} for i in range(5)], table_name="rows", loader_file_format="jsonl")
    assert info.row_counts == {"rows": 5}
    assert len(list((Path(s.root) / prefix / "ds" / "rows").iterdir())) == 1  # it did log in with that password
    print(info)
    print(p.last_trace)
    masked = f"sftp://{s.username}:***@{s.host}:{s.port}{s.root}/{prefix}"
    assert info.bucket_url == masked
    shown = [capsys.readouterr().out, repr(info), str(info.asdict()), str(p.last_trace), repr(p.last_trace),
             str(p.last_trace.asdict()), repr(destination), repr(destination.configuration("secret_url"))]
    assert all(s.password not in text for text in shown)
    assert masked in shown[0] and masked in shown[1]

    monkeypatch.setenv("DESTINATION__FILESYSTEM__BUCKET_URL", url)
    assert lakeload_cli(["config", "show", "--pipeline", "secret_url"]) == 0
    config_text = capsys.readouterr().out
    assert f"destination.filesystem.bucket_url = {masked}  (environment variable" in config_text
    assert s.password not in config_text

