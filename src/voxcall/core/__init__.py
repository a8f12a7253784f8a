"""The session core: conversation, hearing and speaking, the response lifecycle, the tool ledger and speculation; the protocol edges (:mod:`voxcall.realtime`, :mod:`voxcall.live`) drive it."""
