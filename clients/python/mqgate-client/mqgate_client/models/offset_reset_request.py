from __future__ import annotations

from collections.abc import Mapping
from typing import Any, TypeVar, BinaryIO, TextIO, TYPE_CHECKING, Generator

from attrs import define as _attrs_define
from attrs import field as _attrs_field

from ..types import UNSET, Unset

from ..models.offset_reset_request_position import OffsetResetRequestPosition
from ..types import UNSET, Unset
from typing import cast
import datetime






T = TypeVar("T", bound="OffsetResetRequest")



@_attrs_define
class OffsetResetRequest:
    """ 
        Attributes:
            position (OffsetResetRequestPosition): LAST_OFFSET, FIRST_OFFSET or TIMESTAMP. Example: TIMESTAMP.
            topic (str): A subscribed topic (or the group's retry topic). Example: orders.
            consumer_id (str | Unset): Names the consumer of a BROADCASTING group. Example: c1.
            timestamp (datetime.datetime | Unset): Required with TIMESTAMP.
     """

    position: OffsetResetRequestPosition
    topic: str
    consumer_id: str | Unset = UNSET
    timestamp: datetime.datetime | Unset = UNSET





    def to_dict(self) -> dict[str, Any]:
        position = self.position.value

        topic = self.topic

        consumer_id = self.consumer_id

        timestamp: str | Unset = UNSET
        if not isinstance(self.timestamp, Unset):
            timestamp = self.timestamp.isoformat()


        field_dict: dict[str, Any] = {}

        field_dict.update({
            "position": position,
            "topic": topic,
        })
        if consumer_id is not UNSET:
            field_dict["consumerId"] = consumer_id
        if timestamp is not UNSET:
            field_dict["timestamp"] = timestamp

        return field_dict



    @classmethod
    def from_dict(cls: type[T], src_dict: Mapping[str, Any]) -> T:
        d = dict(src_dict)
        position = OffsetResetRequestPosition(d.pop("position"))




        topic = d.pop("topic")

        consumer_id = d.pop("consumerId", UNSET)

        _timestamp = d.pop("timestamp", UNSET)
        timestamp: datetime.datetime | Unset
        if isinstance(_timestamp,  Unset):
            timestamp = UNSET
        else:
            timestamp = datetime.datetime.fromisoformat(_timestamp)




        offset_reset_request = cls(
            position=position,
            topic=topic,
            consumer_id=consumer_id,
            timestamp=timestamp,
        )

        return offset_reset_request

