"""Real object-store servers on loopback for the tests, started and stopped by the tests themselves.

Registered as a pytest plugin from tests/conftest.py (``pytest_plugins = ["servers.fixtures"]``).

Session-scoped fixtures, each yielding a frozen dataclass:

=====================  ===============  ====================================================================
fixture                server           URL form for lakeload / fsspec
=====================  ===============  ====================================================================
``s3_server``          moto (S3)        ``s3://lakeload-test/<prefix>``           (``S3Server.url(prefix)``)
``azure_server``       Azurite (Blob)   ``az://lakeload/<prefix>`` (or abfs://)   (``AzureServer.url(prefix)``)
``gcs_server``         gcp-storage-     ``gs://lakeload-test/<prefix>``           (``GcsServer.url(prefix)``)
                       emulator
``sftp_server``        asyncssh         ``sftp://127.0.0.1:<port><root>/<prefix>`` (``SftpServer.url(prefix)``)
=====================  ===============  ====================================================================

``sftp_server_passphrase_key`` is the same SFTP server, with ``key_filename`` pointing to a client key
that is encrypted with ``key_passphrase`` (for tests of ``sftp_key_passphrase``).

``*_storage_options(server)`` give the kwargs for ``fsspec.filesystem(protocol, **opts)``;
``fresh_prefix(name)`` gives a unique path prefix (no slashes at either end) for one test.

Every server listens on 127.0.0.1 on a free port, keeps its data in a temporary folder (removed at the
end), is started as its own process (the ones the collected tests need are all spawned at once after
collection, so they start in parallel) and is stopped by PID at the end of the session (SIGTERM, then
SIGKILL). The processes also get PR_SET_PDEATHSIG, so they die with the test process even when it is
killed hard.

S3 credentials are enforced: moto's IAM authentication is switched on (``POST /moto-api/reset-auth``
with ``0``, the runtime form of ``INITIAL_NO_AUTH_ACTION_COUNT=0``) after an IAM user with an
allow-everything policy, its access key and the bucket were made, so a wrong key id or secret gets 403.
Set ``LAKELOAD_TEST_S3_AUTH=0`` to leave moto accepting any credentials instead.
"""

from __future__ import annotations

import atexit
import contextlib
import ctypes
import json
import os
import re
import secrets
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import time
import urllib.error
import urllib.request
import uuid
from collections.abc import Iterator
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

import pytest

# gcsfs probes a control API (60 s TLS timeout per call) unless this is off; it must be set before
# gcsfs is imported, which this plugin module is early enough for.
os.environ.setdefault("GCSFS_EXPERIMENTAL_ZB_HNS_SUPPORT", "false")

HOST = "127.0.0.1"
REPO = Path(__file__).resolve().parents[2]
AZURITE_BLOB = REPO / ".tools" / "node_modules" / ".bin" / "azurite-blob"
SFTP_SERVER_SCRIPT = Path(__file__).resolve().with_name("sftp_server.py")
STARTUP_TIMEOUT = float(os.environ.get("LAKELOAD_TEST_SERVER_TIMEOUT", "60"))
STOP_TIMEOUT = 5.0

S3_BUCKET = "lakeload-test"
S3_REGION = "us-east-1"
GCS_BUCKET = "lakeload-test"
GCS_PROJECT = "test"
AZURE_CONTAINER = "lakeload"
# Azurite's well-known development account (published in Azurite's README; not a secret).
AZURITE_ACCOUNT = "devstoreaccount1"
AZURITE_KEY = "Eby8vdM02xNOcqFlqUwJPLlmEtlCDXJ1OUzFT50uSRZ6IFsuFq2UVErCz4I6tq/K1SZFPTOtr/KBHBeksoGMGw=="
SFTP_USERNAME = "lakeload"


# ----------------------------------------------------------------------------------------------------
# What the fixtures yield


@dataclass(frozen=True)
class S3Server:
    endpoint_url: str  # http://127.0.0.1:PORT
    access_key: str  # an IAM access key id moto knows (AKIA...)
    secret_key: str
    region: str  # "us-east-1"
    bucket: str  # already created: "lakeload-test"

    def url(self, *parts: str) -> str:
        return _join(f"s3://{self.bucket}", parts)

    def credentials(self, secret: str | None = None, endpoint_url: str | None = None) -> dict[str, str]:
        """dlt-style credentials for this server (`secret`, `endpoint_url`: another secret or endpoint)."""
        return {"aws_access_key_id": self.access_key, "aws_secret_access_key": secret or self.secret_key,
                "endpoint_url": endpoint_url or self.endpoint_url, "region_name": self.region}

    def credential_env(self, section: str) -> dict[str, str]:
        """The credentials as environment variables under `section`, e.g. `SPARK__WORKING_CREDENTIALS`."""
        return {f"{section}__{key.upper()}": value for key, value in self.credentials().items()}


@dataclass(frozen=True)
class AzureServer:
    account_name: str  # "devstoreaccount1"
    account_key: str  # Azurite's published dev key
    blob_endpoint: str  # http://127.0.0.1:PORT/devstoreaccount1 (the account path is part of it)
    connection_string: str  # DefaultEndpointsProtocol=http;AccountName=...;AccountKey=...;BlobEndpoint=...;
    container: str  # already created: "lakeload"

    def url(self, *parts: str) -> str:
        return _join(f"az://{self.container}", parts)


@dataclass(frozen=True)
class GcsServer:
    endpoint_url: str  # http://127.0.0.1:PORT (no auth: token="anon")
    project: str  # "test"
    bucket: str  # already created: "lakeload-test"

    def url(self, *parts: str) -> str:
        return _join(f"gs://{self.bucket}", parts)


@dataclass(frozen=True)
class SftpServer:
    host: str  # "127.0.0.1"
    port: int
    username: str  # "lakeload"
    password: str  # random per session
    key_filename: str  # private ed25519 client key (OpenSSH format); sftp_server: no passphrase
    key_passphrase: str | None  # None for sftp_server; set for sftp_server_passphrase_key
    known_hosts: str  # file with the server's host key for "127.0.0.1" and "[127.0.0.1]:PORT"
    # Absolute path of the folder to use. The server is not chrooted, so this is at once the local
    # folder (inspect it with pathlib) and the absolute path prefix of sftp:// URLs:
    # sftp://127.0.0.1:PORT{root}/prefix/file
    root: str

    def url(self, *parts: str) -> str:
        return _join(f"sftp://{self.host}:{self.port}{self.root}", parts)


def _join(base: str, parts: tuple[str, ...]) -> str:
    tail = "/".join(p.strip("/") for p in parts if p.strip("/"))
    return f"{base}/{tail}" if tail else base


# ----------------------------------------------------------------------------------------------------
# Helpers for tests


def fresh_prefix(name: str = "test") -> str:
    """A unique path prefix for one test, e.g. ``test-roundtrip-3f2a9c01d4``: put it after the bucket."""
    slug = re.sub(r"[^a-z0-9]+", "-", name.lower()).strip("-")[:48] or "test"
    return f"{slug}-{uuid.uuid4().hex[:10]}"


def s3_storage_options(s: S3Server) -> dict[str, Any]:
    """kwargs for ``fsspec.filesystem("s3", **opts)`` (s3fs). No region in client_kwargs on purpose:
    with region_name="us-east-1" there, s3fs' bucket creation fails on moto (LocationConstraint)."""
    return {"endpoint_url": s.endpoint_url, "key": s.access_key, "secret": s.secret_key}


def azure_storage_options(a: AzureServer) -> dict[str, Any]:
    """kwargs for ``fsspec.filesystem("az" | "abfs", **opts)`` (adlfs). A connection string, because
    adlfs' ``account_host`` forces https."""
    return {"connection_string": a.connection_string}


def gcs_storage_options(g: GcsServer) -> dict[str, Any]:
    """kwargs for ``fsspec.filesystem("gs", **opts)`` (gcsfs)."""
    return {"endpoint_url": g.endpoint_url, "token": "anon", "project": g.project}


def sftp_storage_options(
    s: SftpServer, *, auth: str = "password", verify_host_key: bool = False
) -> dict[str, Any]:
    """kwargs for ``fsspec.filesystem("sftp", **opts)`` (fsspec's paramiko ``SFTPFileSystem``).

    auth="password" logs in with the password, auth="key" with ``key_filename`` (+ ``passphrase`` when
    ``key_passphrase`` is set) and no password. ``look_for_keys``/``allow_agent`` are off so that nothing
    of the user's own SSH setup takes part. verify_host_key=True adds a ``host_key_policy`` that accepts
    only the host key in ``known_hosts`` (paramiko's SFTPFileSystem loads no known_hosts of its own);
    by default fsspec's auto_add policy is used and the options stay plain (picklable/JSON) values.
    """
    opts: dict[str, Any] = {
        "host": s.host,
        "port": s.port,
        "username": s.username,
        "look_for_keys": False,
        "allow_agent": False,
        "timeout": 30,
    }
    if auth == "password":
        opts["password"] = s.password
    elif auth == "key":
        opts["key_filename"] = s.key_filename
        if s.key_passphrase is not None:
            opts["passphrase"] = s.key_passphrase
    else:
        raise ValueError(f"auth must be 'password' or 'key', not {auth!r}")
    if verify_host_key:
        opts["host_key_policy"] = known_hosts_policy(s.known_hosts)
    return opts


def known_hosts_policy(known_hosts: str) -> Any:
    """A paramiko ``MissingHostKeyPolicy`` that accepts only a host key listed in ``known_hosts``.

    fsspec's SFTPFileSystem loads no known_hosts file, so every host key is "missing" to it and this
    policy decides. Pickles (by path)."""
    import paramiko

    class KnownHostsPolicy(paramiko.MissingHostKeyPolicy):
        def __init__(self, path: str) -> None:
            self.path = path

        def missing_host_key(self, client: Any, hostname: str, key: Any) -> None:
            known = paramiko.HostKeys(self.path).lookup(hostname) or {}
            if known.get(key.get_name()) != key:
                raise paramiko.SSHException(f"host key of {hostname} is not the one in {self.path}")
            client.get_host_keys().add(hostname, key.get_name(), key)

        def __reduce__(self) -> Any:
            return (known_hosts_policy, (self.path,))

    return KnownHostsPolicy(known_hosts)


# ----------------------------------------------------------------------------------------------------
# Starting and stopping server processes


class ServerStartError(RuntimeError):
    pass


def _free_port() -> int:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sock:
        sock.bind((HOST, 0))
        return sock.getsockname()[1]


def _http_answers(url: str, timeout: float = 1.0) -> int | None:
    """HTTP status of a GET (errors count: the server answered), None when nothing answers."""
    try:
        with urllib.request.urlopen(url, timeout=timeout) as resp:
            return resp.status
    except urllib.error.HTTPError as e:
        return e.code
    except (OSError, ValueError):
        return None


_PR_SET_PDEATHSIG = 1
try:
    _LIBC: Any = ctypes.CDLL(None, use_errno=True) if sys.platform.startswith("linux") else None
except OSError:  # pragma: no cover
    _LIBC = None


def _die_with_parent() -> None:  # runs in the child between fork and exec
    if _LIBC is not None:
        _LIBC.prctl(_PR_SET_PDEATHSIG, signal.SIGKILL, 0, 0, 0)


class _Launch:
    """One server process: spawn (non-blocking), wait until it answers, stop by PID."""

    def __init__(self, kind: str) -> None:
        self.kind = kind
        _sweep_stale_workdirs()
        self.workdir = Path(tempfile.mkdtemp(prefix=f"lakeload-{kind}-"))
        (self.workdir / "owner.pid").write_text(str(os.getpid()))
        self.proc: subprocess.Popen[bytes] | None = None
        self.port = 0
        self.attempts = 0
        self.result: Any = None
        self.extra: dict[str, Any] = {}
        self.started_at = 0.0
        self.ready_seconds: float | None = None
        self._log: Any = None

    # --- per kind -----------------------------------------------------------------------------------
    def _command(self) -> tuple[list[str], dict[str, str], Path]:
        env = dict(os.environ)
        bindir = Path(sys.executable).parent
        if self.kind == "s3":
            env.pop("INITIAL_NO_AUTH_ACTION_COUNT", None)
            return [str(bindir / "moto_server"), "-H", HOST, "-p", str(self.port)], env, self.workdir
        if self.kind == "gcs":
            argv = [
                str(bindir / "gcp-storage-emulator"),
                "start",
                "--host",
                HOST,
                "--port",
                str(self.port),
                "--in-memory",
                "--quiet",
                "--default-bucket",
                GCS_BUCKET,
            ]
            return argv, env, self.workdir
        if self.kind == "azure":
            node = shutil.which("node")
            if node is None or not AZURITE_BLOB.exists():
                raise _azurite_missing()
            env.pop("AZURITE_ACCOUNTS", None)
            data = self.workdir / "data"
            data.mkdir(exist_ok=True)
            argv = [
                node,
                os.path.realpath(AZURITE_BLOB),
                "--blobHost",
                HOST,
                "--blobPort",
                str(self.port),
                "--location",
                str(data),
                "--skipApiVersionCheck",
                "--loose",
                "--disableTelemetry",
                "--silent",
            ]
            return argv, env, self.workdir
        if self.kind == "sftp":
            self.extra.setdefault("password", secrets.token_urlsafe(16))
            self.extra.setdefault("passphrase", secrets.token_urlsafe(16))
            env.update(
                LAKELOAD_SFTP_USERNAME=SFTP_USERNAME,
                LAKELOAD_SFTP_PASSWORD=self.extra["password"],
                LAKELOAD_SFTP_KEY_PASSPHRASE=self.extra["passphrase"],
            )
            (self.workdir / "ready.json").unlink(missing_ok=True)
            return [sys.executable, str(SFTP_SERVER_SCRIPT), str(self.workdir)], env, self.workdir
        raise ValueError(self.kind)

    def _answers(self) -> bool:
        if self.kind == "s3":
            return _http_answers(f"http://{HOST}:{self.port}/moto-api/data.json") == 200
        if self.kind == "gcs":
            return _http_answers(f"http://{HOST}:{self.port}/storage/v1/b/{GCS_BUCKET}") == 200
        if self.kind == "azure":
            return _http_answers(f"http://{HOST}:{self.port}/{AZURITE_ACCOUNT}?comp=list") is not None
        if self.kind == "sftp":
            ready = self.workdir / "ready.json"
            if not ready.exists():
                return False
            self.port = int(json.loads(ready.read_text())["port"])
            try:
                with socket.create_connection((HOST, self.port), timeout=1.0) as sock:
                    return sock.recv(64).startswith(b"SSH-")
            except OSError:
                return False
        raise ValueError(self.kind)

    def _finish(self) -> Any:
        """Runs once the server answers: create buckets/users, build the dataclass."""
        if self.kind == "s3":
            return _setup_s3(f"http://{HOST}:{self.port}")
        if self.kind == "gcs":
            return GcsServer(
                endpoint_url=f"http://{HOST}:{self.port}", project=GCS_PROJECT, bucket=GCS_BUCKET
            )
        if self.kind == "azure":
            return _setup_azure(f"http://{HOST}:{self.port}/{AZURITE_ACCOUNT}")
        if self.kind == "sftp":
            return SftpServer(
                host=HOST,
                port=self.port,
                username=SFTP_USERNAME,
                password=self.extra["password"],
                key_filename=str(self.workdir / "client_key"),
                key_passphrase=None,
                known_hosts=str(self.workdir / "known_hosts"),
                root=str(self.workdir / "root"),
            )
        raise ValueError(self.kind)

    # --- generic ------------------------------------------------------------------------------------
    def spawn(self) -> None:
        if self.proc is not None:
            return
        self.attempts += 1
        if self.kind != "sftp":  # the SFTP server binds port 0 itself and reports it
            self.port = _free_port()
        argv, env, cwd = self._command()
        if self._log is not None:
            self._log.close()
        self._log = open(self.workdir / "server.log", "ab")  # noqa: SIM115 - closed in stop()
        self._log.write(f"--- attempt {self.attempts}: {' '.join(argv)}\n".encode())
        self._log.flush()
        self.started_at = time.monotonic()
        self.proc = subprocess.Popen(
            argv,
            cwd=cwd,
            env=env,
            stdin=subprocess.DEVNULL,
            stdout=self._log,
            stderr=subprocess.STDOUT,
            start_new_session=True,
            preexec_fn=_die_with_parent,
        )
        _RUNNING[self.kind] = self

    def log_tail(self, lines: int = 30) -> str:
        try:
            text = (self.workdir / "server.log").read_text(errors="replace")
        except OSError:
            return "(no log)"
        return "\n".join(text.splitlines()[-lines:]) or "(empty log)"

    def ready(self) -> Any:
        if self.result is not None:
            return self.result
        self.spawn()
        deadline = time.monotonic() + STARTUP_TIMEOUT
        delay = 0.02
        while True:
            assert self.proc is not None
            code = self.proc.poll()
            if code is not None:
                if self.attempts < 3:  # e.g. the port was taken between choosing and binding it
                    self.proc = None
                    self.spawn()
                    continue
                raise ServerStartError(
                    f"{self.kind} server exited with code {code} while starting "
                    f"(attempt {self.attempts}); log tail:\n{self.log_tail()}"
                )
            if self._answers():
                break
            if time.monotonic() > deadline:
                raise ServerStartError(
                    f"{self.kind} server (pid {self.proc.pid}, port {self.port}) did not answer within "
                    f"{STARTUP_TIMEOUT:.0f}s (LAKELOAD_TEST_SERVER_TIMEOUT); log tail:\n{self.log_tail()}"
                )
            time.sleep(delay)
            delay = min(delay * 1.5, 0.2)
        try:
            self.result = self._finish()
        except Exception as e:
            raise ServerStartError(
                f"{self.kind} server answers but setting it up failed: {e!r}; log tail:\n{self.log_tail()}"
            ) from e
        self.ready_seconds = time.monotonic() - self.started_at
        _STARTUP_SECONDS[self.kind] = self.ready_seconds
        return self.result

    def stop(self) -> None:
        proc, self.proc = self.proc, None
        if proc is not None and proc.poll() is None:
            with contextlib.suppress(ProcessLookupError):
                proc.terminate()
            try:
                proc.wait(STOP_TIMEOUT)
            except subprocess.TimeoutExpired:
                with contextlib.suppress(ProcessLookupError):
                    proc.kill()
                proc.wait(STOP_TIMEOUT)
        if self._log is not None:
            self._log.close()
            self._log = None
        _RUNNING.pop(self.kind, None)
        shutil.rmtree(self.workdir, ignore_errors=True)


_SWEPT = False


def _sweep_stale_workdirs() -> None:
    """Remove the temp folders of test sessions that were killed too hard to clean up (once per session)."""
    global _SWEPT
    if _SWEPT:
        return
    _SWEPT = True
    for kind in ("s3", "azure", "gcs", "sftp"):
        for folder in Path(tempfile.gettempdir()).glob(f"lakeload-{kind}-*"):
            try:
                owner = int((folder / "owner.pid").read_text())
                os.kill(owner, 0)
            except ProcessLookupError:
                shutil.rmtree(folder, ignore_errors=True)
            except (OSError, ValueError):
                continue  # not ours to judge (no/unreadable owner.pid, or another user's live process)


def _azurite_missing() -> BaseException:
    if shutil.which("node") is None or shutil.which("npm") is None:
        return pytest.skip.Exception(
            "Azure tests need Azurite, which needs Node.js and npm, and they are not installed "
            "(Debian/Ubuntu: apt-get install -y nodejs npm; then run scripts/setup.sh)"
        )
    return ServerStartError(f"Azurite is not installed ({AZURITE_BLOB} is missing): run scripts/setup.sh")


def _setup_s3(endpoint: str) -> S3Server:
    import boto3

    boot = {
        "endpoint_url": endpoint,
        "region_name": S3_REGION,
        "aws_access_key_id": "testing",
        "aws_secret_access_key": "testing",
    }
    iam = boto3.client("iam", **boot)
    iam.create_user(UserName="lakeload")
    iam.put_user_policy(
        UserName="lakeload",
        PolicyName="allow-all",
        PolicyDocument=json.dumps(
            {"Version": "2012-10-17", "Statement": [{"Effect": "Allow", "Action": "*", "Resource": "*"}]}
        ),
    )
    key = iam.create_access_key(UserName="lakeload")["AccessKey"]
    boto3.client("s3", **boot).create_bucket(Bucket=S3_BUCKET)
    if os.environ.get("LAKELOAD_TEST_S3_AUTH", "1") != "0":
        req = urllib.request.Request(
            f"{endpoint}/moto-api/reset-auth",
            data=b"0",
            method="POST",
            headers={"Content-Type": "text/plain"},
        )  # not a form: moto reads the body
        with urllib.request.urlopen(req, timeout=10) as resp:
            resp.read()
    return S3Server(
        endpoint_url=endpoint,
        access_key=key["AccessKeyId"],
        secret_key=key["SecretAccessKey"],
        region=S3_REGION,
        bucket=S3_BUCKET,
    )


def _setup_azure(blob_endpoint: str) -> AzureServer:
    from azure.storage.blob import BlobServiceClient

    conn = (
        f"DefaultEndpointsProtocol=http;AccountName={AZURITE_ACCOUNT};AccountKey={AZURITE_KEY};"
        f"BlobEndpoint={blob_endpoint};"
    )
    with BlobServiceClient.from_connection_string(conn) as client:
        client.create_container(AZURE_CONTAINER)
    return AzureServer(
        account_name=AZURITE_ACCOUNT,
        account_key=AZURITE_KEY,
        blob_endpoint=blob_endpoint,
        connection_string=conn,
        container=AZURE_CONTAINER,
    )


# ----------------------------------------------------------------------------------------------------
# Registry, pytest hooks and fixtures

_KINDS = {
    "s3_server": "s3",
    "azure_server": "azure",
    "gcs_server": "gcs",
    "sftp_server": "sftp",
    "sftp_server_passphrase_key": "sftp",
}
_LAUNCHES: dict[str, _Launch] = {}
_RUNNING: dict[str, _Launch] = {}
_STARTUP_SECONDS: dict[str, float] = {}


def _launch(kind: str) -> _Launch:
    if kind not in _LAUNCHES:
        _LAUNCHES[kind] = _Launch(kind)
    return _LAUNCHES[kind]


def _stop_all() -> None:
    for launch in list(_RUNNING.values()):
        launch.stop()
    for launch in list(_LAUNCHES.values()):
        shutil.rmtree(launch.workdir, ignore_errors=True)
    _LAUNCHES.clear()


atexit.register(_stop_all)


def pytest_collection_finish(session: pytest.Session) -> None:
    """Spawn (not wait for) every server the selected tests need, so that they start in parallel."""
    if session.config.option.collectonly:
        return
    kinds = {
        _KINDS[name] for item in session.items for name in getattr(item, "fixturenames", ()) if name in _KINDS
    }
    for kind in sorted(kinds):
        try:
            _launch(kind).spawn()
        except BaseException:  # reported again, per test, when the fixture asks for the server
            _LAUNCHES.pop(kind, None)


def pytest_sessionfinish(session: pytest.Session) -> None:
    _stop_all()


def _serve(kind: str) -> Iterator[Any]:
    launch = _launch(kind)
    try:
        yield launch.ready()
    finally:
        launch.stop()
        _LAUNCHES.pop(kind, None)


@pytest.fixture(scope="session")
def s3_server() -> Iterator[S3Server]:
    yield from _serve("s3")


@pytest.fixture(scope="session")
def azure_server() -> Iterator[AzureServer]:
    yield from _serve("azure")


@pytest.fixture(scope="session")
def gcs_server() -> Iterator[GcsServer]:
    yield from _serve("gcs")


@pytest.fixture(scope="session")
def sftp_server() -> Iterator[SftpServer]:
    yield from _serve("sftp")


@pytest.fixture(scope="session")
def sftp_server_passphrase_key(sftp_server: SftpServer) -> SftpServer:
    """The same server as sftp_server, with a client key encrypted with ``key_passphrase``."""
    launch = _launch("sftp")
    return replace(
        sftp_server,
        key_filename=sftp_server.key_filename + "_passphrase",
        key_passphrase=launch.extra["passphrase"],
    )


def pytest_terminal_summary(terminalreporter: Any) -> None:
    if _STARTUP_SECONDS:
        parts = ", ".join(f"{k} {v:.1f}s" for k, v in sorted(_STARTUP_SECONDS.items()))
        terminalreporter.write_line(
            f"storage servers (spawned in parallel) ready, seconds after spawn when first used: {parts}"
        )
