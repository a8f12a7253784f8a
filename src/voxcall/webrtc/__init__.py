"""Browser calls over WebRTC, as OpenAI's Realtime service takes them: an SDP offer posted to
``/v1/realtime/calls``, Opus audio both ways, the Realtime events on the ``oai-events`` data channel, and client
secrets so that a page never holds an API key (:mod:`voxcall.webrtc.endpoint`)."""
