"""Live round trip of the Python stream helpers (mqgate_stream, on websockets)
against a real mqgate: `make sdk-python-test` runs it with pytest under
clients/with-server.sh, which starts bin/mqgate on 127.0.0.1 and sets
MQGATE_URL. The tests run in order and share one topic and group.
"""

import asyncio
import json
import os
import urllib.request

import pytest

from mqgate_stream import ProblemError, StreamRefused, consume, publish

URL = os.environ["MQGATE_URL"]
TOPIC = "py-stream"
GROUP = "py-stream-g"
N = 12


def rest(method: str, path: str, body: dict) -> dict:
    req = urllib.request.Request(URL + path, method=method, data=json.dumps(body).encode(),
                                 headers={"Content-Type": "application/json"})
    with urllib.request.urlopen(req, timeout=10) as r:
        return json.loads(r.read() or b"{}")


def run(coro):
    return asyncio.run(asyncio.wait_for(coro, 30))


def test_publish_with_confirms_and_a_problem_frame():
    rest("PUT", f"/v1/topics/{TOPIC}", {"queues": 2})
    rest("PUT", f"/v1/groups/{GROUP}", {"subscriptions": [{"topic": TOPIC}], "consumeFrom": {"position": "FIRST_OFFSET"}})

    async def go():
        async with publish(URL, TOPIC, max_unconfirmed_messages=4) as p:
            assert p.open["maxUnconfirmedMessages"] == 4
            # N publishes in flight through a window of 4, confirms matched by id.
            futs = [await p.publish({"body": f"m-{i}", "deduplicationId": f"py-{i}"}) for i in range(N)]
            results = [(await f)[0] for f in futs]
            ids = [r["messageId"] for r in results]
            assert len(set(ids)) == N and all(r["topic"] == TOPIC for r in results)
            again = await p.publish_wait({"body": "m-3", "deduplicationId": "py-3"})
            assert again["messageId"] == ids[3] and again.get("replayed") is True
            with pytest.raises(ProblemError) as e:
                await p.publish_wait({"body": ""})
            assert e.value.status == 400
            # The stream goes on after the error frame.
            batch = await (await p.publish_batch([{"body": "b-1"}, {"body": "b-2"}]))
            assert len(batch) == 2

    run(go())


def test_consume_ack_nack_extend_flow():
    async def go():
        async with consume(URL, GROUP, max_outstanding_messages=3, invisible_seconds=30) as c:
            assert c.limits["maxOutstandingMessages"] == 3
            got = [await c.receive() for _ in range(3)]
            # No fourth while three are outstanding.
            with pytest.raises(asyncio.TimeoutError):
                await asyncio.wait_for(c.receive(), 0.5)
            assert [r["status"] for r in await c.ack([got[0]["receiptHandle"]])] == ["ok"]
            assert (await c.nack([got[1]["receiptHandle"]], delay_level=1, reason="py later"))[0]["status"] == "ok"
            ext = await c.extend([got[2]["receiptHandle"]], 120)
            assert ext[0]["status"] == "ok" and ext[0]["invisibleUntil"]
            assert (await c.ack(["forged"]))[0]["status"] == "invalid"
            limits = await c.flow(max_outstanding_messages=50)
            assert limits["maxOutstandingMessages"] == 50
            # N + 2 stored, 1 acked, 1 extended, the nacked one back after 1 s.
            seen = set()
            while len(seen) < N + 2 - 2:
                m = await c.receive()
                seen.add(m["messageId"])
                await c.ack([m["receiptHandle"]])
            assert got[1]["messageId"] in seen and got[2]["messageId"] not in seen

    run(go())


def frames_in() -> float:
    """The consume frames the server has read (mqgate_stream_frames_total)."""
    with urllib.request.urlopen(URL + "/metrics", timeout=10) as r:
        for line in r.read().decode().splitlines():
            if line.startswith("mqgate_stream_frames_total{") and 'direction="in"' in line and 'kind="consume"' in line:
                return float(line.rsplit(" ", 1)[1])
    raise AssertionError("no mqgate_stream_frames_total for consume streams in /metrics")


def test_acks_of_one_turn_share_a_frame():
    topic, group = "py-gather", "py-gather-g"
    rest("PUT", f"/v1/topics/{topic}", {"queues": 2})
    rest("PUT", f"/v1/groups/{group}", {"subscriptions": [{"topic": topic}], "consumeFrom": {"position": "FIRST_OFFSET"}})
    rest("POST", f"/v1/topics/{topic}/messages/batch", {"messages": [{"body": f"g-{i}"} for i in range(16)]})

    async def go():
        async with consume(URL, group, max_outstanding_messages=100, invisible_seconds=60) as c:
            got = [await c.receive() for _ in range(16)]
            hs = [m["receiptHandle"] for m in got]
            # Ten tasks ack one handle each in the same turn: one frame, and
            # each task gets its own handle's result.
            before = frames_in()
            res = await asyncio.gather(*(c.ack([h]) for h in hs[:10]))
            assert frames_in() - before == 1
            assert [r[0]["receiptHandle"] for r in res] == hs[:10] and all(r[0]["status"] == "ok" for r in res)
            # A handle over the length limit makes the server refuse the
            # whole frame (400): each caller's acks go again on their own,
            # so only that caller gets the problem.
            before = frames_in()
            good, bad, good2 = (asyncio.ensure_future(c.ack(hl)) for hl in ([hs[10]], ["x" * 1100], [hs[11], hs[12]]))
            assert [r["status"] for r in await good] == ["ok"]
            assert [r["status"] for r in await good2] == ["ok", "ok"]
            with pytest.raises(ProblemError) as e:
                await bad
            assert e.value.status == 400
            assert frames_in() - before == 4  # the gathered frame, then one per caller
            # A nack given after an ack in the same turn goes after it: the
            # ack of the handle is ok, and the nack finds it settled.
            acked, nacked = asyncio.ensure_future(c.ack([hs[13]])), asyncio.ensure_future(c.nack([hs[13]], delay_level=1))
            assert (await acked)[0]["status"] == "ok" and (await nacked)[0]["status"] != "ok"
        # The handles stay valid on another stream; without gathering each
        # call is a frame of its own.
        async with consume(URL, group, gather_acks=False) as c:
            before = frames_in()
            res = await asyncio.gather(c.ack([hs[14]]), c.ack([hs[15]]), c.ack(["forged"]))
            assert [r[0]["status"] for r in res] == ["ok", "ok", "invalid"]
            assert frames_in() - before == 3

    run(go())


def test_refused_upgrade_is_a_problem():
    async def go():
        with pytest.raises(StreamRefused) as e:
            await consume(URL, "no-such-group")
        assert e.value.status == 404 and e.value.problem["status"] == 404

    run(go())
