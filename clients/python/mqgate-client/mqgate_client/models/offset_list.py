from __future__ import annotations

from collections.abc import Mapping
from typing import Any, TypeVar, BinaryIO, TextIO, TYPE_CHECKING, Generator

from attrs import define as _attrs_define
from attrs import field as _attrs_field

from ..types import UNSET, Unset

from typing import cast

if TYPE_CHECKING:
  from ..models.queue_offset import QueueOffset





T = TypeVar("T", bound="OffsetList")



@_attrs_define
class OffsetList:
    """ 
        Attributes:
            offsets (list[QueueOffset]):
     """

    offsets: list[QueueOffset]
    additional_properties: dict[str, Any] = _attrs_field(init=False, factory=dict)





    def to_dict(self) -> dict[str, Any]:
        from ..models.queue_offset import QueueOffset # noqa: PLC0415
        offsets = []
        for offsets_item_data in self.offsets:
            offsets_item = offsets_item_data.to_dict()
            offsets.append(offsets_item)




        field_dict: dict[str, Any] = {}
        field_dict.update(self.additional_properties)
        field_dict.update({
            "offsets": offsets,
        })

        return field_dict



    @classmethod
    def from_dict(cls: type[T], src_dict: Mapping[str, Any]) -> T:
        from ..models.queue_offset import QueueOffset # noqa: PLC0415
        d = dict(src_dict)
        offsets = []
        _offsets = d.pop("offsets")
        for offsets_item_data in (_offsets):
            offsets_item = QueueOffset.from_dict(offsets_item_data)



            offsets.append(offsets_item)


        offset_list = cls(
            offsets=offsets,
        )


        offset_list.additional_properties = d
        return offset_list

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
