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
            commit_log_offset (int | Unset): CommitLogOffset is the record's position in the store's commit log. Example:
                98211.
            detected_at (datetime.datetime | Unset): DetectedAt is when a read first met it (RFC 3339, UTC, milliseconds).
                Example: 2026-01-02T15:04:05.000Z.
            message_id (str | Unset): MessageID is the message's id when it could still be read and the
                id index confirms it; absent otherwise. Example: 0a1b2c3d4e5f60718293a4b5c6.
            queue_id (int | Unset): QueueID and QueueOffset place it in the topic (-1 when the record is
                too damaged to place; such records are counted under topic "" on
                /metrics instead). Example: 3.
            queue_offset (int | Unset):  Example: 1500.
            reason (str | Unset): Reason says what is wrong with the record. Example: corrupt record: checksum mismatch.
            topic (str | Unset): Topic the message was published to. Example: orders.
     """

    commit_log_offset: int | Unset = UNSET
    detected_at: datetime.datetime | Unset = UNSET
    message_id: str | Unset = UNSET
    queue_id: int | Unset = UNSET
    queue_offset: int | Unset = UNSET
    reason: str | Unset = UNSET
    topic: str | Unset = UNSET
    additional_properties: dict[str, Any] = _attrs_field(init=False, factory=dict)





    def to_dict(self) -> dict[str, Any]:
        commit_log_offset = self.commit_log_offset

        detected_at: str | Unset = UNSET
        if not isinstance(self.detected_at, Unset):
            detected_at = self.detected_at.isoformat()

        message_id = self.message_id

        queue_id = self.queue_id

        queue_offset = self.queue_offset

        reason = self.reason

        topic = self.topic


        field_dict: dict[str, Any] = {}
        field_dict.update(self.additional_properties)
        field_dict.update({
        })
        if commit_log_offset is not UNSET:
            field_dict["commitLogOffset"] = commit_log_offset
        if detected_at is not UNSET:
            field_dict["detectedAt"] = detected_at
        if message_id is not UNSET:
            field_dict["messageId"] = message_id
        if queue_id is not UNSET:
            field_dict["queueId"] = queue_id
        if queue_offset is not UNSET:
            field_dict["queueOffset"] = queue_offset
        if reason is not UNSET:
            field_dict["reason"] = reason
        if topic is not UNSET:
            field_dict["topic"] = topic

        return field_dict



    @classmethod
    def from_dict(cls: type[T], src_dict: Mapping[str, Any]) -> T:
        d = dict(src_dict)
        commit_log_offset = d.pop("commitLogOffset", UNSET)

        _detected_at = d.pop("detectedAt", UNSET)
        detected_at: datetime.datetime | Unset
        if isinstance(_detected_at,  Unset):
            detected_at = UNSET
        else:
            detected_at = datetime.datetime.fromisoformat(_detected_at)




        message_id = d.pop("messageId", UNSET)

        queue_id = d.pop("queueId", UNSET)

        queue_offset = d.pop("queueOffset", UNSET)

        reason = d.pop("reason", UNSET)

        topic = d.pop("topic", UNSET)

        corrupt_message = cls(
            commit_log_offset=commit_log_offset,
            detected_at=detected_at,
            message_id=message_id,
            queue_id=queue_id,
            queue_offset=queue_offset,
            reason=reason,
            topic=topic,
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
