"""A real OAuth 2 token endpoint (http.server in a thread) for the OAUTHBEARER tests."""

from __future__ import annotations

import base64
import json
import threading
import urllib.parse
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any


class TokenEndpoint:
    """An OAuth 2 token endpoint granting `client_credentials` to app:s3cret."""

    def __init__(self) -> None:
        self.requests: list[dict[str, Any]] = []
        endpoint = self

        class Handler(BaseHTTPRequestHandler):
            def do_POST(self) -> None:
                body = self.rfile.read(int(self.headers["Content-Length"])).decode()
                form = dict(urllib.parse.parse_qsl(body))
                basic = self.headers.get("Authorization", "").removeprefix("Basic ")
                endpoint.requests.append({"form": form, "auth": base64.b64decode(basic)})
                if base64.b64decode(basic) != b"app:s3cret":
                    self.send_response(401)
                    self.end_headers()
                    return
                answer = {"access_token": f"token-{len(endpoint.requests)}", "expires_in": 100}
                data = json.dumps(answer).encode()
                self.send_response(200)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(data)))
                self.end_headers()
                self.wfile.write(data)

            def log_message(self, *args: Any) -> None:
                pass

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.url = f"http://127.0.0.1:{self.server.server_address[1]}/token"

    def __enter__(self) -> TokenEndpoint:
        threading.Thread(target=self.server.serve_forever, daemon=True).start()
        return self

    def __exit__(self, *exc: object) -> None:
        self.server.shutdown()
        self.server.server_close()
