from __future__ import annotations

from collections.abc import Mapping
from typing import Any, TypeVar, BinaryIO, TextIO, TYPE_CHECKING, Generator

from attrs import define as _attrs_define
from attrs import field as _attrs_field

from ..types import UNSET, Unset







T = TypeVar("T", bound="PushView")



@_attrs_define
class PushView:
    """ 
        Attributes:
            batch_size (int):
            has_secret (bool): Tells whether requests are signed.
            max_in_flight (int):
            timeout_seconds (int):
            url (str):
     """

    batch_size: int
    has_secret: bool
    max_in_flight: int
    timeout_seconds: int
    url: str
    additional_properties: dict[str, Any] = _attrs_field(init=False, factory=dict)





    def to_dict(self) -> dict[str, Any]:
        batch_size = self.batch_size

        has_secret = self.has_secret

        max_in_flight = self.max_in_flight

        timeout_seconds = self.timeout_seconds

        url = self.url


        field_dict: dict[str, Any] = {}
        field_dict.update(self.additional_properties)
        field_dict.update({
            "batchSize": batch_size,
            "hasSecret": has_secret,
            "maxInFlight": max_in_flight,
            "timeoutSeconds": timeout_seconds,
            "url": url,
        })

        return field_dict



    @classmethod
    def from_dict(cls: type[T], src_dict: Mapping[str, Any]) -> T:
        d = dict(src_dict)
        batch_size = d.pop("batchSize")

        has_secret = d.pop("hasSecret")

        max_in_flight = d.pop("maxInFlight")

        timeout_seconds = d.pop("timeoutSeconds")

        url = d.pop("url")

        push_view = cls(
            batch_size=batch_size,
            has_secret=has_secret,
            max_in_flight=max_in_flight,
            timeout_seconds=timeout_seconds,
            url=url,
        )


        push_view.additional_properties = d
        return push_view

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
