"""AWS S3 (and S3-compatible stores: MinIO, R2, moto) credentials for s3fs.

Without an access key, nothing is passed and s3fs/botocore use their default chain (environment,
`~/.aws/credentials` with `profile_name`, instance roles).

>>> creds = AwsCredentials(aws_access_key_id="AKIA", aws_secret_access_key="s", region_name="eu-central-1")
>>> sorted(creds.fsspec_kwargs())
['client_kwargs', 'key', 'secret']
>>> creds.fsspec_kwargs()["client_kwargs"]
{'region_name': 'eu-central-1'}
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import ClassVar

from lakeload.config.bucket_credentials.base import (
    TypedCredentials,
    not_secret,
    require,
    secret,
    without_none,
)
from lakeload.config.open_types import FsspecOptions
from lakeload.errors import ConfigurationError

# botocore's addressing styles for the DuckDB-style `s3_url_style` values
_ADDRESSING_STYLES = {"path": "path", "vhost": "virtual", "virtual": "virtual", "auto": "auto"}


@dataclass(repr=False)
class AwsCredentials(TypedCredentials):
    """dlt's `AwsCredentials` fields. `s3_url_style` (`path`/`vhost`) also sets botocore's addressing style.

    >>> AwsCredentials(profile_name="ci").fsspec_kwargs()
    {'profile': 'ci'}
    """

    backend: ClassVar[str] = "s3"
    protocols: ClassVar[tuple[str, ...]] = ("s3", "s3a")

    aws_access_key_id: str | None = secret()
    aws_secret_access_key: str | None = secret()
    aws_session_token: str | None = secret()
    profile_name: str | None = None
    region_name: str | None = None
    endpoint_url: str | None = None
    s3_url_style: str | None = None
    aws_sts_token_expiration_hours: float = not_secret(24.0)

    @property
    def has_keys(self) -> bool:
        """True when static keys are given; False means botocore's default credential chain."""
        return bool(self.aws_access_key_id)

    def validate(self) -> None:
        require(self, "a static key", ["aws_access_key_id", "aws_secret_access_key"])
        if self.aws_session_token and not self.has_keys:
            raise ConfigurationError(
                "AwsCredentials: aws_session_token needs aws_access_key_id and aws_secret_access_key."
            )
        if self.s3_url_style and self.s3_url_style.lower() not in _ADDRESSING_STYLES:
            raise ConfigurationError(
                f"AwsCredentials: s3_url_style={self.s3_url_style!r}; use one of {', '.join(_ADDRESSING_STYLES)}."
            )
        if self.aws_sts_token_expiration_hours <= 0:
            raise ConfigurationError("AwsCredentials: aws_sts_token_expiration_hours must be positive.")

    def fsspec_kwargs(self) -> FsspecOptions:
        """s3fs arguments: `key`, `secret`, `token`, `profile`, `endpoint_url`, `client_kwargs.region_name`."""
        options: FsspecOptions = without_none(
            {
                "key": self.aws_access_key_id or None,
                "secret": self.aws_secret_access_key or None,
                "token": self.aws_session_token or None,
                "profile": self.profile_name or None,
                "endpoint_url": self.endpoint_url or None,
            }
        )
        if self.region_name:
            options["client_kwargs"] = {"region_name": self.region_name}
        return options

    @classmethod
    def protocol_defaults(cls) -> FsspecOptions:
        """No listing cache: executors write to the bucket behind the driver's back."""
        return {"use_listings_cache": False}

    def fsspec_defaults(self) -> FsspecOptions:
        """botocore `config_kwargs` users may override: addressing style, and on S3-compatible endpoints
        checksums only when required (many S3-compatible stores reject botocore's default checksums)."""
        config: FsspecOptions = {}
        if self.endpoint_url:
            config["request_checksum_calculation"] = "when_required"
            config["response_checksum_validation"] = "when_required"
        if self.s3_url_style:
            config["s3"] = {"addressing_style": _ADDRESSING_STYLES[self.s3_url_style.lower()]}
        return {"config_kwargs": config} if config else {}
