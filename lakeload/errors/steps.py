"""`PipelineStepFailed`: a failed extract, normalize or load step, which is also an instance of its cause's class
(`step_failed`), so that dlt's `except PipelineStepFailed:` and lakeload's `except DeltaConflictError:` both work.
"""

from __future__ import annotations

from lakeload.errors.base import ExtractError, LakeloadError, LoadError, NormalizeError


class PipelineStepFailed(LakeloadError):
    """A pipeline step failed; `step` names it and `__cause__` is the original error.

    When the cause is a `LakeloadError`, the raised error is also an instance of the cause's class (see
    `step_failed`), so `except DeltaConflictError:` around `run()` works as well as `except PipelineStepFailed:`.
    """

    def __init__(self, step: str, load_id: str | None, message: str) -> None:
        self.step = step
        self.load_id = load_id
        self.detail = message
        where = f" (load package {load_id})" if load_id else ""
        # Exception's own __init__: a cause class mixed in (see `step_failed`) may take other arguments
        Exception.__init__(self, f"Pipeline step '{step}' failed{where}: {message}")

    def __str__(self) -> str:  # a KeyError mixed in would quote the message
        return str(self.args[0]) if self.args else ""

    def __reduce__(self) -> tuple[object, ...]:
        base = next(c for c in type(self).__mro__ if c in _STEP_CLASSES)
        mixed = None if type(self) is base else type(self).__bases__[1]
        return (_rebuilt_step_failed, (base, mixed, self.step, self.load_id, self.detail), dict(self.__dict__))


class ExtractStepFailed(PipelineStepFailed, ExtractError):
    """The extract step failed; nothing of this run was loaded and the pipeline state is unchanged."""


class NormalizeStepFailed(PipelineStepFailed, NormalizeError):
    """The normalize step failed; the extracted package stays pending (the message says how to retry or drop it)."""


class LoadStepFailed(PipelineStepFailed, LoadError):
    """The load step failed; the normalized package stays pending (the message says how to retry or drop it)."""


STEP_FAILURES: dict[str, type[PipelineStepFailed]] = {
    "extract": ExtractStepFailed,
    "normalize": NormalizeStepFailed,
    "load": LoadStepFailed,
}


_STEP_CLASSES = (PipelineStepFailed, *STEP_FAILURES.values())


_MIXED: dict[tuple[type[PipelineStepFailed], type[LakeloadError]], type[PipelineStepFailed]] = {}


def _mixed_class(base: type[PipelineStepFailed], cause: type[LakeloadError]) -> type[PipelineStepFailed]:
    """`base` and `cause` in one class (made once per pair), or `base` when they cannot be combined or `cause` is
    also a builtin error (a `KeyError`, `ValueError`, ...): dlt's step error is none of those, nor is lakeload's."""
    builtin = any(c not in (Exception, BaseException, object) and not issubclass(c, LakeloadError) for c in cause.__mro__)
    if builtin or issubclass(base, cause) or issubclass(cause, PipelineStepFailed):
        return base
    if (base, cause) not in _MIXED:
        try:
            mixed = type(f"{base.__name__}_{cause.__name__}", (base, cause), {"__module__": "lakeload.errors"})
        except TypeError:  # incompatible layouts: the cause stays reachable as __cause__ only
            mixed = base
        _MIXED[(base, cause)] = mixed
    return _MIXED[(base, cause)]


def step_failed(step: str, load_id: str | None, message: str, cause: BaseException | None = None) -> PipelineStepFailed:
    """The `PipelineStepFailed` of `step`, also an instance of the step's own error (`LoadError` for load, ...)
    and of `cause`'s class when that is a `LakeloadError` (whose attributes it carries too): dlt users catch
    `PipelineStepFailed`, lakeload's docs (docs/operations.md) show `except DeltaConflictError:`, and both must work.

    >>> isinstance(step_failed("load", "1795296531.14", "bucket gone"), LoadError)
    True
    >>> from lakeload.errors import DeltaConflictError
    >>> isinstance(step_failed("load", "1", "lost", DeltaConflictError("lost")), DeltaConflictError)
    True
    """
    base = STEP_FAILURES.get(step, PipelineStepFailed)
    kind = _mixed_class(base, type(cause)) if isinstance(cause, LakeloadError) else base
    error = kind(step, load_id, message)
    if kind is not base and cause is not None:
        error.__dict__.update({k: v for k, v in vars(cause).items() if k not in error.__dict__})
    return error


def _rebuilt_step_failed(
    base: type[PipelineStepFailed], mixed: type[LakeloadError] | None, step: str, load_id: str | None, message: str
) -> PipelineStepFailed:
    """Unpickles a step error (`PipelineStepFailed.__reduce__`): its class is made again from the same pair."""
    return (_mixed_class(base, mixed) if mixed is not None else base)(step, load_id, message)
