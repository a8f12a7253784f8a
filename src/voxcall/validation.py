"""pydantic's validation errors as a client, a model or an operator reads them: the first problem, and where it is
(the rest follow once it is fixed). Every part that checks a value with pydantic reports its errors through
:func:`first_problem`; this module imports nothing of voxcall's."""

from __future__ import annotations

from dataclasses import dataclass

from pydantic import ValidationError

__all__ = ["Problem", "first_problem"]


@dataclass(frozen=True)
class Problem:
    """One validation error: ``where`` it is (a dotted path, "" for the value itself), pydantic's ``message``, and
    whether it is a ``missing`` required field."""

    where: str
    message: str
    missing: bool


def first_problem(exc: ValidationError, *, skip: int = 0, within: str = "") -> Problem:
    """The first problem of ``exc``; its location drops its first ``skip`` parts (a union's tag) and is placed
    ``within`` a parent path."""
    error = exc.errors(include_url=False)[0]
    where = ".".join(str(part) for part in ((within,) if within else ()) + tuple(error["loc"][skip:]))
    return Problem(where, error["msg"], error["type"] == "missing")
