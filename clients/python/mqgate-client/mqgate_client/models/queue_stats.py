from __future__ import annotations

from collections.abc import Mapping
from typing import Any, TypeVar, BinaryIO, TextIO, TYPE_CHECKING, Generator

from attrs import define as _attrs_define
from attrs import field as _attrs_field

from ..types import UNSET, Unset







T = TypeVar("T", bound="QueueStats")



@_attrs_define
class QueueStats:
    """ 
        Attributes:
            max_offset (int): The offset the next message will get. Example: 150.
            min_offset (int): The offset of the oldest message still kept. Example: 0.
            queue_id (int): The queue's index, 0..queues-1. Example: 0.
     """

    max_offset: int
    min_offset: int
    queue_id: int
    additional_properties: dict[str, Any] = _attrs_field(init=False, factory=dict)





    def to_dict(self) -> dict[str, Any]:
        max_offset = self.max_offset

        min_offset = self.min_offset

        queue_id = self.queue_id


        field_dict: dict[str, Any] = {}
        field_dict.update(self.additional_properties)
        field_dict.update({
            "maxOffset": max_offset,
            "minOffset": min_offset,
            "queueId": queue_id,
        })

        return field_dict



    @classmethod
    def from_dict(cls: type[T], src_dict: Mapping[str, Any]) -> T:
        d = dict(src_dict)
        max_offset = d.pop("maxOffset")

        min_offset = d.pop("minOffset")

        queue_id = d.pop("queueId")

        queue_stats = cls(
            max_offset=max_offset,
            min_offset=min_offset,
            queue_id=queue_id,
        )


        queue_stats.additional_properties = d
        return queue_stats

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
