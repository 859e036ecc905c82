from __future__ import annotations

from collections.abc import Mapping
from typing import Any, TypeVar, BinaryIO, TextIO, TYPE_CHECKING, Generator

from attrs import define as _attrs_define
from attrs import field as _attrs_field

from ..types import UNSET, Unset

from ..models.handle_result_status import HandleResultStatus
from ..types import UNSET, Unset
from typing import cast
import datetime






T = TypeVar("T", bound="HandleResult")



@_attrs_define
class HandleResult:
    """ 
        Attributes:
            receipt_handle (str):
            status (HandleResultStatus): Ok, expired (the lease ended or the handle is from an
                earlier delivery) or invalid (malformed or forged). Example: ok.
            invisible_until (datetime.datetime | Unset): The new lease end (extend).
     """

    receipt_handle: str
    status: HandleResultStatus
    invisible_until: datetime.datetime | Unset = UNSET
    additional_properties: dict[str, Any] = _attrs_field(init=False, factory=dict)





    def to_dict(self) -> dict[str, Any]:
        receipt_handle = self.receipt_handle

        status = self.status.value

        invisible_until: str | Unset = UNSET
        if not isinstance(self.invisible_until, Unset):
            invisible_until = self.invisible_until.isoformat()


        field_dict: dict[str, Any] = {}
        field_dict.update(self.additional_properties)
        field_dict.update({
            "receiptHandle": receipt_handle,
            "status": status,
        })
        if invisible_until is not UNSET:
            field_dict["invisibleUntil"] = invisible_until

        return field_dict



    @classmethod
    def from_dict(cls: type[T], src_dict: Mapping[str, Any]) -> T:
        d = dict(src_dict)
        receipt_handle = d.pop("receiptHandle")

        status = HandleResultStatus(d.pop("status"))




        _invisible_until = d.pop("invisibleUntil", UNSET)
        invisible_until: datetime.datetime | Unset
        if isinstance(_invisible_until,  Unset):
            invisible_until = UNSET
        else:
            invisible_until = datetime.datetime.fromisoformat(_invisible_until)




        handle_result = cls(
            receipt_handle=receipt_handle,
            status=status,
            invisible_until=invisible_until,
        )


        handle_result.additional_properties = d
        return handle_result

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
