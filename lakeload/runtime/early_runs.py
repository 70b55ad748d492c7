"""The normalize runs `run()` began during extract (`lakeload.normalize.early`), by load id, until normalize takes
one or a drop waits for them all.

>>> runs = EarlyRuns()
>>> runs.take("1795296531.14") is None, runs.waited_seconds("1795296531.14")
(True, 0.0)
>>> runs.forget()   # nothing to wait for
"""

from __future__ import annotations

from lakeload.normalize.early import EarlyNormalize


class EarlyRuns:
    """Early normalize runs of a pipeline's packages, shared by its steps and its maintenance."""

    def __init__(self) -> None:
        self._runs: dict[str, EarlyNormalize] = {}

    def add(self, load_id: str, run: EarlyNormalize) -> None:
        """Keep the run begun on package `load_id`: normalize awaits it (its wait is normalize's time)."""
        self._runs[load_id] = run

    def take(self, load_id: str) -> EarlyNormalize | None:
        """The run begun on package `load_id`, no longer kept; None when there is none."""
        return self._runs.pop(load_id, None)

    def waited_seconds(self, load_id: str) -> float:
        """Seconds extract of `load_id` waited for its early normalize at the end (0.0 without one)."""
        run = self._runs.get(load_id)
        return run.waited_seconds() if run is not None else 0.0

    def forget(self) -> None:
        """Wait for the normalize tasks begun during an extract whose package goes (dropped, or normalized afresh),
        then forget them."""
        for load_id, run in self._runs.items():
            run.results(load_id)
        self._runs.clear()
