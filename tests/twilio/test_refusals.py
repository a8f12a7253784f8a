"""Who may open a phone stream: only Twilio, proven by its signature; the settings that guard it."""

from __future__ import annotations

import logging
from pathlib import Path

import pytest
from websockets.asyncio.client import connect
from websockets.exceptions import InvalidStatus

from tests.twilio.conftest import SCRIPT, TOKEN, PhoneServer, phone_settings
from voxcall.config import ConfigError, ServerSettings
from voxcall.llm import ScriptedBackend
from voxcall.twilio.signature import signature


async def refusal(url: str, caplog: pytest.LogCaptureFixture, headers: dict[str, str] | None = None) -> str:
    """Open ``url``, expect HTTP 403 before the upgrade, and return the reason the server logged."""
    caplog.clear()
    with caplog.at_level(logging.INFO, logger="voxcall.serving.gate"), pytest.raises(InvalidStatus) as refused:
        async with connect(url, additional_headers=headers or {}):
            pass
    assert refused.value.response.status_code == 403
    return caplog.text


async def test_a_stream_without_twilio_s_signature_is_refused(caplog: pytest.LogCaptureFixture) -> None:
    async with PhoneServer(phone_settings(), ScriptedBackend(SCRIPT), voice=None) as server:
        url = server.url()
        assert "missing or invalid X-Twilio-Signature" in await refusal(url, caplog)
        wrong = {"X-Twilio-Signature": signature("another-account-token", url)}
        assert "missing or invalid X-Twilio-Signature" in await refusal(url, caplog, wrong)
        other_path = {"X-Twilio-Signature": signature(TOKEN, server.url("sales"))}
        assert "missing or invalid X-Twilio-Signature" in await refusal(url, caplog, other_path)
        signed = {"X-Twilio-Signature": signature(TOKEN, server.url("sales"))}
        assert "no such agent profile" in await refusal(server.url("sales"), caplog, signed)
        signed = {"X-Twilio-Signature": signature(TOKEN, url)}
        assert "speech is off" in await refusal(url, caplog, signed)  # signed, but this server cannot talk


async def test_without_an_auth_token_every_stream_is_refused(caplog: pytest.LogCaptureFixture) -> None:
    settings = ServerSettings(profiles={"front-desk": {}})
    async with PhoneServer(settings, ScriptedBackend(SCRIPT), voice=None) as server:
        assert "twilio.auth_token is not configured" in await refusal(server.url(), caplog)
    unsigned = ServerSettings(profiles={"front-desk": {}}, twilio={"insecure_no_signature": True})
    async with PhoneServer(unsigned, ScriptedBackend(SCRIPT), voice=None) as server:
        assert "speech is off" in await refusal(server.url(), caplog)  # past the signature check


def test_unsigned_streams_are_refused_beyond_loopback(tmp_path: Path) -> None:
    keys = tmp_path / "keys"
    keys.write_text("client-key\n")
    ServerSettings(host="127.0.0.1", twilio={"insecure_no_signature": True}).check_exposure()
    exposed = ServerSettings(host="0.0.0.0", api_key_file=keys, twilio={"insecure_no_signature": True})
    with pytest.raises(ConfigError, match=r"twilio\.insecure_no_signature"):
        exposed.check_exposure()
    ServerSettings(host="0.0.0.0", api_key_file=keys, twilio={"auth_token": TOKEN}).check_exposure()


def test_the_twilio_settings_are_checked_and_the_token_is_masked() -> None:
    with pytest.raises(ConfigError, match=r"twilio\.public_url"):
        ServerSettings.load(twilio={"public_url": "https://voice.example.com/v1"})
    settings = ServerSettings.load(twilio={"auth_token": TOKEN, "public_url": "wss://voice.example.com/"},
                                   profiles={"sales": {"tools": ["calculator"], "voice": "joe"}})
    assert settings.twilio.public_url == "wss://voice.example.com"
    assert settings.masked()["twilio"]["auth_token"] == "********"
    assert TOKEN not in str(settings.masked())
    with pytest.raises(ConfigError, match=r"profiles\.sales\.greeting"):
        ServerSettings.load(profiles={"sales": {"greeting": "Hi"}})
