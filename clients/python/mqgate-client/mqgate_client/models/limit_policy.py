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
            name (str): The policy name of the headers: pub, pub-bytes,
                deliveries, receives, with :<pattern> for a topic or group entry. Example: pub.
            quota (int): Q: per window for a rate, the maximum for receives. Example: 100.
            remaining (int): R: what the bucket holds now (or receives free). Example: 57.
            unit (LimitPolicyUnit): Qu: requests (messages), content-bytes or concurrent-requests. Example: requests.
            window_seconds (int | Unset): W (absent for a concurrency limit). Example: 1.
     """

    name: str
    quota: int
    remaining: int
    unit: LimitPolicyUnit
    window_seconds: int | Unset = UNSET
    additional_properties: dict[str, Any] = _attrs_field(init=False, factory=dict)





    def to_dict(self) -> dict[str, Any]:
        name = self.name

        quota = self.quota

        remaining = self.remaining

        unit = self.unit.value

        window_seconds = self.window_seconds


        field_dict: dict[str, Any] = {}
        field_dict.update(self.additional_properties)
        field_dict.update({
            "name": name,
            "quota": quota,
            "remaining": remaining,
            "unit": unit,
        })
        if window_seconds is not UNSET:
            field_dict["windowSeconds"] = window_seconds

        return field_dict



    @classmethod
    def from_dict(cls: type[T], src_dict: Mapping[str, Any]) -> T:
        d = dict(src_dict)
        name = d.pop("name")

        quota = d.pop("quota")

        remaining = d.pop("remaining")

        unit = LimitPolicyUnit(d.pop("unit"))




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
