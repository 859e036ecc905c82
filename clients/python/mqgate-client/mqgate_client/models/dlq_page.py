from __future__ import annotations

from collections.abc import Mapping
from typing import Any, TypeVar, BinaryIO, TextIO, TYPE_CHECKING, Generator

from attrs import define as _attrs_define
from attrs import field as _attrs_field

from ..types import UNSET, Unset

from ..types import UNSET, Unset
from typing import cast

if TYPE_CHECKING:
  from ..models.dead_letter import DeadLetter





T = TypeVar("T", bound="DLQPage")



@_attrs_define
class DLQPage:
    """ 
        Attributes:
            messages (list[DeadLetter]): Dead letters oldest first, with their original id,
                topic, tags, keys, properties and body; reconsumeTimes is the
                failed delivery's count (maxReconsumeTimes after exhausted retries).
                There is no queue position and no receipt handle: dead letters are
                not consumed.
            next_cursor (str | Unset): Continues the listing (pass it as `cursor`); absent on
                the last page. Example: 32.
     """

    messages: list[DeadLetter]
    next_cursor: str | Unset = UNSET
    additional_properties: dict[str, Any] = _attrs_field(init=False, factory=dict)





    def to_dict(self) -> dict[str, Any]:
        from ..models.dead_letter import DeadLetter # noqa: PLC0415
        messages = []
        for messages_item_data in self.messages:
            messages_item = messages_item_data.to_dict()
            messages.append(messages_item)



        next_cursor = self.next_cursor


        field_dict: dict[str, Any] = {}
        field_dict.update(self.additional_properties)
        field_dict.update({
            "messages": messages,
        })
        if next_cursor is not UNSET:
            field_dict["nextCursor"] = next_cursor

        return field_dict



    @classmethod
    def from_dict(cls: type[T], src_dict: Mapping[str, Any]) -> T:
        from ..models.dead_letter import DeadLetter # noqa: PLC0415
        d = dict(src_dict)
        messages = []
        _messages = d.pop("messages")
        for messages_item_data in (_messages):
            messages_item = DeadLetter.from_dict(messages_item_data)



            messages.append(messages_item)


        next_cursor = d.pop("nextCursor", UNSET)

        dlq_page = cls(
            messages=messages,
            next_cursor=next_cursor,
        )


        dlq_page.additional_properties = d
        return dlq_page

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
