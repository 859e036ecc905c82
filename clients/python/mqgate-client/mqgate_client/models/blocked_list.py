from __future__ import annotations

from collections.abc import Mapping
from typing import Any, TypeVar, BinaryIO, TextIO, TYPE_CHECKING, Generator

from attrs import define as _attrs_define
from attrs import field as _attrs_field

from ..types import UNSET, Unset

from ..types import UNSET, Unset
from typing import cast

if TYPE_CHECKING:
  from ..models.blocked_key import BlockedKey





T = TypeVar("T", bound="BlockedList")



@_attrs_define
class BlockedList:
    """ 
        Attributes:
            blocked (list[BlockedKey]):
            next_cursor (str | Unset): Fetches the next page; absent on the last.
     """

    blocked: list[BlockedKey]
    next_cursor: str | Unset = UNSET
    additional_properties: dict[str, Any] = _attrs_field(init=False, factory=dict)





    def to_dict(self) -> dict[str, Any]:
        from ..models.blocked_key import BlockedKey # noqa: PLC0415
        blocked = []
        for blocked_item_data in self.blocked:
            blocked_item = blocked_item_data.to_dict()
            blocked.append(blocked_item)



        next_cursor = self.next_cursor


        field_dict: dict[str, Any] = {}
        field_dict.update(self.additional_properties)
        field_dict.update({
            "blocked": blocked,
        })
        if next_cursor is not UNSET:
            field_dict["nextCursor"] = next_cursor

        return field_dict



    @classmethod
    def from_dict(cls: type[T], src_dict: Mapping[str, Any]) -> T:
        from ..models.blocked_key import BlockedKey # noqa: PLC0415
        d = dict(src_dict)
        blocked = []
        _blocked = d.pop("blocked")
        for blocked_item_data in (_blocked):
            blocked_item = BlockedKey.from_dict(blocked_item_data)



            blocked.append(blocked_item)


        next_cursor = d.pop("nextCursor", UNSET)

        blocked_list = cls(
            blocked=blocked,
            next_cursor=next_cursor,
        )


        blocked_list.additional_properties = d
        return blocked_list

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
