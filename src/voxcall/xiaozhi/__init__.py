"""xiaozhi voice devices (the ``78/xiaozhi-esp32`` firmware, py-xiaozhi, xiaozhi-sdk) over their WebSocket protocol:
``WS /xiaozhi/v1/`` for the sessions (:mod:`voxcall.xiaozhi.endpoint`) and ``/xiaozhi/ota/`` to find them
(:mod:`voxcall.xiaozhi.discovery`). The device's own MCP tools are its session's tools."""

from voxcall.xiaozhi.discovery import WEBSOCKET_PATH, discovery_routes
from voxcall.xiaozhi.endpoint import serve_xiaozhi, xiaozhi_check

__all__ = ["WEBSOCKET_PATH", "discovery_routes", "serve_xiaozhi", "xiaozhi_check"]
