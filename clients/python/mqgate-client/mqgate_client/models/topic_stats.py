from __future__ import annotations

from collections.abc import Mapping
from typing import Any, TypeVar, BinaryIO, TextIO, TYPE_CHECKING, Generator

from attrs import define as _attrs_define
from attrs import field as _attrs_field

from ..types import UNSET, Unset

from typing import cast

if TYPE_CHECKING:
  from ..models.queue_stats import QueueStats





T = TypeVar("T", bound="TopicStats")



@_attrs_define
class TopicStats:
    """ 
        Attributes:
            bytes_ (int): Estimates the disk the topic's messages take in the store
                (their records, from a sample of each queue; indexes and free pages
                not included). /metrics has the file's figures. Example: 1258291.
            corrupt (int): Counts the stored messages set aside because they failed
                their checksum when read (part of messages, never delivered);
                GET /v1/topics/{topic}/corrupt lists them. Example: 0.
            messages (int): The number of messages kept, summed over queues. Example: 1200.
            queues (list[QueueStats]): Lists each queue's offset range [minOffset, maxOffset).
     """

    bytes_: int
    corrupt: int
    messages: int
    queues: list[QueueStats]
    additional_properties: dict[str, Any] = _attrs_field(init=False, factory=dict)





    def to_dict(self) -> dict[str, Any]:
        from ..models.queue_stats import QueueStats # noqa: PLC0415
        bytes_ = self.bytes_

        corrupt = self.corrupt

        messages = self.messages

        queues = []
        for queues_item_data in self.queues:
            queues_item = queues_item_data.to_dict()
            queues.append(queues_item)




        field_dict: dict[str, Any] = {}
        field_dict.update(self.additional_properties)
        field_dict.update({
            "bytes": bytes_,
            "corrupt": corrupt,
            "messages": messages,
            "queues": queues,
        })

        return field_dict



    @classmethod
    def from_dict(cls: type[T], src_dict: Mapping[str, Any]) -> T:
        from ..models.queue_stats import QueueStats # noqa: PLC0415
        d = dict(src_dict)
        bytes_ = d.pop("bytes")

        corrupt = d.pop("corrupt")

        messages = d.pop("messages")

        queues = []
        _queues = d.pop("queues")
        for queues_item_data in (_queues):
            queues_item = QueueStats.from_dict(queues_item_data)



            queues.append(queues_item)


        topic_stats = cls(
            bytes_=bytes_,
            corrupt=corrupt,
            messages=messages,
            queues=queues,
        )


        topic_stats.additional_properties = d
        return topic_stats

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
