"""pydantic's errors as one problem (:mod:`voxcall.validation`): the first one, located as a client writes it."""

from __future__ import annotations

import pytest
from pydantic import BaseModel, ValidationError

from voxcall.validation import first_problem


class Inner(BaseModel):
    rate: int


class Outer(BaseModel):
    format: Inner
    name: str


def test_the_first_problem_is_located_within_its_parent_and_says_whether_a_field_is_missing() -> None:
    with pytest.raises(ValidationError) as refused:
        Outer.model_validate({"format": {"rate": "fast"}})
    problem = first_problem(refused.value, within="session.audio")
    assert problem.where == "session.audio.format.rate" and not problem.missing and "integer" in problem.message
    with pytest.raises(ValidationError) as missing:
        Outer.model_validate({"format": {"rate": 1}})
    assert first_problem(missing.value).where == "name" and first_problem(missing.value).missing
    assert first_problem(missing.value, skip=1).where == ""  # a union's tag dropped: the value itself
