from __future__ import annotations

from collections.abc import Mapping
from typing import Any, TypeVar, BinaryIO, TextIO, TYPE_CHECKING, Generator

from attrs import define as _attrs_define
from attrs import field as _attrs_field

from ..types import UNSET, Unset

from ..types import UNSET, Unset
from typing import cast

if TYPE_CHECKING:
  from ..models.topic import Topic





T = TypeVar("T", bound="TopicList")



@_attrs_define
class TopicList:
    """ 
        Attributes:
            topics (list[Topic]): The user topics, by name.
            next_cursor (str | Unset): Continues the listing (pass it as `cursor`); absent on
                the last page. Example: orders.
     """

    topics: list[Topic]
    next_cursor: str | Unset = UNSET
    additional_properties: dict[str, Any] = _attrs_field(init=False, factory=dict)





    def to_dict(self) -> dict[str, Any]:
        from ..models.topic import Topic # noqa: PLC0415
        topics = []
        for topics_item_data in self.topics:
            topics_item = topics_item_data.to_dict()
            topics.append(topics_item)



        next_cursor = self.next_cursor


        field_dict: dict[str, Any] = {}
        field_dict.update(self.additional_properties)
        field_dict.update({
            "topics": topics,
        })
        if next_cursor is not UNSET:
            field_dict["nextCursor"] = next_cursor

        return field_dict



    @classmethod
    def from_dict(cls: type[T], src_dict: Mapping[str, Any]) -> T:
        from ..models.topic import Topic # noqa: PLC0415
        d = dict(src_dict)
        topics = []
        _topics = d.pop("topics")
        for topics_item_data in (_topics):
            topics_item = Topic.from_dict(topics_item_data)



            topics.append(topics_item)


        next_cursor = d.pop("nextCursor", UNSET)

        topic_list = cls(
            topics=topics,
            next_cursor=next_cursor,
        )


        topic_list.additional_properties = d
        return topic_list

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
