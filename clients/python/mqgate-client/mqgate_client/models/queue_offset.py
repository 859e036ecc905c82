from __future__ import annotations

from collections.abc import Mapping
from typing import Any, TypeVar, BinaryIO, TextIO, TYPE_CHECKING, Generator

from attrs import define as _attrs_define
from attrs import field as _attrs_field

from ..types import UNSET, Unset







T = TypeVar("T", bound="QueueOffset")



@_attrs_define
class QueueOffset:
    """ 
        Attributes:
            buffered (int): Counts pulled messages not yet received. Example: 8.
            committed_offset (int): The next offset the group will consume. Example: 140.
            in_flight (int): Counts received, unanswered messages of the queue. Example: 2.
            lag (int): maxOffset - committedOffset. Example: 10.
            max_offset (int): The offset the next message will get. Example: 150.
            queue_id (int):  Example: 0.
            topic (str):  Example: orders.
     """

    buffered: int
    committed_offset: int
    in_flight: int
    lag: int
    max_offset: int
    queue_id: int
    topic: str
    additional_properties: dict[str, Any] = _attrs_field(init=False, factory=dict)





    def to_dict(self) -> dict[str, Any]:
        buffered = self.buffered

        committed_offset = self.committed_offset

        in_flight = self.in_flight

        lag = self.lag

        max_offset = self.max_offset

        queue_id = self.queue_id

        topic = self.topic


        field_dict: dict[str, Any] = {}
        field_dict.update(self.additional_properties)
        field_dict.update({
            "buffered": buffered,
            "committedOffset": committed_offset,
            "inFlight": in_flight,
            "lag": lag,
            "maxOffset": max_offset,
            "queueId": queue_id,
            "topic": topic,
        })

        return field_dict



    @classmethod
    def from_dict(cls: type[T], src_dict: Mapping[str, Any]) -> T:
        d = dict(src_dict)
        buffered = d.pop("buffered")

        committed_offset = d.pop("committedOffset")

        in_flight = d.pop("inFlight")

        lag = d.pop("lag")

        max_offset = d.pop("maxOffset")

        queue_id = d.pop("queueId")

        topic = d.pop("topic")

        queue_offset = cls(
            buffered=buffered,
            committed_offset=committed_offset,
            in_flight=in_flight,
            lag=lag,
            max_offset=max_offset,
            queue_id=queue_id,
            topic=topic,
        )


        queue_offset.additional_properties = d
        return queue_offset

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
