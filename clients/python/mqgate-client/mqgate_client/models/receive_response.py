from __future__ import annotations

from collections.abc import Mapping
from typing import Any, TypeVar, BinaryIO, TextIO, TYPE_CHECKING, Generator

from attrs import define as _attrs_define
from attrs import field as _attrs_field

from ..types import UNSET, Unset

from ..types import UNSET, Unset
from typing import cast

if TYPE_CHECKING:
  from ..models.empty_receive import EmptyReceive
  from ..models.received_message import ReceivedMessage





T = TypeVar("T", bound="ReceiveResponse")



@_attrs_define
class ReceiveResponse:
    """ 
        Attributes:
            messages (list[ReceivedMessage]):
            empty (EmptyReceive | Unset):
     """

    messages: list[ReceivedMessage]
    empty: EmptyReceive | Unset = UNSET
    additional_properties: dict[str, Any] = _attrs_field(init=False, factory=dict)





    def to_dict(self) -> dict[str, Any]:
        from ..models.empty_receive import EmptyReceive # noqa: PLC0415
        from ..models.received_message import ReceivedMessage # noqa: PLC0415
        messages = []
        for messages_item_data in self.messages:
            messages_item = messages_item_data.to_dict()
            messages.append(messages_item)



        empty: dict[str, Any] | Unset = UNSET
        if not isinstance(self.empty, Unset):
            empty = self.empty.to_dict()


        field_dict: dict[str, Any] = {}
        field_dict.update(self.additional_properties)
        field_dict.update({
            "messages": messages,
        })
        if empty is not UNSET:
            field_dict["empty"] = empty

        return field_dict



    @classmethod
    def from_dict(cls: type[T], src_dict: Mapping[str, Any]) -> T:
        from ..models.empty_receive import EmptyReceive # noqa: PLC0415
        from ..models.received_message import ReceivedMessage # noqa: PLC0415
        d = dict(src_dict)
        messages = []
        _messages = d.pop("messages")
        for messages_item_data in (_messages):
            messages_item = ReceivedMessage.from_dict(messages_item_data)



            messages.append(messages_item)


        _empty = d.pop("empty", UNSET)
        empty: EmptyReceive | Unset
        if isinstance(_empty,  Unset):
            empty = UNSET
        else:
            empty = EmptyReceive.from_dict(_empty)




        receive_response = cls(
            messages=messages,
            empty=empty,
        )


        receive_response.additional_properties = d
        return receive_response

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
