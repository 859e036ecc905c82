from __future__ import annotations

from collections.abc import Mapping
from typing import Any, TypeVar, BinaryIO, TextIO, TYPE_CHECKING, Generator

from attrs import define as _attrs_define
from attrs import field as _attrs_field

from ..types import UNSET, Unset

from ..types import UNSET, Unset
from typing import cast
import datetime






T = TypeVar("T", bound="CorruptMessage")



@_attrs_define
class CorruptMessage:
    """ 
        Attributes:
            commit_log_offset (int): The record's position in the store's commit log. Example: 98211.
            detected_at (datetime.datetime): When a read first met it (RFC 3339, UTC, milliseconds). Example:
                2026-01-02T15:04:05.000Z.
            queue_id (int): The queue it was in (-1 when the record is too damaged
                to place; such records are counted under topic "" on /metrics
                instead). Example: 3.
            queue_offset (int): Its offset in that queue (-1 when it cannot be
                placed). Example: 1500.
            reason (str): Says what is wrong with the record. Example: corrupt record: checksum mismatch.
            topic (str): The message was published to. Example: orders.
            message_id (str | Unset): The message's id when it could still be read and the
                id index confirms it; absent otherwise. Example: 0a1b2c3d4e5f60718293a4b5c6.
     """

    commit_log_offset: int
    detected_at: datetime.datetime
    queue_id: int
    queue_offset: int
    reason: str
    topic: str
    message_id: str | Unset = UNSET
    additional_properties: dict[str, Any] = _attrs_field(init=False, factory=dict)





    def to_dict(self) -> dict[str, Any]:
        commit_log_offset = self.commit_log_offset

        detected_at = self.detected_at.isoformat()

        queue_id = self.queue_id

        queue_offset = self.queue_offset

        reason = self.reason

        topic = self.topic

        message_id = self.message_id


        field_dict: dict[str, Any] = {}
        field_dict.update(self.additional_properties)
        field_dict.update({
            "commitLogOffset": commit_log_offset,
            "detectedAt": detected_at,
            "queueId": queue_id,
            "queueOffset": queue_offset,
            "reason": reason,
            "topic": topic,
        })
        if message_id is not UNSET:
            field_dict["messageId"] = message_id

        return field_dict



    @classmethod
    def from_dict(cls: type[T], src_dict: Mapping[str, Any]) -> T:
        d = dict(src_dict)
        commit_log_offset = d.pop("commitLogOffset")

        detected_at = datetime.datetime.fromisoformat(d.pop("detectedAt"))




        queue_id = d.pop("queueId")

        queue_offset = d.pop("queueOffset")

        reason = d.pop("reason")

        topic = d.pop("topic")

        message_id = d.pop("messageId", UNSET)

        corrupt_message = cls(
            commit_log_offset=commit_log_offset,
            detected_at=detected_at,
            queue_id=queue_id,
            queue_offset=queue_offset,
            reason=reason,
            topic=topic,
            message_id=message_id,
        )


        corrupt_message.additional_properties = d
        return corrupt_message

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
