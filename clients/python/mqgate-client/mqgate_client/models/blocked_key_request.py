from __future__ import annotations

from collections.abc import Mapping
from typing import Any, TypeVar, BinaryIO, TextIO, TYPE_CHECKING, Generator

from attrs import define as _attrs_define
from attrs import field as _attrs_field

from ..types import UNSET, Unset

from ..types import UNSET, Unset






T = TypeVar("T", bound="BlockedKeyRequest")



@_attrs_define
class BlockedKeyRequest:
    """ 
        Attributes:
            topic (str): The queue's topic: a subscribed topic or the group's
                %RETRY% topic. Example: orders.
            consumer_id (str | Unset): Names the consumer of a BROADCASTING group, whose queues
                are its own (required there; ignored for CLUSTERING). Only skip
                applies to BROADCASTING: park and resume answer 409. Example: c1.
            queue_id (int | Unset): The queue's id (default 0). Example: 0.
            sharding_key (str | Unset):  Example: customer-9.
     """

    topic: str
    consumer_id: str | Unset = UNSET
    queue_id: int | Unset = UNSET
    sharding_key: str | Unset = UNSET





    def to_dict(self) -> dict[str, Any]:
        topic = self.topic

        consumer_id = self.consumer_id

        queue_id = self.queue_id

        sharding_key = self.sharding_key


        field_dict: dict[str, Any] = {}

        field_dict.update({
            "topic": topic,
        })
        if consumer_id is not UNSET:
            field_dict["consumerId"] = consumer_id
        if queue_id is not UNSET:
            field_dict["queueId"] = queue_id
        if sharding_key is not UNSET:
            field_dict["shardingKey"] = sharding_key

        return field_dict



    @classmethod
    def from_dict(cls: type[T], src_dict: Mapping[str, Any]) -> T:
        d = dict(src_dict)
        topic = d.pop("topic")

        consumer_id = d.pop("consumerId", UNSET)

        queue_id = d.pop("queueId", UNSET)

        sharding_key = d.pop("shardingKey", UNSET)

        blocked_key_request = cls(
            topic=topic,
            consumer_id=consumer_id,
            queue_id=queue_id,
            sharding_key=sharding_key,
        )

        return blocked_key_request

