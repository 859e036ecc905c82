from __future__ import annotations

from collections.abc import Mapping
from typing import Any, TypeVar, BinaryIO, TextIO, TYPE_CHECKING, Generator

from attrs import define as _attrs_define
from attrs import field as _attrs_field

from ..types import UNSET, Unset

from ..types import UNSET, Unset
from typing import cast
import datetime

if TYPE_CHECKING:
  from ..models.received_message_properties import ReceivedMessageProperties





T = TypeVar("T", bound="ReceivedMessage")



@_attrs_define
class ReceivedMessage:
    """ 
        Attributes:
            born_at (datetime.datetime): When the gateway accepted the message. Example: 2026-01-02T15:04:05.000Z.
            invisible_until (datetime.datetime): When the lease ends and the message is delivered again. Example:
                2026-01-02T15:05:05.000Z.
            message_id (str): The id shown to users; it stays the same across retries. Example: 0A1B2C3D4E5F60718293A4B5.
            receipt_handle (str): Names this delivery in ack, nack and extend. Example:
                AZemsOuwrq34JQIAAZCmv9bGGwFnAAF0ZBtQzDHbp7GA_jNe6UIrYg.
            reconsume_times (int): Counts earlier failed deliveries. Example: 0.
            stored_at (datetime.datetime): When the transaction holding this copy committed. Example:
                2026-01-02T15:04:05.003Z.
            topic (str): The topic the message was published to (also for retries). Example: orders.
            body (str | Unset): The UTF-8 text body of a message published with `body`. Example: order 17 created.
            body_base_64 (str | Unset): The body (standard base64) of a message published with
                `bodyBase64`. Example: AAEC/w==.
            deliver_at (datetime.datetime | Unset): When a delayed message becomes (or became) deliverable;
                absent for messages that were not delayed. Example: 2026-01-02T15:05:05.000Z.
            keys (list[str] | Unset): The message's lookup keys. Example: ['order-17'].
            properties (ReceivedMessageProperties | Unset): The user properties.
            queue_id (int | Unset): The queue the message is in; absent while it is delayed. Example: 3.
            queue_offset (int | Unset): The message's position in its queue; absent while it
                is delayed. Example: 42.
            sharding_key (str | Unset): Chose the message's queue (same key, same queue). Example: customer-9.
            tags (str | Unset): The message's tag, matched by subscription filters. Example: created.
            traceparent (str | Unset): The W3C traceparent of the message's creation: the
                one it was published with or, when the server traces, that of its
                publish span. It stays the same across retries and dead-lettering;
                a consumer links its processing span to it. Absent when the message
                has none. Example: 00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01.
            tracestate (str | Unset): The W3C tracestate that came with traceparent. Example: vendor=value.
     """

    born_at: datetime.datetime
    invisible_until: datetime.datetime
    message_id: str
    receipt_handle: str
    reconsume_times: int
    stored_at: datetime.datetime
    topic: str
    body: str | Unset = UNSET
    body_base_64: str | Unset = UNSET
    deliver_at: datetime.datetime | Unset = UNSET
    keys: list[str] | Unset = UNSET
    properties: ReceivedMessageProperties | Unset = UNSET
    queue_id: int | Unset = UNSET
    queue_offset: int | Unset = UNSET
    sharding_key: str | Unset = UNSET
    tags: str | Unset = UNSET
    traceparent: str | Unset = UNSET
    tracestate: str | Unset = UNSET
    additional_properties: dict[str, Any] = _attrs_field(init=False, factory=dict)





    def to_dict(self) -> dict[str, Any]:
        from ..models.received_message_properties import ReceivedMessageProperties # noqa: PLC0415
        born_at = self.born_at.isoformat()

        invisible_until = self.invisible_until.isoformat()

        message_id = self.message_id

        receipt_handle = self.receipt_handle

        reconsume_times = self.reconsume_times

        stored_at = self.stored_at.isoformat()

        topic = self.topic

        body = self.body

        body_base_64 = self.body_base_64

        deliver_at: str | Unset = UNSET
        if not isinstance(self.deliver_at, Unset):
            deliver_at = self.deliver_at.isoformat()

        keys: list[str] | Unset = UNSET
        if not isinstance(self.keys, Unset):
            keys = self.keys



        properties: dict[str, Any] | Unset = UNSET
        if not isinstance(self.properties, Unset):
            properties = self.properties.to_dict()

        queue_id = self.queue_id

        queue_offset = self.queue_offset

        sharding_key = self.sharding_key

        tags = self.tags

        traceparent = self.traceparent

        tracestate = self.tracestate


        field_dict: dict[str, Any] = {}
        field_dict.update(self.additional_properties)
        field_dict.update({
            "bornAt": born_at,
            "invisibleUntil": invisible_until,
            "messageId": message_id,
            "receiptHandle": receipt_handle,
            "reconsumeTimes": reconsume_times,
            "storedAt": stored_at,
            "topic": topic,
        })
        if body is not UNSET:
            field_dict["body"] = body
        if body_base_64 is not UNSET:
            field_dict["bodyBase64"] = body_base_64
        if deliver_at is not UNSET:
            field_dict["deliverAt"] = deliver_at
        if keys is not UNSET:
            field_dict["keys"] = keys
        if properties is not UNSET:
            field_dict["properties"] = properties
        if queue_id is not UNSET:
            field_dict["queueId"] = queue_id
        if queue_offset is not UNSET:
            field_dict["queueOffset"] = queue_offset
        if sharding_key is not UNSET:
            field_dict["shardingKey"] = sharding_key
        if tags is not UNSET:
            field_dict["tags"] = tags
        if traceparent is not UNSET:
            field_dict["traceparent"] = traceparent
        if tracestate is not UNSET:
            field_dict["tracestate"] = tracestate

        return field_dict



    @classmethod
    def from_dict(cls: type[T], src_dict: Mapping[str, Any]) -> T:
        from ..models.received_message_properties import ReceivedMessageProperties # noqa: PLC0415
        d = dict(src_dict)
        born_at = datetime.datetime.fromisoformat(d.pop("bornAt"))




        invisible_until = datetime.datetime.fromisoformat(d.pop("invisibleUntil"))




        message_id = d.pop("messageId")

        receipt_handle = d.pop("receiptHandle")

        reconsume_times = d.pop("reconsumeTimes")

        stored_at = datetime.datetime.fromisoformat(d.pop("storedAt"))




        topic = d.pop("topic")

        body = d.pop("body", UNSET)

        body_base_64 = d.pop("bodyBase64", UNSET)

        _deliver_at = d.pop("deliverAt", UNSET)
        deliver_at: datetime.datetime | Unset
        if isinstance(_deliver_at,  Unset):
            deliver_at = UNSET
        else:
            deliver_at = datetime.datetime.fromisoformat(_deliver_at)




        keys = cast(list[str], d.pop("keys", UNSET))


        _properties = d.pop("properties", UNSET)
        properties: ReceivedMessageProperties | Unset
        if isinstance(_properties,  Unset):
            properties = UNSET
        else:
            properties = ReceivedMessageProperties.from_dict(_properties)




        queue_id = d.pop("queueId", UNSET)

        queue_offset = d.pop("queueOffset", UNSET)

        sharding_key = d.pop("shardingKey", UNSET)

        tags = d.pop("tags", UNSET)

        traceparent = d.pop("traceparent", UNSET)

        tracestate = d.pop("tracestate", UNSET)

        received_message = cls(
            born_at=born_at,
            invisible_until=invisible_until,
            message_id=message_id,
            receipt_handle=receipt_handle,
            reconsume_times=reconsume_times,
            stored_at=stored_at,
            topic=topic,
            body=body,
            body_base_64=body_base_64,
            deliver_at=deliver_at,
            keys=keys,
            properties=properties,
            queue_id=queue_id,
            queue_offset=queue_offset,
            sharding_key=sharding_key,
            tags=tags,
            traceparent=traceparent,
            tracestate=tracestate,
        )


        received_message.additional_properties = d
        return received_message

    @property
    def additional_keys(self) -> list[str]:
        return list(self.additional_properties.keys())

    def __getitem__(self, key: str) -> Any:
        return self.additional_properties[key]

    def __setitem__(self, key: str, value: Any) -> None:
        self.additional_properties[key] = value

    def __delitem__(self, key: str) -> None:
        del self.additional_properties[key]

    def __contains__(self, key: str) -> bool:
        return key in self.additional_properties
