"""The ``xiaozhi:`` section: xiaozhi voice devices, the tokens that let them in and the agents they get."""

from __future__ import annotations

from typing import Literal

from pydantic import BaseModel, ConfigDict, Field, SecretStr, field_validator

from voxcall.config.telephony import ws_origin


class DeviceToken(BaseModel):
    """A token that opens xiaozhi device sessions (``Authorization: Bearer TOKEN``), and the agent its devices get."""

    model_config = ConfigDict(extra="forbid", use_attribute_docstrings=True)

    token: SecretStr
    """The token (at least 16 characters)."""
    profile: str | None = None
    """The agent profile of the sessions it opens (None: as the device id says, else ``xiaozhi.profile``)."""

    @field_validator("token")
    @classmethod
    def _long_enough(cls, value: SecretStr) -> SecretStr:
        if len(value.get_secret_value()) < 16:
            raise ValueError("a device token must be at least 16 characters long")
        return value


class XiaozhiSettings(BaseModel):
    """The ``xiaozhi:`` section: xiaozhi voice devices (ESP32 firmware, py-xiaozhi) at ``WS /xiaozhi/v1/``, told
    where to connect by ``/xiaozhi/ota/`` (see :mod:`voxcall.xiaozhi`)."""

    model_config = ConfigDict(extra="forbid", use_attribute_docstrings=True)

    tokens: list[DeviceToken] = Field(default_factory=list)
    """Tokens that open device sessions besides the client API keys. With keys or tokens configured every device
    presents one; without any (a loopback server), none is needed."""
    ota_token: SecretStr | None = None
    """The token ``/xiaozhi/ota/`` gives the devices it lets in, which opens their sessions as a token of
    :attr:`tokens` without a profile does. Anyone who reaches that endpoint with an allowed device id receives it, so
    pair it with :attr:`allowed_devices`. None: an empty token (enough on a server without keys or tokens)."""
    allowed_devices: list[str] | None = None
    """The device ids (``Device-Id``: the MAC address) that may connect and get the OTA answer; None: any."""
    profile: str | None = None
    """The agent profile of a device that neither its token nor :attr:`device_profiles` gives one (None: the
    server's own settings)."""
    device_profiles: dict[str, str] = Field(default_factory=dict)
    """Agent profile by device id."""
    public_url: str | None = None
    """The ``ws://`` or ``wss://`` origin devices connect to, when a proxy changes it; None: the host and port the
    OTA request was sent to."""
    sample_rate: Literal[16000, 24000] = 24000
    """The rate of the Opus audio sent to devices (announced in the server's ``hello``)."""
    wake_words: list[str] = Field(default_factory=lambda: ["你好小智", "hi esp"])
    """Words a device reports in ``listen``/``detect`` when its wake word fired (compared without case, spaces or
    punctuation): they open the conversation and are not a question to answer. Other ``detect`` text is."""
    greet_on_wake: bool = False
    """Answer a wake word (the model greets the user), as a typed message would be."""
    tool_timeout: float | None = Field(default=None, gt=0)
    """Seconds a device's own tool may take before the model hears that it did not answer (None: ``tools.timeout``;
    ``tools.timeouts`` may name a device tool too)."""
    keepalive_seconds: float = Field(default=30.0, ge=1, le=100)
    """While a tool runs, a device that has been sent nothing for this long is sent its face's ``thinking``
    emotion: firmware drops a channel after 120 s without data."""
    hidden_tools: list[str] = Field(default_factory=list)
    """Device tools (by their name on the device: ``self.camera.take_photo``) the model is never offered."""

    @field_validator("public_url")
    @classmethod
    def _origin(cls, value: str | None) -> str | None:
        return ws_origin(value)

    def profile_names(self) -> set[str]:
        """Every agent profile the section names."""
        names = {token.profile for token in self.tokens} | set(self.device_profiles.values()) | {self.profile}
        return {name for name in names if name is not None}
