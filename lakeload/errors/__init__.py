"""The one exception hierarchy of lakeload.

Every error a user can meet derives from :class:`LakeloadError` and says what went wrong and how to fix it. The
classes live in one module per area (`base`: the roots; `configuration`, `data`, `storage`, `steps`); they are
all imported from here, and named here: `lakeload.errors.ConfigurationError` in a traceback and in a pickle.
"""

from __future__ import annotations

from lakeload.errors.base import (
    ConfigurationError,
    DestinationError,
    ExtractError,
    LakeloadError,
    LayoutError,
    LoadError,
    NormalizeError,
    SchemaError,
    SparkSetupError,
)
from lakeload.errors.configuration import (
    ConfigFieldMissingError,
    ConfigFileError,
    ConfigValueMissingError,
    ConfigValueNotSecretError,
    InvalidNameError,
    MissingDependencyError,
    UnknownConfigKeyWarning,
    UnsafeLayoutPathError,
    UnsupportedDestinationError,
    WorkingUrlRequiredError,
)
from lakeload.errors.data import (
    DataValidationError,
    DecimalOutOfRangeError,
    IncrementalCursorInvalidCoercion,
    IncrementalCursorPathHasValueNone,
    IncrementalCursorPathMissing,
    IncrementalError,
    IncrementalPrimaryKeyMissing,
    IntegerOutOfRangeError,
    SourceError,
    TableNotFoundError,
)
from lakeload.errors.steps import (
    STEP_FAILURES,
    ExtractStepFailed,
    LoadStepFailed,
    NormalizeStepFailed,
    PipelineStepFailed,
    step_failed,
)
from lakeload.errors.storage import (
    CannotRestorePipelineError,
    ColumnTypeConflictError,
    DamagedPackageFileError,
    DatabaseUnavailableError,
    DeltaConflictError,
    DeltaLogDamagedError,
    DeltaTableNotFoundError,
    DeltaWriteConflict,
    IcebergCatalogError,
    IcebergConflictError,
    IcebergTableNotFoundError,
    IcebergWriteConflict,
    LoadPackageNotFoundError,
    PipelineLockedError,
    PipelineNotActive,
    StorageUnavailableError,
    TableConflictError,
    TableWriteConflict,
    WorkingFolderCorruptedError,
)

__all__ = [
    "LakeloadError",
    "ConfigurationError",
    "ConfigFieldMissingError",
    "ConfigValueMissingError",
    "ConfigValueNotSecretError",
    "ConfigFileError",
    "UnknownConfigKeyWarning",
    "DestinationError",
    "LayoutError",
    "SchemaError",
    "DataValidationError",
    "IntegerOutOfRangeError",
    "DecimalOutOfRangeError",
    "TableNotFoundError",
    "ExtractError",
    "SourceError",
    "IncrementalError",
    "IncrementalCursorPathMissing",
    "IncrementalCursorPathHasValueNone",
    "IncrementalCursorInvalidCoercion",
    "IncrementalPrimaryKeyMissing",
    "NormalizeError",
    "LoadError",
    "DamagedPackageFileError",
    "ColumnTypeConflictError",
    "DatabaseUnavailableError",
    "SparkSetupError",
    "WorkingUrlRequiredError",
    "PipelineStepFailed",
    "ExtractStepFailed",
    "NormalizeStepFailed",
    "LoadStepFailed",
    "STEP_FAILURES",
    "step_failed",
    "StorageUnavailableError",
    "DeltaConflictError",
    "IcebergCatalogError",
    "IcebergTableNotFoundError",
    "IcebergConflictError",
    "IcebergWriteConflict",
    "TableConflictError",
    "TableWriteConflict",
    "DeltaWriteConflict",
    "MissingDependencyError",
    "DeltaLogDamagedError",
    "DeltaTableNotFoundError",
    "InvalidNameError",
    "UnsafeLayoutPathError",
    "UnsupportedDestinationError",
    "PipelineLockedError",
    "WorkingFolderCorruptedError",
    "CannotRestorePipelineError",
    "LoadPackageNotFoundError",
    "PipelineNotActive",
]

for _name in __all__:  # tracebacks, reprs and pickles name `lakeload.errors.X`, as before the split
    _item = globals()[_name]
    if isinstance(_item, type):
        _item.__module__ = __name__
