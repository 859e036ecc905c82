// A webhook receiver for mqgate's end-to-end tests, verifying every
// request with the official Standard Webhooks library (standardwebhooks on
// npm). Same protocol as receiver.py: prints "LISTEN <port>", then one JSON
// line per request; bodies starting with "fail-first" get a 500 on their
// first attempt. The secret comes from WEBHOOK_SECRET.
"use strict";

const http = require("http");
const { Webhook } = require("standardwebhooks");

const hook = new Webhook(process.env.WEBHOOK_SECRET);

const server = http.createServer((req, res) => {
  const chunks = [];
  req.on("data", (c) => chunks.push(c));
  req.on("end", () => {
    const raw = Buffer.concat(chunks).toString("utf8");
    let verified = true;
    try {
      hook.verify(raw, req.headers);
    } catch (e) {
      verified = false;
      process.stderr.write(`verification failed: ${e}\n`);
    }
    const msgs = JSON.parse(raw).messages || [];
    const attempt = req.headers["webhook-attempt"] || "";
    let status = 204;
    if (!verified) {
      status = 401;
    } else if (attempt === "1" && msgs.some((m) => (m.body || "").startsWith("fail-first"))) {
      status = 500;
    }
    process.stdout.write(JSON.stringify({
      id: req.headers["webhook-id"] || "",
      attempt,
      verified,
      messageIds: msgs.map((m) => m.messageId),
      status,
    }) + "\n");
    res.writeHead(status, { "Content-Length": "0" });
    res.end();
  });
});

server.listen(0, "127.0.0.1", () => {
  process.stdout.write(`LISTEN ${server.address().port}\n`);
});
