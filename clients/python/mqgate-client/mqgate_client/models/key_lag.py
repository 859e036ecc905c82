from __future__ import annotations

from collections.abc import Mapping
from typing import Any, TypeVar, BinaryIO, TextIO, TYPE_CHECKING, Generator

from attrs import define as _attrs_define
from attrs import field as _attrs_field

from ..types import UNSET, Unset

from typing import cast
import datetime






T = TypeVar("T", bound="KeyLag")



@_attrs_define
class KeyLag:
    """ 
        Attributes:
            depth (int): Counts the key's pulled, unfinished messages. Example: 12.
            oldest_age_seconds (int): How long ago the key's oldest unfinished message
                was born. Example: 95.
            oldest_born_at (datetime.datetime): That message's bornAt.
            oldest_message_id (str): That message's id.
            queue_id (int):  Example: 0.
            sharding_key (str):  Example: customer-9.
            topic (str):  Example: orders.
     """

    depth: int
    oldest_age_seconds: int
    oldest_born_at: datetime.datetime
    oldest_message_id: str
    queue_id: int
    sharding_key: str
    topic: str
    additional_properties: dict[str, Any] = _attrs_field(init=False, factory=dict)





    def to_dict(self) -> dict[str, Any]:
        depth = self.depth

        oldest_age_seconds = self.oldest_age_seconds

        oldest_born_at = self.oldest_born_at.isoformat()

        oldest_message_id = self.oldest_message_id

        queue_id = self.queue_id

        sharding_key = self.sharding_key

        topic = self.topic


        field_dict: dict[str, Any] = {}
        field_dict.update(self.additional_properties)
        field_dict.update({
            "depth": depth,
            "oldestAgeSeconds": oldest_age_seconds,
            "oldestBornAt": oldest_born_at,
            "oldestMessageId": oldest_message_id,
            "queueId": queue_id,
            "shardingKey": sharding_key,
            "topic": topic,
        })

        return field_dict



    @classmethod
    def from_dict(cls: type[T], src_dict: Mapping[str, Any]) -> T:
        d = dict(src_dict)
        depth = d.pop("depth")

        oldest_age_seconds = d.pop("oldestAgeSeconds")

        oldest_born_at = datetime.datetime.fromisoformat(d.pop("oldestBornAt"))




        oldest_message_id = d.pop("oldestMessageId")

        queue_id = d.pop("queueId")

        sharding_key = d.pop("shardingKey")

        topic = d.pop("topic")

        key_lag = cls(
            depth=depth,
            oldest_age_seconds=oldest_age_seconds,
            oldest_born_at=oldest_born_at,
            oldest_message_id=oldest_message_id,
            queue_id=queue_id,
            sharding_key=sharding_key,
            topic=topic,
        )


        key_lag.additional_properties = d
        return key_lag

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
