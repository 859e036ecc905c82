from __future__ import annotations

from collections.abc import Mapping
from typing import Any, TypeVar, BinaryIO, TextIO, TYPE_CHECKING, Generator

from attrs import define as _attrs_define
from attrs import field as _attrs_field

from ..types import UNSET, Unset

from ..models.timeline_event_type import TimelineEventType
from ..types import UNSET, Unset
from typing import cast
import datetime






T = TypeVar("T", bound="TimelineEvent")



@_attrs_define
class TimelineEvent:
    """ 
        Attributes:
            at (datetime.datetime):
            type_ (TimelineEventType):  Example: DELIVERED.
            attempt (int | Unset): The delivery's number, 1 for the first (DELIVERED). Example: 1.
            consumer_id (str | Unset): Who received it (DELIVERED). Example: c1.
            delay_level (int | Unset): The nack's level (NACKED) or the retry's (RETRY_SCHEDULED). Example: 3.
            job_id (str | Unset): The redrive job that moved it back (REDRIVEN by
                POST /v1/groups/{group}/dlq/redrive with a filter; absent for a
                redrive by message ids or a blocked key's resume). Example: 06h2lg7v1kf9hhtg0rkbf6cn4o.
            reason (str | Unset): The nack reason, when one was given (NACKED).
     """

    at: datetime.datetime
    type_: TimelineEventType
    attempt: int | Unset = UNSET
    consumer_id: str | Unset = UNSET
    delay_level: int | Unset = UNSET
    job_id: str | Unset = UNSET
    reason: str | Unset = UNSET
    additional_properties: dict[str, Any] = _attrs_field(init=False, factory=dict)





    def to_dict(self) -> dict[str, Any]:
        at = self.at.isoformat()

        type_ = self.type_.value

        attempt = self.attempt

        consumer_id = self.consumer_id

        delay_level = self.delay_level

        job_id = self.job_id

        reason = self.reason


        field_dict: dict[str, Any] = {}
        field_dict.update(self.additional_properties)
        field_dict.update({
            "at": at,
            "type": type_,
        })
        if attempt is not UNSET:
            field_dict["attempt"] = attempt
        if consumer_id is not UNSET:
            field_dict["consumerId"] = consumer_id
        if delay_level is not UNSET:
            field_dict["delayLevel"] = delay_level
        if job_id is not UNSET:
            field_dict["jobId"] = job_id
        if reason is not UNSET:
            field_dict["reason"] = reason

        return field_dict



    @classmethod
    def from_dict(cls: type[T], src_dict: Mapping[str, Any]) -> T:
        d = dict(src_dict)
        at = datetime.datetime.fromisoformat(d.pop("at"))




        type_ = TimelineEventType(d.pop("type"))




        attempt = d.pop("attempt", UNSET)

        consumer_id = d.pop("consumerId", UNSET)

        delay_level = d.pop("delayLevel", UNSET)

        job_id = d.pop("jobId", UNSET)

        reason = d.pop("reason", UNSET)

        timeline_event = cls(
            at=at,
            type_=type_,
            attempt=attempt,
            consumer_id=consumer_id,
            delay_level=delay_level,
            job_id=job_id,
            reason=reason,
        )


        timeline_event.additional_properties = d
        return timeline_event

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
