from __future__ import annotations

from collections.abc import Mapping
from typing import Any, TypeVar, BinaryIO, TextIO, TYPE_CHECKING, Generator

from attrs import define as _attrs_define
from attrs import field as _attrs_field

from ..types import UNSET, Unset

from ..types import UNSET, Unset






T = TypeVar("T", bound="TopicLimit")



@_attrs_define
class TopicLimit:
    """ 
        Attributes:
            topic (str): The pattern (as in pub grants). Example: orders-*.
            concurrent_receives (int | Unset): Caps the receive calls (long polls) in flight. Example: 8.
            deliveries_burst (int | Unset): The deliveries bucket's size. Example: 500.
            deliveries_per_second (float | Unset): Limits messages handed out by receive. Example: 500.
            publish_burst (int | Unset): The publish bucket's size. Example: 100.
            publish_bytes_burst (int | Unset): The bytes bucket's size. Example: 1048576.
            publish_bytes_per_second (float | Unset): Limits published body bytes. Example: 1048576.
            publish_per_second (float | Unset): Limits published messages (a batch counts each). Example: 100.
     """

    topic: str
    concurrent_receives: int | Unset = UNSET
    deliveries_burst: int | Unset = UNSET
    deliveries_per_second: float | Unset = UNSET
    publish_burst: int | Unset = UNSET
    publish_bytes_burst: int | Unset = UNSET
    publish_bytes_per_second: float | Unset = UNSET
    publish_per_second: float | Unset = UNSET
    additional_properties: dict[str, Any] = _attrs_field(init=False, factory=dict)





    def to_dict(self) -> dict[str, Any]:
        topic = self.topic

        concurrent_receives = self.concurrent_receives

        deliveries_burst = self.deliveries_burst

        deliveries_per_second = self.deliveries_per_second

        publish_burst = self.publish_burst

        publish_bytes_burst = self.publish_bytes_burst

        publish_bytes_per_second = self.publish_bytes_per_second

        publish_per_second = self.publish_per_second


        field_dict: dict[str, Any] = {}
        field_dict.update(self.additional_properties)
        field_dict.update({
            "topic": topic,
        })
        if concurrent_receives is not UNSET:
            field_dict["concurrentReceives"] = concurrent_receives
        if deliveries_burst is not UNSET:
            field_dict["deliveriesBurst"] = deliveries_burst
        if deliveries_per_second is not UNSET:
            field_dict["deliveriesPerSecond"] = deliveries_per_second
        if publish_burst is not UNSET:
            field_dict["publishBurst"] = publish_burst
        if publish_bytes_burst is not UNSET:
            field_dict["publishBytesBurst"] = publish_bytes_burst
        if publish_bytes_per_second is not UNSET:
            field_dict["publishBytesPerSecond"] = publish_bytes_per_second
        if publish_per_second is not UNSET:
            field_dict["publishPerSecond"] = publish_per_second

        return field_dict



    @classmethod
    def from_dict(cls: type[T], src_dict: Mapping[str, Any]) -> T:
        d = dict(src_dict)
        topic = d.pop("topic")

        concurrent_receives = d.pop("concurrentReceives", UNSET)

        deliveries_burst = d.pop("deliveriesBurst", UNSET)

        deliveries_per_second = d.pop("deliveriesPerSecond", UNSET)

        publish_burst = d.pop("publishBurst", UNSET)

        publish_bytes_burst = d.pop("publishBytesBurst", UNSET)

        publish_bytes_per_second = d.pop("publishBytesPerSecond", UNSET)

        publish_per_second = d.pop("publishPerSecond", UNSET)

        topic_limit = cls(
            topic=topic,
            concurrent_receives=concurrent_receives,
            deliveries_burst=deliveries_burst,
            deliveries_per_second=deliveries_per_second,
            publish_burst=publish_burst,
            publish_bytes_burst=publish_bytes_burst,
            publish_bytes_per_second=publish_bytes_per_second,
            publish_per_second=publish_per_second,
        )


        topic_limit.additional_properties = d
        return topic_limit

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
