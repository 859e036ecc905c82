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
  from ..models.dead_letter_properties import DeadLetterProperties





T = TypeVar("T", bound="DeadLetter")



@_attrs_define
class DeadLetter:
    """ 
        Attributes:
            body (str | Unset): Body is the UTF-8 text body of a message published with `body`. Example: order 17 created.
            body_base_64 (str | Unset): BodyBase64 is the body (standard base64) of a message published with
                `bodyBase64`. Example: AAEC/w==.
            born_at (datetime.datetime | Unset): BornAt is when the gateway accepted the message. Example:
                2026-01-02T15:04:05.000Z.
            deliver_at (datetime.datetime | Unset): DeliverAt is when a delayed message becomes (or became) deliverable;
                absent for messages that were not delayed. Example: 2026-01-02T15:05:05.000Z.
            keys (list[str] | Unset): Keys are the message's lookup keys. Example: ['order-17'].
            last_reason (str | Unset): LastReason is why the last delivery failed: the nack's reason, the
                webhook's status or error, or a lease timeout; for a blocked head an
                operator skipped, "skipped by operator; last: " and the head's last
                reason. Absent when unknown. Example: payment service answered 503.
            message_id (str | Unset): MessageID is the id shown to users; it stays the same across retries. Example:
                0A1B2C3D4E5F60718293A4B5.
            properties (DeadLetterProperties | Unset): Properties are the user properties.
            queue_id (int | Unset): QueueID is the queue the message is in; absent while it is delayed. Example: 3.
            queue_offset (int | Unset): QueueOffset is the message's position in its queue; absent while it
                is delayed. Example: 42.
            reconsume_times (int | Unset): ReconsumeTimes counts earlier failed deliveries. Example: 0.
            sharding_key (str | Unset): ShardingKey chose the message's queue (same key, same queue). Example: customer-9.
            stored_at (datetime.datetime | Unset): StoredAt is when the transaction holding this copy committed. Example:
                2026-01-02T15:04:05.003Z.
            tags (str | Unset): Tags is the message's tag, matched by subscription filters. Example: created.
            topic (str | Unset): Topic is the topic the message was published to (also for retries). Example: orders.
     """

    body: str | Unset = UNSET
    body_base_64: str | Unset = UNSET
    born_at: datetime.datetime | Unset = UNSET
    deliver_at: datetime.datetime | Unset = UNSET
    keys: list[str] | Unset = UNSET
    last_reason: str | Unset = UNSET
    message_id: str | Unset = UNSET
    properties: DeadLetterProperties | Unset = UNSET
    queue_id: int | Unset = UNSET
    queue_offset: int | Unset = UNSET
    reconsume_times: int | Unset = UNSET
    sharding_key: str | Unset = UNSET
    stored_at: datetime.datetime | Unset = UNSET
    tags: str | Unset = UNSET
    topic: str | Unset = UNSET
    additional_properties: dict[str, Any] = _attrs_field(init=False, factory=dict)





    def to_dict(self) -> dict[str, Any]:
        from ..models.dead_letter_properties import DeadLetterProperties # noqa: PLC0415
        body = self.body

        body_base_64 = self.body_base_64

        born_at: str | Unset = UNSET
        if not isinstance(self.born_at, Unset):
            born_at = self.born_at.isoformat()

        deliver_at: str | Unset = UNSET
        if not isinstance(self.deliver_at, Unset):
            deliver_at = self.deliver_at.isoformat()

        keys: list[str] | Unset = UNSET
        if not isinstance(self.keys, Unset):
            keys = self.keys



        last_reason = self.last_reason

        message_id = self.message_id

        properties: dict[str, Any] | Unset = UNSET
        if not isinstance(self.properties, Unset):
            properties = self.properties.to_dict()

        queue_id = self.queue_id

        queue_offset = self.queue_offset

        reconsume_times = self.reconsume_times

        sharding_key = self.sharding_key

        stored_at: str | Unset = UNSET
        if not isinstance(self.stored_at, Unset):
            stored_at = self.stored_at.isoformat()

        tags = self.tags

        topic = self.topic


        field_dict: dict[str, Any] = {}
        field_dict.update(self.additional_properties)
        field_dict.update({
        })
        if body is not UNSET:
            field_dict["body"] = body
        if body_base_64 is not UNSET:
            field_dict["bodyBase64"] = body_base_64
        if born_at is not UNSET:
            field_dict["bornAt"] = born_at
        if deliver_at is not UNSET:
            field_dict["deliverAt"] = deliver_at
        if keys is not UNSET:
            field_dict["keys"] = keys
        if last_reason is not UNSET:
            field_dict["lastReason"] = last_reason
        if message_id is not UNSET:
            field_dict["messageId"] = message_id
        if properties is not UNSET:
            field_dict["properties"] = properties
        if queue_id is not UNSET:
            field_dict["queueId"] = queue_id
        if queue_offset is not UNSET:
            field_dict["queueOffset"] = queue_offset
        if reconsume_times is not UNSET:
            field_dict["reconsumeTimes"] = reconsume_times
        if sharding_key is not UNSET:
            field_dict["shardingKey"] = sharding_key
        if stored_at is not UNSET:
            field_dict["storedAt"] = stored_at
        if tags is not UNSET:
            field_dict["tags"] = tags
        if topic is not UNSET:
            field_dict["topic"] = topic

        return field_dict



    @classmethod
    def from_dict(cls: type[T], src_dict: Mapping[str, Any]) -> T:
        from ..models.dead_letter_properties import DeadLetterProperties # noqa: PLC0415
        d = dict(src_dict)
        body = d.pop("body", UNSET)

        body_base_64 = d.pop("bodyBase64", UNSET)

        _born_at = d.pop("bornAt", UNSET)
        born_at: datetime.datetime | Unset
        if isinstance(_born_at,  Unset):
            born_at = UNSET
        else:
            born_at = datetime.datetime.fromisoformat(_born_at)




        _deliver_at = d.pop("deliverAt", UNSET)
        deliver_at: datetime.datetime | Unset
        if isinstance(_deliver_at,  Unset):
            deliver_at = UNSET
        else:
            deliver_at = datetime.datetime.fromisoformat(_deliver_at)




        keys = cast(list[str], d.pop("keys", UNSET))


        last_reason = d.pop("lastReason", UNSET)

        message_id = d.pop("messageId", UNSET)

        _properties = d.pop("properties", UNSET)
        properties: DeadLetterProperties | Unset
        if isinstance(_properties,  Unset):
            properties = UNSET
        else:
            properties = DeadLetterProperties.from_dict(_properties)




        queue_id = d.pop("queueId", UNSET)

        queue_offset = d.pop("queueOffset", UNSET)

        reconsume_times = d.pop("reconsumeTimes", UNSET)

        sharding_key = d.pop("shardingKey", UNSET)

        _stored_at = d.pop("storedAt", UNSET)
        stored_at: datetime.datetime | Unset
        if isinstance(_stored_at,  Unset):
            stored_at = UNSET
        else:
            stored_at = datetime.datetime.fromisoformat(_stored_at)




        tags = d.pop("tags", UNSET)

        topic = d.pop("topic", UNSET)

        dead_letter = cls(
            body=body,
            body_base_64=body_base_64,
            born_at=born_at,
            deliver_at=deliver_at,
            keys=keys,
            last_reason=last_reason,
            message_id=message_id,
            properties=properties,
            queue_id=queue_id,
            queue_offset=queue_offset,
            reconsume_times=reconsume_times,
            sharding_key=sharding_key,
            stored_at=stored_at,
            tags=tags,
            topic=topic,
        )


        dead_letter.additional_properties = d
        return dead_letter

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
