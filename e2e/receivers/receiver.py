"""A webhook receiver for mqgate's end-to-end tests, verifying every
request with the official Standard Webhooks library (standardwebhooks on
PyPI).

It listens on 127.0.0.1 (an ephemeral port), prints "LISTEN <port>", then
one JSON line per request: the webhook-id and webhook-attempt headers,
whether the library verified the request, the message ids it carried and
the status answered. A request whose messages' bodies start with
"fail-first" is answered 500 on its first attempt, so the test sees
retries. The secret comes from WEBHOOK_SECRET.
"""

import json
import os
import sys
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

from standardwebhooks.webhooks import Webhook

HOOK = Webhook(os.environ["WEBHOOK_SECRET"])


class Handler(BaseHTTPRequestHandler):
    def do_POST(self):
        raw = self.rfile.read(int(self.headers.get("Content-Length", "0")))
        headers = {k.lower(): v for k, v in self.headers.items()}
        try:
            HOOK.verify(raw, headers)
            verified = True
        except Exception as e:  # any verification failure
            verified = False
            sys.stderr.write("verification failed: %r\n" % e)
        msgs = json.loads(raw).get("messages", [])
        attempt = headers.get("webhook-attempt", "")
        status = 204
        if not verified:
            status = 401
        elif attempt == "1" and any(m.get("body", "").startswith("fail-first") for m in msgs):
            status = 500
        line = json.dumps({
            "id": headers.get("webhook-id", ""),
            "attempt": attempt,
            "verified": verified,
            "messageIds": [m.get("messageId") for m in msgs],
            "status": status,
        })
        sys.stdout.write(line + "\n")
        sys.stdout.flush()
        self.send_response(status)
        self.send_header("Content-Length", "0")
        self.end_headers()

    def log_message(self, *args):
        pass


def main():
    srv = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    sys.stdout.write("LISTEN %d\n" % srv.server_address[1])
    sys.stdout.flush()
    srv.serve_forever()


if __name__ == "__main__":
    main()
