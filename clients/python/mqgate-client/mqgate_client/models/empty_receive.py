from __future__ import annotations

from collections.abc import Mapping
from typing import Any, TypeVar, BinaryIO, TextIO, TYPE_CHECKING, Generator

from attrs import define as _attrs_define
from attrs import field as _attrs_field

from ..types import UNSET, Unset

from ..models.empty_receive_reason import EmptyReceiveReason
from ..types import UNSET, Unset
from typing import cast
import datetime






T = TypeVar("T", bound="EmptyReceive")



@_attrs_define
class EmptyReceive:
    """ 
        Attributes:
            reason (EmptyReceiveReason): NO_MESSAGES (nothing buffered, leased or suspended),
                NOT_VISIBLE_YET (everything held is leased to other receives),
                KEYS_BLOCKED (ORDERLY queues wait behind a message in flight or a
                failed head's suspension), PAUSED (the group is paused: POST
                /v1/groups/{group}/resume), NO_SUBSCRIPTION_MATCH (none of the
                subscribed topics exists). Example: KEYS_BLOCKED.
            blocked_keys (list[str] | Unset): The sharding keys of the heads holding ORDERLY
                queues back (KEYS_BLOCKED), one per queue. Example: ['customer-9'].
            next_visible_at (datetime.datetime | Unset): The earliest lease deadline or suspension end of
                what holds messages back. Example: 2026-01-02T15:05:05.000Z.
     """

    reason: EmptyReceiveReason
    blocked_keys: list[str] | Unset = UNSET
    next_visible_at: datetime.datetime | Unset = UNSET
    additional_properties: dict[str, Any] = _attrs_field(init=False, factory=dict)





    def to_dict(self) -> dict[str, Any]:
        reason = self.reason.value

        blocked_keys: list[str] | Unset = UNSET
        if not isinstance(self.blocked_keys, Unset):
            blocked_keys = self.blocked_keys



        next_visible_at: str | Unset = UNSET
        if not isinstance(self.next_visible_at, Unset):
            next_visible_at = self.next_visible_at.isoformat()


        field_dict: dict[str, Any] = {}
        field_dict.update(self.additional_properties)
        field_dict.update({
            "reason": reason,
        })
        if blocked_keys is not UNSET:
            field_dict["blockedKeys"] = blocked_keys
        if next_visible_at is not UNSET:
            field_dict["nextVisibleAt"] = next_visible_at

        return field_dict



    @classmethod
    def from_dict(cls: type[T], src_dict: Mapping[str, Any]) -> T:
        d = dict(src_dict)
        reason = EmptyReceiveReason(d.pop("reason"))




        blocked_keys = cast(list[str], d.pop("blockedKeys", UNSET))


        _next_visible_at = d.pop("nextVisibleAt", UNSET)
        next_visible_at: datetime.datetime | Unset
        if isinstance(_next_visible_at,  Unset):
            next_visible_at = UNSET
        else:
            next_visible_at = datetime.datetime.fromisoformat(_next_visible_at)




        empty_receive = cls(
            reason=reason,
            blocked_keys=blocked_keys,
            next_visible_at=next_visible_at,
        )


        empty_receive.additional_properties = d
        return empty_receive

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
