"""The one error of the local plan: a JobSet or option run-local cannot honour."""

from __future__ import annotations


class PlanError(ValueError):
    """A JobSet or option run-local cannot honour; ``option`` names what to change."""

    def __init__(self, option: str, message: str) -> None:
        self.option = option
        self.message = message
        super().__init__(f"{option}: {message}")
