from __future__ import annotations

from collections.abc import Mapping
from typing import Any, TypeVar, BinaryIO, TextIO, TYPE_CHECKING, Generator

from attrs import define as _attrs_define
from attrs import field as _attrs_field

from ..types import UNSET, Unset

from ..types import UNSET, Unset
from typing import cast






T = TypeVar("T", bound="NackRequest")



@_attrs_define
class NackRequest:
    """ 
        Attributes:
            receipt_handles (list[str]): The handles of received messages (1..100); an
                empty or unknown one gets status invalid in the answer.
            delay_level (int | Unset): 0 lets the engine decide (3 + reconsumeTimes), -1 sends
                to the dead-letter topic now, 1 or more picks that level of the
                server's --delay-levels (1..18 by default); a level above the last
                means the last, as in RocketMQ. Example: 0.
            reason (str | Unset): Says why the messages failed (at most 256 characters); it is
                stored with the retry and dead-letter copies and shown as
                lastReason in the DLQ listing. Example: payment service answered 503.
     """

    receipt_handles: list[str]
    delay_level: int | Unset = UNSET
    reason: str | Unset = UNSET





    def to_dict(self) -> dict[str, Any]:
        receipt_handles = self.receipt_handles



        delay_level = self.delay_level

        reason = self.reason


        field_dict: dict[str, Any] = {}

        field_dict.update({
            "receiptHandles": receipt_handles,
        })
        if delay_level is not UNSET:
            field_dict["delayLevel"] = delay_level
        if reason is not UNSET:
            field_dict["reason"] = reason

        return field_dict



    @classmethod
    def from_dict(cls: type[T], src_dict: Mapping[str, Any]) -> T:
        d = dict(src_dict)
        receipt_handles = cast(list[str], d.pop("receiptHandles"))


        delay_level = d.pop("delayLevel", UNSET)

        reason = d.pop("reason", UNSET)

        nack_request = cls(
            receipt_handles=receipt_handles,
            delay_level=delay_level,
            reason=reason,
        )

        return nack_request

