from __future__ import annotations

from collections.abc import Mapping
from typing import Any, TypeVar, BinaryIO, TextIO, TYPE_CHECKING, Generator

from attrs import define as _attrs_define
from attrs import field as _attrs_field

from ..types import UNSET, Unset

from ..types import UNSET, Unset






T = TypeVar("T", bound="ReceiveRequest")



@_attrs_define
class ReceiveRequest:
    """ 
        Attributes:
            consumer_id (str | Unset): Names the consumer; required for BROADCASTING groups only. Example: c1.
            invisible_seconds (int | Unset): The lease of each returned message (default: the group's). Example: 60.
            max_messages (int | Unset): The most messages to return (default 1). Example: 10.
            wait_seconds (int | Unset): How long to wait for a message when none is ready
                (default 0: answer at once). Example: 20.
     """

    consumer_id: str | Unset = UNSET
    invisible_seconds: int | Unset = UNSET
    max_messages: int | Unset = UNSET
    wait_seconds: int | Unset = UNSET





    def to_dict(self) -> dict[str, Any]:
        consumer_id = self.consumer_id

        invisible_seconds = self.invisible_seconds

        max_messages = self.max_messages

        wait_seconds = self.wait_seconds


        field_dict: dict[str, Any] = {}

        field_dict.update({
        })
        if consumer_id is not UNSET:
            field_dict["consumerId"] = consumer_id
        if invisible_seconds is not UNSET:
            field_dict["invisibleSeconds"] = invisible_seconds
        if max_messages is not UNSET:
            field_dict["maxMessages"] = max_messages
        if wait_seconds is not UNSET:
            field_dict["waitSeconds"] = wait_seconds

        return field_dict



    @classmethod
    def from_dict(cls: type[T], src_dict: Mapping[str, Any]) -> T:
        d = dict(src_dict)
        consumer_id = d.pop("consumerId", UNSET)

        invisible_seconds = d.pop("invisibleSeconds", UNSET)

        max_messages = d.pop("maxMessages", UNSET)

        wait_seconds = d.pop("waitSeconds", UNSET)

        receive_request = cls(
            consumer_id=consumer_id,
            invisible_seconds=invisible_seconds,
            max_messages=max_messages,
            wait_seconds=wait_seconds,
        )

        return receive_request

