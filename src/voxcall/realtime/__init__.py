"""The OpenAI Realtime protocol's edge over the session core (:mod:`voxcall.core`)."""
