from __future__ import annotations

from collections.abc import Mapping
from typing import Any, TypeVar, BinaryIO, TextIO, TYPE_CHECKING, Generator

from attrs import define as _attrs_define
from attrs import field as _attrs_field

from ..types import UNSET, Unset

from ..models.limit_policy_unit import LimitPolicyUnit
from ..types import UNSET, Unset






T = TypeVar("T", bound="LimitPolicy")



@_attrs_define
class LimitPolicy:
    """ 
        Attributes:
            name (str | Unset): Name is the policy name of the headers: pub, pub-bytes,
                deliveries, receives, with :<pattern> for a topic or group entry. Example: pub.
            quota (int | Unset): Quota is q: per window for a rate, the maximum for receives. Example: 100.
            remaining (int | Unset): Remaining is r: what the bucket holds now (or receives free). Example: 57.
            unit (LimitPolicyUnit | Unset): Unit is qu: requests (messages), content-bytes or concurrent-requests. Example:
                requests.
            window_seconds (int | Unset): WindowSeconds is w (absent for a concurrency limit). Example: 1.
     """

    name: str | Unset = UNSET
    quota: int | Unset = UNSET
    remaining: int | Unset = UNSET
    unit: LimitPolicyUnit | Unset = UNSET
    window_seconds: int | Unset = UNSET
    additional_properties: dict[str, Any] = _attrs_field(init=False, factory=dict)





    def to_dict(self) -> dict[str, Any]:
        name = self.name

        quota = self.quota

        remaining = self.remaining

        unit: str | Unset = UNSET
        if not isinstance(self.unit, Unset):
            unit = self.unit.value


        window_seconds = self.window_seconds


        field_dict: dict[str, Any] = {}
        field_dict.update(self.additional_properties)
        field_dict.update({
        })
        if name is not UNSET:
            field_dict["name"] = name
        if quota is not UNSET:
            field_dict["quota"] = quota
        if remaining is not UNSET:
            field_dict["remaining"] = remaining
        if unit is not UNSET:
            field_dict["unit"] = unit
        if window_seconds is not UNSET:
            field_dict["windowSeconds"] = window_seconds

        return field_dict



    @classmethod
    def from_dict(cls: type[T], src_dict: Mapping[str, Any]) -> T:
        d = dict(src_dict)
        name = d.pop("name", UNSET)

        quota = d.pop("quota", UNSET)

        remaining = d.pop("remaining", UNSET)

        _unit = d.pop("unit", UNSET)
        unit: LimitPolicyUnit | Unset
        if isinstance(_unit,  Unset):
            unit = UNSET
        else:
            unit = LimitPolicyUnit(_unit)




        window_seconds = d.pop("windowSeconds", UNSET)

        limit_policy = cls(
            name=name,
            quota=quota,
            remaining=remaining,
            unit=unit,
            window_seconds=window_seconds,
        )


        limit_policy.additional_properties = d
        return limit_policy

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
