from __future__ import annotations

from collections.abc import Mapping
from typing import Any, TypeVar, BinaryIO, TextIO, TYPE_CHECKING, Generator

from attrs import define as _attrs_define
from attrs import field as _attrs_field

from ..types import UNSET, Unset

from ..types import UNSET, Unset






T = TypeVar("T", bound="TopicRequest")



@_attrs_define
class TopicRequest:
    """ 
        Attributes:
            queues (int | Unset): The number of queues (read = write queue count). It may
                grow, never shrink. Default 8. Example: 8.
            retention_hours (int | Unset): How long messages are kept (RocketMQ
                fileReservedTime). Default 72. Example: 72.
     """

    queues: int | Unset = UNSET
    retention_hours: int | Unset = UNSET





    def to_dict(self) -> dict[str, Any]:
        queues = self.queues

        retention_hours = self.retention_hours


        field_dict: dict[str, Any] = {}

        field_dict.update({
        })
        if queues is not UNSET:
            field_dict["queues"] = queues
        if retention_hours is not UNSET:
            field_dict["retentionHours"] = retention_hours

        return field_dict



    @classmethod
    def from_dict(cls: type[T], src_dict: Mapping[str, Any]) -> T:
        d = dict(src_dict)
        queues = d.pop("queues", UNSET)

        retention_hours = d.pop("retentionHours", UNSET)

        topic_request = cls(
            queues=queues,
            retention_hours=retention_hours,
        )

        return topic_request

