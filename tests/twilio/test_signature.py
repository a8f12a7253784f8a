"""``X-Twilio-Signature``: the scheme Twilio documents, checked against its own example."""

from __future__ import annotations

from voxcall.twilio.signature import signature, signature_valid, signed_url

DOCS_URL = "https://mycompany.com/myapp.php?foo=1&bar=2"
DOCS_PARAMS = {"CallSid": "CA1234567890ABCDE", "Caller": "+12349013030", "Digits": "1234", "From": "+12349013030",
               "To": "+18005551212"}


def test_twilio_documented_example() -> None:
    assert signature("12345", DOCS_URL, DOCS_PARAMS) == "0/KCTR6DLpKmkAf8muzZqo1nDgQ="


def test_a_stream_url_is_signed_alone_and_checked_with_or_without_its_default_port() -> None:
    url = "wss://voice.example.com/v1/twilio/front-desk"
    signed = signature("12345", url)
    assert signed == "SdN3bUedfPXvvpTlmX1R5KwG9cg="  # what twilio-python's RequestValidator computes
    assert signature_valid("12345", url, signed)
    assert signature_valid("12345", "wss://voice.example.com:443/v1/twilio/front-desk", signed)
    assert signature_valid("12345", url, signature("12345", "wss://voice.example.com:443/v1/twilio/front-desk"))


def test_a_wrong_token_a_wrong_url_or_no_signature_fails() -> None:
    url = "wss://voice.example.com/v1/twilio/front-desk"
    signed = signature("12345", url)
    assert not signature_valid("54321", url, signed)
    assert not signature_valid("12345", url.replace("front-desk", "sales"), signed)
    assert not signature_valid("12345", url, None)
    assert not signature_valid("12345", url, "")
    assert not signature_valid("12345", url, "ünïcode")


def test_the_url_is_the_request_s_or_rebuilt_on_the_public_origin() -> None:
    assert signed_url(None, "ws://127.0.0.1:8765/v1/twilio/a") == "ws://127.0.0.1:8765/v1/twilio/a"
    assert signed_url("wss://voice.example.com", "ws://10.0.0.5:8765/v1/twilio/a?x=1") == (
        "wss://voice.example.com/v1/twilio/a?x=1")
