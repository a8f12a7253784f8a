"""``GET /`` serves the playground: its page and every module it loads come from the package, with types a
browser accepts for ES modules, beside ``/v1/realtime`` and ``/healthz``; nothing is fetched from elsewhere."""

from __future__ import annotations

import re

from starlette.testclient import TestClient

from voxcall.app import create_app
from voxcall.config import ServerSettings
from voxcall.llm import ScriptedBackend

_IMPORTS = re.compile(r"""(?:from|import)\s*["'](\./[\w.-]+)["']|new URL\("(\./[\w.-]+)\"""")


def test_the_page_and_all_its_modules_are_served() -> None:
    with TestClient(create_app(ServerSettings.load(None), ScriptedBackend())) as client:
        page = client.get("/")
        assert page.status_code == 200 and page.headers["content-type"].startswith("text/html")
        assert 'src="app.js"' in page.text and 'href="playground.css"' in page.text
        assert "http://" not in page.text and "https://" not in page.text  # offline: no CDN
        assert client.get("/playground.css").headers["content-type"].startswith("text/css")
        seen: set[str] = set()
        todo = ["./app.js"]
        while todo:
            name = todo.pop()
            if name in seen:
                continue
            seen.add(name)
            module = client.get("/" + name.removeprefix("./"))
            assert module.status_code == 200, name
            assert module.headers["content-type"].split(";")[0] in ("text/javascript", "application/javascript")
            todo += [a or b for a, b in _IMPORTS.findall(module.text)]
        assert {"./audio.js", "./worklets.js", "./views.js", "./connection.js"} <= seen
        assert client.get("/healthz").json()["status"] == "ok"
        assert client.get("/missing.js").status_code == 404
