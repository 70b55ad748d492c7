"""Moved to `lakeload.config.log_secrets` (secret masking belongs with the configuration it masks); this name
keeps working for scripts that install the filter themselves, with a `DeprecationWarning`.

>>> from lakeload.runtime.log_secrets import SecretMaskingFilter   # a DeprecationWarning on first import
>>> from lakeload.config import log_secrets
>>> SecretMaskingFilter is log_secrets.SecretMaskingFilter
True
"""

from __future__ import annotations

import warnings

from lakeload.config.log_secrets import *  # noqa: F403 - the moved module's names
from lakeload.config.log_secrets import SecretMaskingFilter, install_secret_masking, mask_secrets  # noqa: F401

warnings.warn(
    "lakeload.runtime.log_secrets moved to lakeload.config.log_secrets; import it from there",
    DeprecationWarning,
    stacklevel=2,
)
