"""Reading a call's offer: both forms OpenAI takes, and a reason for every body refused."""

from __future__ import annotations

import pytest

from voxcall.webrtc.offer import MAX_OFFER_BYTES, OfferError, read_form, read_sdp

SDP = "v=0\r\no=- 1 2 IN IP4 127.0.0.1\r\ns=-\r\nt=0 0\r\nm=audio 9 UDP/TLS/RTP/SAVPF 111\r\n" \
      "m=application 9 UDP/DTLS/SCTP webrtc-datachannel\r\n"


def test_an_sdp_body_and_a_form_with_a_session() -> None:
    assert read_sdp(SDP.encode()).sdp == SDP
    offer = read_form(SDP, '{"instructions": "Be brief."}')
    assert offer.session == {"type": "realtime", "instructions": "Be brief."}
    assert read_form(SDP, None).session == {}


@pytest.mark.parametrize(("body", "reason"), [
    (b"hello", "not an SDP offer"),
    (b"\xff\xfe", "not UTF-8"),
    (SDP.replace("m=audio", "m=video").encode(), "no audio"),
    (SDP.replace("m=application", "m=video").encode(), "no data channel"),
    (b"v=0" + b" " * MAX_OFFER_BYTES, "over the limit"),
])
def test_a_body_that_is_no_usable_offer(body: bytes, reason: str) -> None:
    with pytest.raises(OfferError, match=reason):
        read_sdp(body)


@pytest.mark.parametrize(("sdp", "session", "reason"), [
    (None, None, "no 'sdp' field"),
    (SDP, "{not json", "not valid JSON"),
    (SDP, "[1]", "must be a JSON object"),
    (SDP, '{"type": "transcription"}', "type 'realtime'"),
])
def test_a_form_that_is_no_usable_offer(sdp: str | None, session: str | None, reason: str) -> None:
    with pytest.raises(OfferError, match=reason):
        read_form(sdp, session)
