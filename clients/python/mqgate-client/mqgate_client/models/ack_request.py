from __future__ import annotations

from collections.abc import Mapping
from typing import Any, TypeVar, BinaryIO, TextIO, TYPE_CHECKING, Generator

from attrs import define as _attrs_define
from attrs import field as _attrs_field

from ..types import UNSET, Unset

from typing import cast






T = TypeVar("T", bound="AckRequest")



@_attrs_define
class AckRequest:
    """ 
        Attributes:
            receipt_handles (list[str]): The handles of received messages (1..100); an
                empty or unknown one gets status invalid in the answer.
     """

    receipt_handles: list[str]





    def to_dict(self) -> dict[str, Any]:
        receipt_handles = self.receipt_handles




        field_dict: dict[str, Any] = {}

        field_dict.update({
            "receiptHandles": receipt_handles,
        })

        return field_dict



    @classmethod
    def from_dict(cls: type[T], src_dict: Mapping[str, Any]) -> T:
        d = dict(src_dict)
        receipt_handles = cast(list[str], d.pop("receiptHandles"))


        ack_request = cls(
            receipt_handles=receipt_handles,
        )

        return ack_request

