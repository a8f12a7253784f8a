"""``voxcall eval``: scripted conversations against any server that speaks the Realtime protocol or GPT-Live.

:func:`load_scenarios` reads a file of :class:`Scenario` s (:mod:`voxcall.evaluation.scenario` documents the
format); :func:`run_scenarios` plays them, over the official ``openai`` SDK's clients, as a caller would (speech
in real time, answers heard on a speaker, client tools answered, barge-ins) and checks each turn; the
:class:`Report` it returns prints as tables (:mod:`voxcall.evaluation.report`) and serialises to JSON.
"""

from __future__ import annotations

from voxcall.evaluation.connect import EvalError
from voxcall.evaluation.runner import EvalOptions, Report, run_scenarios
from voxcall.evaluation.scenario import Scenario, ScenarioError, ScenarioFile, load_scenarios

__all__ = ["EvalError", "EvalOptions", "Report", "Scenario", "ScenarioError", "ScenarioFile", "load_scenarios",
           "run_scenarios"]
