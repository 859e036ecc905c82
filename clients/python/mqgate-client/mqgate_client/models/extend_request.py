from __future__ import annotations

from collections.abc import Mapping
from typing import Any, TypeVar, BinaryIO, TextIO, TYPE_CHECKING, Generator

from attrs import define as _attrs_define
from attrs import field as _attrs_field

from ..types import UNSET, Unset

from typing import cast






T = TypeVar("T", bound="ExtendRequest")



@_attrs_define
class ExtendRequest:
    """ 
        Attributes:
            invisible_seconds (int): The new lease, from now. Example: 120.
            receipt_handles (list[str]): The handles of received messages (1..100); an
                empty or unknown one gets status invalid in the answer.
     """

    invisible_seconds: int
    receipt_handles: list[str]





    def to_dict(self) -> dict[str, Any]:
        invisible_seconds = self.invisible_seconds

        receipt_handles = self.receipt_handles




        field_dict: dict[str, Any] = {}

        field_dict.update({
            "invisibleSeconds": invisible_seconds,
            "receiptHandles": receipt_handles,
        })

        return field_dict



    @classmethod
    def from_dict(cls: type[T], src_dict: Mapping[str, Any]) -> T:
        d = dict(src_dict)
        invisible_seconds = d.pop("invisibleSeconds")

        receipt_handles = cast(list[str], d.pop("receiptHandles"))


        extend_request = cls(
            invisible_seconds=invisible_seconds,
            receipt_handles=receipt_handles,
        )

        return extend_request

