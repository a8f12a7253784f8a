"""The session core: the conversation, hearing and speaking, the response lifecycle, the tool ledger and
speculation. It knows no socket; the protocol edges (:mod:`voxcall.realtime`, :mod:`voxcall.live`) drive it."""
