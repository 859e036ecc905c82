from __future__ import annotations

from collections.abc import Mapping
from typing import Any, TypeVar, BinaryIO, TextIO, TYPE_CHECKING, Generator

from attrs import define as _attrs_define
from attrs import field as _attrs_field

from ..types import UNSET, Unset

from ..types import UNSET, Unset
from typing import cast

if TYPE_CHECKING:
  from ..models.message import Message





T = TypeVar("T", bound="MessageList")



@_attrs_define
class MessageList:
    """ 
        Attributes:
            messages (list[Message]): Found, in queue order for a browse.
            max_offset (int | Unset): The offset the queue's next message will get (browse only). Example: 150.
            min_offset (int | Unset): The queue's oldest kept offset (browse only). Example: 0.
            next_offset (int | Unset): Where the next browse of this queue starts (browse only). Example: 42.
     """

    messages: list[Message]
    max_offset: int | Unset = UNSET
    min_offset: int | Unset = UNSET
    next_offset: int | Unset = UNSET
    additional_properties: dict[str, Any] = _attrs_field(init=False, factory=dict)





    def to_dict(self) -> dict[str, Any]:
        from ..models.message import Message # noqa: PLC0415
        messages = []
        for messages_item_data in self.messages:
            messages_item = messages_item_data.to_dict()
            messages.append(messages_item)



        max_offset = self.max_offset

        min_offset = self.min_offset

        next_offset = self.next_offset


        field_dict: dict[str, Any] = {}
        field_dict.update(self.additional_properties)
        field_dict.update({
            "messages": messages,
        })
        if max_offset is not UNSET:
            field_dict["maxOffset"] = max_offset
        if min_offset is not UNSET:
            field_dict["minOffset"] = min_offset
        if next_offset is not UNSET:
            field_dict["nextOffset"] = next_offset

        return field_dict



    @classmethod
    def from_dict(cls: type[T], src_dict: Mapping[str, Any]) -> T:
        from ..models.message import Message # noqa: PLC0415
        d = dict(src_dict)
        messages = []
        _messages = d.pop("messages")
        for messages_item_data in (_messages):
            messages_item = Message.from_dict(messages_item_data)



            messages.append(messages_item)


        max_offset = d.pop("maxOffset", UNSET)

        min_offset = d.pop("minOffset", UNSET)

        next_offset = d.pop("nextOffset", UNSET)

        message_list = cls(
            messages=messages,
            max_offset=max_offset,
            min_offset=min_offset,
            next_offset=next_offset,
        )


        message_list.additional_properties = d
        return message_list

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
