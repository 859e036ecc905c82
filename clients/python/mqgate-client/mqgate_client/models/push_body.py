from __future__ import annotations

from collections.abc import Mapping
from typing import Any, TypeVar, BinaryIO, TextIO, TYPE_CHECKING, Generator

from attrs import define as _attrs_define
from attrs import field as _attrs_field

from ..types import UNSET, Unset

from ..types import UNSET, Unset






T = TypeVar("T", bound="PushBody")



@_attrs_define
class PushBody:
    """ 
        Attributes:
            url (str): Receives each message as a POST. Example: https://hooks.example/orders.
            batch_size (int | Unset): How many messages one POST carries (ORDERLY: in queue
                order). Default 1. 0 or absent: the default. Example: 1.
            max_in_flight (int | Unset): Bounds concurrent requests (orderly: one per queue). Default 16. 0 or absent: the
                default. Example: 16.
            secret (str | Unset): Signs requests (Standard Webhooks); write-only. Example:
                whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw.
            timeout_seconds (int | Unset): Bounds one request. Default 15. 0 or absent: the default. Example: 15.
     """

    url: str
    batch_size: int | Unset = UNSET
    max_in_flight: int | Unset = UNSET
    secret: str | Unset = UNSET
    timeout_seconds: int | Unset = UNSET





    def to_dict(self) -> dict[str, Any]:
        url = self.url

        batch_size = self.batch_size

        max_in_flight = self.max_in_flight

        secret = self.secret

        timeout_seconds = self.timeout_seconds


        field_dict: dict[str, Any] = {}

        field_dict.update({
            "url": url,
        })
        if batch_size is not UNSET:
            field_dict["batchSize"] = batch_size
        if max_in_flight is not UNSET:
            field_dict["maxInFlight"] = max_in_flight
        if secret is not UNSET:
            field_dict["secret"] = secret
        if timeout_seconds is not UNSET:
            field_dict["timeoutSeconds"] = timeout_seconds

        return field_dict



    @classmethod
    def from_dict(cls: type[T], src_dict: Mapping[str, Any]) -> T:
        d = dict(src_dict)
        url = d.pop("url")

        batch_size = d.pop("batchSize", UNSET)

        max_in_flight = d.pop("maxInFlight", UNSET)

        secret = d.pop("secret", UNSET)

        timeout_seconds = d.pop("timeoutSeconds", UNSET)

        push_body = cls(
            url=url,
            batch_size=batch_size,
            max_in_flight=max_in_flight,
            secret=secret,
            timeout_seconds=timeout_seconds,
        )

        return push_body

