from __future__ import annotations

from collections.abc import Mapping
from typing import Any, TypeVar, BinaryIO, TextIO, TYPE_CHECKING, Generator

from attrs import define as _attrs_define
from attrs import field as _attrs_field

from ..types import UNSET, Unset

from ..types import UNSET, Unset
from typing import cast
import datetime






T = TypeVar("T", bound="PublishResult")



@_attrs_define
class PublishResult:
    """ 
        Attributes:
            message_id (str): The new message's id. Example: 0A1B2C3D4E5F60718293A4B5.
            topic (str): The message was published to. Example: orders.
            deliver_at (datetime.datetime | Unset): When a delayed message becomes deliverable; absent
                otherwise.
            queue_id (int | Unset): The queue it went to; absent for a delayed message. Example: 3.
            queue_offset (int | Unset): Its position in the queue; absent for a delayed message. Example: 42.
            replayed (bool | Unset): True when this is the original result of an earlier
                publish with the same Idempotency-Key (or deduplicationId): nothing
                new was stored.
     """

    message_id: str
    topic: str
    deliver_at: datetime.datetime | Unset = UNSET
    queue_id: int | Unset = UNSET
    queue_offset: int | Unset = UNSET
    replayed: bool | Unset = UNSET
    additional_properties: dict[str, Any] = _attrs_field(init=False, factory=dict)





    def to_dict(self) -> dict[str, Any]:
        message_id = self.message_id

        topic = self.topic

        deliver_at: str | Unset = UNSET
        if not isinstance(self.deliver_at, Unset):
            deliver_at = self.deliver_at.isoformat()

        queue_id = self.queue_id

        queue_offset = self.queue_offset

        replayed = self.replayed


        field_dict: dict[str, Any] = {}
        field_dict.update(self.additional_properties)
        field_dict.update({
            "messageId": message_id,
            "topic": topic,
        })
        if deliver_at is not UNSET:
            field_dict["deliverAt"] = deliver_at
        if queue_id is not UNSET:
            field_dict["queueId"] = queue_id
        if queue_offset is not UNSET:
            field_dict["queueOffset"] = queue_offset
        if replayed is not UNSET:
            field_dict["replayed"] = replayed

        return field_dict



    @classmethod
    def from_dict(cls: type[T], src_dict: Mapping[str, Any]) -> T:
        d = dict(src_dict)
        message_id = d.pop("messageId")

        topic = d.pop("topic")

        _deliver_at = d.pop("deliverAt", UNSET)
        deliver_at: datetime.datetime | Unset
        if isinstance(_deliver_at,  Unset):
            deliver_at = UNSET
        else:
            deliver_at = datetime.datetime.fromisoformat(_deliver_at)




        queue_id = d.pop("queueId", UNSET)

        queue_offset = d.pop("queueOffset", UNSET)

        replayed = d.pop("replayed", UNSET)

        publish_result = cls(
            message_id=message_id,
            topic=topic,
            deliver_at=deliver_at,
            queue_id=queue_id,
            queue_offset=queue_offset,
            replayed=replayed,
        )


        publish_result.additional_properties = d
        return publish_result

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
