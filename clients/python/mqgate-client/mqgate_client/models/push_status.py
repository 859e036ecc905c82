from __future__ import annotations

from collections.abc import Mapping
from typing import Any, TypeVar, BinaryIO, TextIO, TYPE_CHECKING, Generator

from attrs import define as _attrs_define
from attrs import field as _attrs_field

from ..types import UNSET, Unset

from ..types import UNSET, Unset
from typing import cast
import datetime






T = TypeVar("T", bound="PushStatus")



@_attrs_define
class PushStatus:
    """ 
        Attributes:
            consecutive_failures (int): Counts failed requests since the last 2xx. Example: 0.
            delivered (int): Counts messages answered with a 2xx since this gateway
                started pushing the group. Example: 1200.
            failed (int): Counts messages sent back for a retry since this gateway
                started pushing the group. Example: 4.
            in_flight (int): Counts POSTs waiting for an answer (at most
                push.maxInFlight). Example: 3.
            in_flight_messages (int): Counts the messages those POSTs carry. Example: 3.
            queued (int): Counts messages waiting for a free request slot or for a
                Retry-After pause to end. Example: 0.
            url (str): Where this gateway pushes right now (it follows a changed
                push.url within moments of the PUT). Example: https://hooks.example/orders.
            last_error (str | Unset): Describes the last failure (status code, timeout,
                connection or network-guard error). Example: HTTP 503 Service Unavailable.
            last_error_at (datetime.datetime | Unset): The time of the last failure; absent until the first.
            last_success_at (datetime.datetime | Unset): The time of the last 2xx; absent until the first.
            paused_until (datetime.datetime | Unset): Set while a Retry-After from the receiver holds the
                group's pushing.
     """

    consecutive_failures: int
    delivered: int
    failed: int
    in_flight: int
    in_flight_messages: int
    queued: int
    url: str
    last_error: str | Unset = UNSET
    last_error_at: datetime.datetime | Unset = UNSET
    last_success_at: datetime.datetime | Unset = UNSET
    paused_until: datetime.datetime | Unset = UNSET
    additional_properties: dict[str, Any] = _attrs_field(init=False, factory=dict)





    def to_dict(self) -> dict[str, Any]:
        consecutive_failures = self.consecutive_failures

        delivered = self.delivered

        failed = self.failed

        in_flight = self.in_flight

        in_flight_messages = self.in_flight_messages

        queued = self.queued

        url = self.url

        last_error = self.last_error

        last_error_at: str | Unset = UNSET
        if not isinstance(self.last_error_at, Unset):
            last_error_at = self.last_error_at.isoformat()

        last_success_at: str | Unset = UNSET
        if not isinstance(self.last_success_at, Unset):
            last_success_at = self.last_success_at.isoformat()

        paused_until: str | Unset = UNSET
        if not isinstance(self.paused_until, Unset):
            paused_until = self.paused_until.isoformat()


        field_dict: dict[str, Any] = {}
        field_dict.update(self.additional_properties)
        field_dict.update({
            "consecutiveFailures": consecutive_failures,
            "delivered": delivered,
            "failed": failed,
            "inFlight": in_flight,
            "inFlightMessages": in_flight_messages,
            "queued": queued,
            "url": url,
        })
        if last_error is not UNSET:
            field_dict["lastError"] = last_error
        if last_error_at is not UNSET:
            field_dict["lastErrorAt"] = last_error_at
        if last_success_at is not UNSET:
            field_dict["lastSuccessAt"] = last_success_at
        if paused_until is not UNSET:
            field_dict["pausedUntil"] = paused_until

        return field_dict



    @classmethod
    def from_dict(cls: type[T], src_dict: Mapping[str, Any]) -> T:
        d = dict(src_dict)
        consecutive_failures = d.pop("consecutiveFailures")

        delivered = d.pop("delivered")

        failed = d.pop("failed")

        in_flight = d.pop("inFlight")

        in_flight_messages = d.pop("inFlightMessages")

        queued = d.pop("queued")

        url = d.pop("url")

        last_error = d.pop("lastError", UNSET)

        _last_error_at = d.pop("lastErrorAt", UNSET)
        last_error_at: datetime.datetime | Unset
        if isinstance(_last_error_at,  Unset):
            last_error_at = UNSET
        else:
            last_error_at = datetime.datetime.fromisoformat(_last_error_at)




        _last_success_at = d.pop("lastSuccessAt", UNSET)
        last_success_at: datetime.datetime | Unset
        if isinstance(_last_success_at,  Unset):
            last_success_at = UNSET
        else:
            last_success_at = datetime.datetime.fromisoformat(_last_success_at)




        _paused_until = d.pop("pausedUntil", UNSET)
        paused_until: datetime.datetime | Unset
        if isinstance(_paused_until,  Unset):
            paused_until = UNSET
        else:
            paused_until = datetime.datetime.fromisoformat(_paused_until)




        push_status = cls(
            consecutive_failures=consecutive_failures,
            delivered=delivered,
            failed=failed,
            in_flight=in_flight,
            in_flight_messages=in_flight_messages,
            queued=queued,
            url=url,
            last_error=last_error,
            last_error_at=last_error_at,
            last_success_at=last_success_at,
            paused_until=paused_until,
        )


        push_status.additional_properties = d
        return push_status

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
