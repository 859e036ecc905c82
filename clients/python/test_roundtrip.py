"""Live round trip of the generated Python SDK (mqgate_client) against a
real mqgate: `make sdk-python-test` starts bin/mqgate on 127.0.0.1 with a
fresh data directory (clients/with-server.sh) and sets MQGATE_URL.

The tests run in file order and share one topic and one group: each step
uses what the previous one left. If the document and the server disagree
on a path, a field or a status, the typed answers come back as None or as
the wrong model and the step fails.
"""

import base64
import os
import time

import pytest

from mqgate_client import AuthenticatedClient
from mqgate_client.api.consuming import ack_messages, extend_leases, nack_messages, receive_messages
from mqgate_client.api.dead_letters import list_dead_letters, redrive_dead_letters
from mqgate_client.api.groups import get_group_offsets, put_group
from mqgate_client.api.messages import publish_batch, publish_message
from mqgate_client.api.topics import put_topic
from mqgate_client.models import (
    AckRequest,
    ConsumeFrom,
    ConsumeFromPosition,
    ExtendRequest,
    GroupRequest,
    HandleResultStatus,
    NackRequest,
    Problem,
    PublishBatchRequest,
    PublishMessageRequest,
    PublishRequest,
    ReceiveRequest,
    RedriveRequest,
    SubscriptionBody,
    TopicRequest,
)
from mqgate_client.types import UNSET

TOPIC = "sdk-orders"
GROUP = "sdk-billing"
BIN = b"\x00\x01\x02\xff"  # bodyBase64 (format byte) is a base64 str in the SDK
DEADLINE = 15.0  # seconds, for every poll below

state: dict = {}


@pytest.fixture(scope="module")
def client():
    url = os.environ.get("MQGATE_URL")
    if not url:
        pytest.fail("MQGATE_URL is not set (run through clients/with-server.sh)")
    # The operations are typed for AuthenticatedClient (the document's
    # optional bearer auth); a server without --api-keys ignores the token.
    with AuthenticatedClient(base_url=url, token="unused", timeout=60.0, raise_on_unexpected_status=True) as c:
        yield c


def receive_until(client, want, wait_seconds=2):
    """Receives until `want` messages arrived or DEADLINE passed."""
    got = []
    end = time.monotonic() + DEADLINE
    while len(got) < want and time.monotonic() < end:
        r = receive_messages.sync_detailed(
            GROUP, client=client, body=ReceiveRequest(max_messages=10, wait_seconds=wait_seconds)
        )
        assert r.status_code == 200, r.content
        got.extend(r.parsed.messages)
    return got


def test_create_topic(client):
    r = put_topic.sync_detailed(TOPIC, client=client, body=TopicRequest(queues=4))
    assert r.status_code == 201, r.content
    assert r.parsed.name == TOPIC and r.parsed.queues == 4


def test_publish_single(client):
    r = publish_message.sync_detailed(
        TOPIC,
        client=client,
        body=PublishMessageRequest(body="order 17 created", tags="created", keys=["order-17"], sharding_key="customer-9"),
    )
    assert r.status_code == 201, r.content
    assert r.parsed.topic == TOPIC and r.parsed.message_id
    state["ids"] = {r.parsed.message_id}


def test_publish_batch(client):
    msgs = [PublishRequest(body=f"batch {i}", keys=["batch-1"]) for i in range(2)]
    msgs.append(PublishRequest(body_base_64=base64.b64encode(BIN).decode(), tags="binary"))
    r = publish_batch.sync_detailed(TOPIC, client=client, body=PublishBatchRequest(messages=msgs))
    assert r.status_code == 201, r.content
    assert len(r.parsed.results) == 3 and all(x.message_id for x in r.parsed.results)
    state["ids"] |= {x.message_id for x in r.parsed.results}


def test_create_group_first_offset(client):
    r = put_group.sync_detailed(
        GROUP,
        client=client,
        body=GroupRequest(
            subscriptions=[SubscriptionBody(topic=TOPIC)],
            consume_from=ConsumeFrom(position=ConsumeFromPosition.FIRST_OFFSET),
            invisible_seconds=30,
        ),
    )
    assert r.status_code == 201, r.content
    assert r.parsed.name == GROUP and r.parsed.invisible_seconds == 30


def test_receive(client):
    got = receive_until(client, 4)
    assert {m.message_id for m in got} == state["ids"]
    for m in got:
        assert m.topic == TOPIC and m.receipt_handle and m.reconsume_times == 0
        if m.tags == "binary":
            assert m.body is UNSET and base64.b64decode(m.body_base_64) == BIN
        if m.tags == "created":
            assert m.body == "order 17 created" and m.keys == ["order-17"] and m.sharding_key == "customer-9"
    state["received"] = got


def test_ack(client):
    handles = [m.receipt_handle for m in state["received"][:2]]
    r = ack_messages.sync_detailed(GROUP, client=client, body=AckRequest(receipt_handles=handles))
    assert r.status_code == 200, r.content
    assert [x.status for x in r.parsed.results] == [HandleResultStatus.OK] * 2


def test_extend(client):
    m = state["received"][2]
    r = extend_leases.sync_detailed(
        GROUP, client=client, body=ExtendRequest(receipt_handles=[m.receipt_handle], invisible_seconds=600)
    )
    assert r.status_code == 200, r.content
    res = r.parsed.results[0]
    assert res.status == HandleResultStatus.OK
    assert res.invisible_until.timestamp() - time.time() > 590
    r = ack_messages.sync_detailed(GROUP, client=client, body=AckRequest(receipt_handles=[m.receipt_handle]))
    assert r.status_code == 200 and r.parsed.results[0].status == HandleResultStatus.OK, r.content


def test_nack_to_dlq(client):
    m = state["received"][3]
    r = nack_messages.sync_detailed(
        GROUP,
        client=client,
        body=NackRequest(receipt_handles=[m.receipt_handle], delay_level=-1, reason="sdk test"),
    )
    assert r.status_code == 200, r.content
    assert r.parsed.results[0].status == HandleResultStatus.OK
    state["dead"] = m.message_id


def test_offsets(client):
    end = time.monotonic() + DEADLINE
    while True:  # acks reach the committed offset within a second
        r = get_group_offsets.sync_detailed(GROUP, client=client)
        assert r.status_code == 200, r.content
        mine = [o for o in r.parsed.offsets if o.topic == TOPIC]
        total = sum(o.max_offset for o in mine)
        done = all(o.lag == 0 and o.in_flight == 0 and o.committed_offset == o.max_offset for o in mine)
        if total == 4 and done:
            break
        assert time.monotonic() < end, f"offsets not settled: {r.content!r}"
        time.sleep(0.1)


def test_list_dlq(client):
    end = time.monotonic() + DEADLINE
    while True:
        r = list_dead_letters.sync_detailed(GROUP, client=client, limit=10)
        assert r.status_code == 200, r.content
        if r.parsed.messages:
            break
        assert time.monotonic() < end, "the nacked message did not reach the DLQ"
        time.sleep(0.1)
    [dl] = r.parsed.messages
    assert dl.message_id == state["dead"] and dl.last_reason == "sdk test"


def test_redrive(client):
    r = redrive_dead_letters.sync_detailed(GROUP, client=client, body=RedriveRequest(message_ids=[state["dead"]]))
    assert r.status_code == 200, r.content
    assert r.parsed.redriven == 1
    got = receive_until(client, 1)
    assert [m.message_id for m in got] == [state["dead"]]
    r = ack_messages.sync_detailed(GROUP, client=client, body=AckRequest(receipt_handles=[got[0].receipt_handle]))
    assert r.status_code == 200 and r.parsed.results[0].status == HandleResultStatus.OK, r.content


def test_problem_json_error(client):
    r = put_group.sync_detailed(
        "bad!name", client=client, body=GroupRequest(subscriptions=[SubscriptionBody(topic=TOPIC)])
    )
    assert r.status_code == 400
    assert r.headers["content-type"].startswith("application/problem+json")
    p = r.parsed
    assert isinstance(p, Problem), p
    assert p.type_ == "urn:mqgate:problem:invalid" and p.title == "Invalid request" and p.status == 400
    assert [e.field for e in p.errors] == ["group"]
