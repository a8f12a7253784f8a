"""The GPT-Live protocol's edge over the session core (:mod:`voxcall.core`): ``WS /v1/live/sessions``."""
