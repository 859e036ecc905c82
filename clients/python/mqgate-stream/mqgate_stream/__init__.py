"""Thin asyncio helpers for mqgate's WebSocket streams (docs/streaming.md).

A consume stream pushes deliveries and answers ack, nack, extend and flow
frames; a publish stream answers every publish with a confirm once the
message is durable. Every frame this module sends carries an id and its
answer is matched by that id, so calls may overlap freely.

    async with consume("http://127.0.0.1:8080", "billing", max_outstanding_messages=64) as c:
        async for m in c:
            print(m["body"])
            await c.ack([m["receiptHandle"]])

    async with publish("http://127.0.0.1:8080", "orders") as p:
        result = await p.publish_wait({"body": "order 17 created"})

Acks given in the same turn of the event loop (by tasks settling messages
side by side) go out as one ack frame of up to 100 handles, and each call
still gets the results of its own handles; ``gather_acks=False`` sends
one frame per call.

Messages, results and problems are the API's JSON objects as dicts (the
generated mqgate_client models describe their fields). Built on the
``websockets`` library; hand-written, next to (not inside) the generated
mqgate-client package.
"""

from __future__ import annotations

import asyncio
import base64
import itertools
import json
from collections.abc import AsyncIterator, Awaitable, Callable
from typing import Any
from urllib.parse import quote, urlencode

from websockets.asyncio.client import ClientConnection, connect
from websockets.exceptions import ConnectionClosed, InvalidStatus

__all__ = [
    "PROTOCOL",
    "Consumer",
    "ProblemError",
    "Publisher",
    "StreamClosed",
    "StreamRefused",
    "browser_key_subprotocol",
    "consume",
    "publish",
]

PROTOCOL = "mqgate.v1"

MAX_HANDLES = 100  # receipt handles one settlement frame takes (core.MaxHandles)


def _results(f: dict[str, Any]) -> list[dict[str, Any]]:
    """A results or confirm frame's per-handle or per-message results."""
    return f.get("results") or []


class StreamRefused(Exception):
    """The server refused the upgrade: its HTTP status and problem+json body."""

    def __init__(self, status: int, problem: dict[str, Any] | None, retry_after: int | None):
        self.status, self.problem, self.retry_after = status, problem, retry_after
        detail = f": {problem.get('title')}: {problem.get('detail')}" if problem else ""
        super().__init__(f"stream refused: HTTP {status}{detail}")


class ProblemError(Exception):
    """An error frame answering one frame: an RFC 9457 problem. The stream goes on."""

    def __init__(self, problem: dict[str, Any]):
        self.problem = problem
        self.status = problem.get("status")
        super().__init__(f"{problem.get('status')} {problem.get('title')}: {problem.get('detail')}")


class StreamClosed(Exception):
    """The stream ended before an answer: the close code and reason (docs/streaming.md).

    A publish that fails with it may or may not be stored: resend it with the
    same deduplicationId to be sure.
    """

    def __init__(self, code: int | None, reason: str):
        self.code, self.reason = code, reason
        super().__init__(f"stream closed: {code} {reason}".rstrip())


def _ws_url(base_url: str, path: str, query: dict[str, Any]) -> str:
    base = base_url.rstrip("/")
    if base.startswith("https://"):
        base = "wss://" + base[len("https://") :]
    elif base.startswith("http://"):
        base = "ws://" + base[len("http://") :]
    q = {k: v for k, v in query.items() if v is not None}
    return base + path + ("?" + urlencode(q) if q else "")


class _Stream:
    """What both streams share: the socket, the reader task, answers by id."""

    def __init__(self, ws: ClientConnection, opened: dict[str, Any]):
        self._ws = ws
        self.open: dict[str, Any] = opened
        self._ids = itertools.count(1)
        self._pending: dict[str, tuple[asyncio.Future[Any], Callable[[dict[str, Any]], Any]]] = {}
        self._closing = False
        self.error: Exception | None = None  # why the stream ended
        self._reader = asyncio.create_task(self._read())

    @classmethod
    async def _dial(
        cls, base_url: str, path: str, query: dict[str, Any], key: str | None, open_timeout: float, **kw: Any
    ) -> Any:
        headers = {"Authorization": f"Bearer {key}"} if key else None
        try:
            ws = await connect(
                _ws_url(base_url, path, query),
                subprotocols=[PROTOCOL],  # type: ignore[list-item]
                additional_headers=headers,
                user_agent_header="mqgate-stream-python",
                max_size=None,  # deliveries are bounded by the stream's byte limit
                open_timeout=open_timeout,
            )
        except InvalidStatus as e:
            r = e.response
            problem = None
            try:
                problem = json.loads(bytes(r.body)) if r.body else None
            except ValueError:
                pass
            ra = r.headers.get("Retry-After")
            raise StreamRefused(r.status_code, problem, int(ra) if ra and ra.isdigit() else None) from None
        if ws.subprotocol != PROTOCOL:
            await ws.close()
            raise RuntimeError(f"the server chose subprotocol {ws.subprotocol!r}, not {PROTOCOL}")
        try:
            first = json.loads(await asyncio.wait_for(ws.recv(), open_timeout))
        except BaseException:
            await ws.close()
            raise
        if first.get("type") != "open":
            await ws.close()
            raise RuntimeError(f"first frame is {first.get('type')!r}, not open")
        return cls(ws, first, **kw)

    async def _read(self) -> None:
        try:
            async for raw in self._ws:
                if not isinstance(raw, str):
                    continue
                try:
                    f = json.loads(raw)
                except ValueError:
                    continue
                t = f.get("type")
                if t in ("results", "confirm", "flow", "error"):
                    self._answer(f)
                else:
                    self._on_frame(f)
            rcv = self._ws.close_rcvd
            err: Exception = StreamClosed(rcv.code if rcv else None, rcv.reason if rcv else "")
        except ConnectionClosed as e:
            err = StreamClosed(e.rcvd.code if e.rcvd else None, e.rcvd.reason if e.rcvd else str(e))
        except Exception as e:  # noqa: BLE001 - any failure ends the stream for every waiter
            err = StreamClosed(None, repr(e))
        if self._closing:
            err = StreamClosed(1000, "closed by the client")
        self.error = err
        pending, self._pending = self._pending, {}
        for fut, _ in pending.values():
            if not fut.done():
                fut.set_exception(err)
        self._on_end(err)

    def _answer(self, f: dict[str, Any]) -> None:
        entry = self._pending.pop(str(f.get("id")), None)
        if entry is None:
            return
        fut, convert = entry
        if fut.done():
            return
        if f.get("type") == "error":
            fut.set_exception(ProblemError(f.get("problem") or {}))
        else:
            fut.set_result(convert(f))

    def _on_frame(self, f: dict[str, Any]) -> None:
        pass

    def _on_end(self, err: Exception) -> None:
        pass

    async def _send(self, frame: dict[str, Any], convert: Callable[[dict[str, Any]], Any]) -> asyncio.Future[Any]:
        if self.error is not None:
            raise self.error
        fid = format(next(self._ids), "x")
        frame["id"] = fid
        fut: asyncio.Future[Any] = asyncio.get_running_loop().create_future()
        self._pending[fid] = (fut, convert)
        try:
            await self._ws.send(json.dumps(frame, separators=(",", ":")))
        except ConnectionClosed:
            self._pending.pop(fid, None)
            await asyncio.shield(self._reader)
            raise self.error or StreamClosed(None, "connection closed") from None
        return fut

    async def close(self) -> None:
        """Close with 1000 and wait for the reader; pending calls fail with StreamClosed."""
        self._closing = True
        await self._ws.close()
        await self._reader

    async def __aenter__(self) -> Any:
        return self

    async def __aexit__(self, *exc: object) -> None:
        await self.close()


class _AckGather:
    """Acks given in one turn of the event loop, to go out as one ack frame."""

    __slots__ = ("handles", "waiters")

    def __init__(self, handles: list[str] | None = None, waiter: tuple[asyncio.Future[Any], int] | None = None) -> None:
        self.handles: list[str] = handles or []
        self.waiters: list[tuple[asyncio.Future[Any], int]] = [waiter] if waiter else []  # (future, handles it gave)

    def answer(self, fut: asyncio.Future[Any]) -> None:
        """Hand each waiter the results of its own handles, or the frame's failure."""
        err = StreamClosed(None, "cancelled") if fut.cancelled() else fut.exception()
        off = 0
        for w, n in self.waiters:
            if not w.done():
                if err is not None:
                    w.set_exception(err)
                else:
                    w.set_result(fut.result()[off : off + n])
            off += n


class Consumer(_Stream):
    """An open consume stream: iterate (or ``await receive()``) for deliveries."""

    def __init__(self, ws: ClientConnection, opened: dict[str, Any], gather_acks: bool = True):
        self._queue: asyncio.Queue[dict[str, Any] | None] = asyncio.Queue()
        self.empty: str | None = None  # the last empty frame's reason since a delivery
        self.limits = {k: opened.get(k) for k in ("maxOutstandingMessages", "maxOutstandingBytes")}
        self._gather_acks = gather_acks
        self._gather: _AckGather | None = None  # the acks of this turn, not yet sent
        super().__init__(ws, opened)

    def _on_frame(self, f: dict[str, Any]) -> None:
        if f.get("type") == "messages":
            self.empty = None
            for m in f.get("messages") or []:
                self._queue.put_nowait(m)
        elif f.get("type") == "empty":
            self.empty = (f.get("empty") or {}).get("reason")

    def _on_end(self, err: Exception) -> None:
        self._queue.put_nowait(None)

    async def receive(self) -> dict[str, Any]:
        """The next delivery; once the stream has ended (after what was queued), its StreamClosed."""
        m = await self._queue.get()
        if m is None:
            self._queue.put_nowait(None)  # for the next caller
            raise self.error or StreamClosed(None, "")
        return m

    def __aiter__(self) -> AsyncIterator[dict[str, Any]]:
        return self

    async def __anext__(self) -> dict[str, Any]:
        try:
            return await self.receive()
        except StreamClosed:
            if self._closing:
                raise StopAsyncIteration from None
            raise

    async def _send(self, frame: dict[str, Any], convert: Callable[[dict[str, Any]], Any]) -> asyncio.Future[Any]:
        # Any other frame goes after the acks gathered before it: an ack
        # never passes a nack, extend or flow sent after it.
        await self._send_gathered()
        return await super()._send(frame, convert)

    async def _settle(self, frame: dict[str, Any]) -> list[dict[str, Any]]:
        fut = await self._send(frame, _results)
        return await fut

    async def ack(self, handles: list[str]) -> list[dict[str, Any]]:
        """Ack 1..100 handles; one result per handle, in order (status ok, expired or invalid).

        Acks given in the same turn of the event loop share one frame (see the module's doc)."""
        handles = list(handles)
        if not self._gather_acks or not 0 < len(handles) <= MAX_HANDLES:
            return await self._settle({"type": "ack", "receiptHandles": handles})
        if self.error is not None:
            raise self.error
        while self._gather is not None and len(self._gather.handles) + len(handles) > MAX_HANDLES:
            await self._send_gathered()  # full: it goes now, and these open the next
        fut: asyncio.Future[list[dict[str, Any]]] = asyncio.get_running_loop().create_future()
        g = self._gather
        if g is not None:
            g.handles.extend(handles)
            g.waiters.append((fut, len(handles)))
            return await fut
        # The opener lets the other tasks of this turn join, then sends the
        # frame, unless a full gather or another frame has sent it first.
        g = self._gather = _AckGather(handles, (fut, len(handles)))
        try:
            await asyncio.sleep(0)
        except asyncio.CancelledError:
            if self._gather is g:  # the others still get their answers
                asyncio.get_running_loop().create_task(self._send_gathered())
            raise
        if self._gather is g:
            await self._send_gathered()
        return await fut

    async def _send_gathered(self) -> None:
        """Send the acks gathered so far, if any, as one frame."""
        g, self._gather = self._gather, None
        if g is not None:
            await self._send_acks(g)

    async def _send_acks(self, g: _AckGather) -> None:
        try:
            fut = await super()._send({"type": "ack", "receiptHandles": g.handles}, _results)
        except Exception as e:  # noqa: BLE001 - every waiter of the frame fails with it
            for w, _ in g.waiters:
                if not w.done():
                    w.set_exception(e)
            return
        fut.add_done_callback(lambda f: self._acks_answered(g, f))

    def _acks_answered(self, g: _AckGather, f: asyncio.Future[Any]) -> None:
        # A gathered frame refused whole (a 4xx: one caller's handle is
        # malformed) is that caller's fault, not the others': each caller's
        # handles are sent again in a frame of their own, for its own answer.
        e = None if f.cancelled() else f.exception()
        if len(g.waiters) > 1 and isinstance(e, ProblemError) and (e.status or 500) < 500:
            asyncio.get_running_loop().create_task(self._resend_apart(g))
        else:
            g.answer(f)

    async def _resend_apart(self, g: _AckGather) -> None:
        off = 0
        for w, n in g.waiters:
            await self._send_acks(_AckGather(g.handles[off : off + n], (w, n)))
            off += n

    async def nack(self, handles: list[str], delay_level: int | None = None, reason: str | None = None) -> list[dict[str, Any]]:
        """Nack 1..100 handles (delay_level 0: the engine decides, -1: dead-letter now)."""
        f: dict[str, Any] = {"type": "nack", "receiptHandles": list(handles)}
        if delay_level is not None:
            f["delayLevel"] = delay_level
        if reason is not None:
            f["reason"] = reason
        return await self._settle(f)

    async def extend(self, handles: list[str], invisible_seconds: int) -> list[dict[str, Any]]:
        """Extend 1..100 handles' leases to invisible_seconds from now."""
        return await self._settle({"type": "extend", "receiptHandles": list(handles), "invisibleSeconds": invisible_seconds})

    async def flow(self, max_outstanding_messages: int | None = None, max_outstanding_bytes: int | None = None) -> dict[str, Any]:
        """Change the flow limits (None keeps one); returns the limits now in force."""
        f: dict[str, Any] = {"type": "flow"}
        if max_outstanding_messages is not None:
            f["maxOutstandingMessages"] = max_outstanding_messages
        if max_outstanding_bytes is not None:
            f["maxOutstandingBytes"] = max_outstanding_bytes

        def limits(a: dict[str, Any]) -> dict[str, Any]:
            self.limits = {k: a.get(k) for k in ("maxOutstandingMessages", "maxOutstandingBytes")}
            return self.limits

        fut = await self._send(f, limits)
        return await fut


class Publisher(_Stream):
    """An open publish stream; publish() waits while the server's unconfirmed limits are reached."""

    def __init__(self, ws: ClientConnection, opened: dict[str, Any]):
        self._max_n = int(opened.get("maxUnconfirmedMessages") or 1000)
        self._max_b = int(opened.get("maxUnconfirmedBytes") or 16 << 20)
        self._n = 0
        self._b = 0
        self._changed = asyncio.Condition()
        super().__init__(ws, opened)

    def _on_end(self, err: Exception) -> None:
        asyncio.get_running_loop().create_task(self._notify())

    async def _notify(self) -> None:
        async with self._changed:
            self._changed.notify_all()

    async def _publish(self, frame: dict[str, Any], n: int) -> asyncio.Future[list[dict[str, Any]]]:
        size = len(json.dumps(frame, separators=(",", ":"))) + 16  # the id, roughly
        async with self._changed:
            await self._changed.wait_for(
                lambda: self.error is not None or self._n == 0 or (self._n + n <= self._max_n and self._b + size <= self._max_b)
            )
            if self.error is not None:
                raise self.error
            self._n += n
            self._b += size

        def release(fut: asyncio.Future[Any]) -> None:
            self._n -= n
            self._b -= size
            asyncio.get_running_loop().create_task(self._notify())

        try:
            fut = await self._send(frame, _results)
        except BaseException:
            release(None)  # type: ignore[arg-type]
            raise
        fut.add_done_callback(release)
        return fut

    async def publish(self, message: dict[str, Any]) -> asyncio.Future[list[dict[str, Any]]]:
        """Send one message (the REST publish fields, deduplicationId included); the future
        resolves to its confirm's results once it is durable, or raises ProblemError/StreamClosed."""
        return await self._publish({"type": "publish", "message": message}, 1)

    async def publish_batch(self, messages: list[dict[str, Any]]) -> asyncio.Future[list[dict[str, Any]]]:
        """Send an atomic batch (all or nothing, as the REST batch)."""
        return await self._publish({"type": "publish", "messages": list(messages)}, len(messages))

    async def publish_wait(self, message: dict[str, Any]) -> dict[str, Any]:
        """Publish one message and wait for its confirm: its result."""
        results = await (await self.publish(message))
        return results[0]


class _Opening:
    """consume()/publish(): await it for the stream, or use it with ``async with``."""

    def __init__(self, open_fn: Callable[[], Awaitable[Any]]):
        self._open_fn = open_fn
        self._stream: Any = None

    def __await__(self) -> Any:
        return self._open_fn().__await__()

    async def __aenter__(self) -> Any:
        self._stream = await self._open_fn()
        return self._stream

    async def __aexit__(self, *exc: object) -> None:
        await self._stream.close()


def consume(
    base_url: str,
    group: str,
    *,
    key: str | None = None,
    consumer_id: str | None = None,
    invisible_seconds: int | None = None,
    max_outstanding_messages: int | None = None,
    max_outstanding_bytes: int | None = None,
    open_timeout: float = 10,
    gather_acks: bool = True,
) -> Any:
    """Open a consume stream on group (``await consume(...)`` or ``async with consume(...) as c``).

    gather_acks=False sends each ack() call in a frame of its own."""
    q = {
        "consumerId": consumer_id,
        "invisibleSeconds": invisible_seconds,
        "maxOutstandingMessages": max_outstanding_messages,
        "maxOutstandingBytes": max_outstanding_bytes,
    }
    return _Opening(
        lambda: Consumer._dial(base_url, f"/v1/groups/{quote(group, safe='')}/stream", q, key, open_timeout, gather_acks=gather_acks)
    )


def publish(
    base_url: str,
    topic: str,
    *,
    key: str | None = None,
    max_unconfirmed_messages: int | None = None,
    max_unconfirmed_bytes: int | None = None,
    open_timeout: float = 10,
) -> Any:
    """Open a publish stream on topic (``await publish(...)`` or ``async with publish(...) as p``)."""
    q = {"maxUnconfirmedMessages": max_unconfirmed_messages, "maxUnconfirmedBytes": max_unconfirmed_bytes}
    return _Opening(lambda: Publisher._dial(base_url, f"/v1/topics/{quote(topic, safe='')}/stream", q, key, open_timeout))


def browser_key_subprotocol(key: str) -> str:
    """The subprotocol a browser offers for a key (``mqgate.key.<base64url, no padding>``)."""
    return "mqgate.key." + base64.urlsafe_b64encode(key.encode()).decode().rstrip("=")
