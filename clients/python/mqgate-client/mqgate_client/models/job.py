from __future__ import annotations

from collections.abc import Mapping
from typing import Any, TypeVar, BinaryIO, TextIO, TYPE_CHECKING, Generator

from attrs import define as _attrs_define
from attrs import field as _attrs_field

from ..types import UNSET, Unset

from ..models.job_kind import JobKind
from ..models.job_state import JobState
from ..types import UNSET, Unset
from typing import cast
import datetime






T = TypeVar("T", bound="Job")



@_attrs_define
class Job:
    """ 
        Attributes:
            id (str):  Example: 06h2lg7v1kf9hhtg0rkbf6cn4o.
            kind (JobKind): DLQ_REDRIVE, DLQ_PURGE or TOPIC_PURGE. Example: DLQ_REDRIVE.
            matched (int): Counts the messages selected so far. Example: 120.
            moved (int): Counts those redriven or purged so far. Example: 120.
            started_at (datetime.datetime):
            state (JobState): RUNNING, DONE or FAILED (see error). Example: RUNNING.
            error (str | Unset):
            finished_at (datetime.datetime | Unset): Set once the job is DONE or FAILED.
            group (str | Unset):  Example: billing.
            rate_per_second (int | Unset):  Example: 500.
            topic (str | Unset):  Example: orders.
     """

    id: str
    kind: JobKind
    matched: int
    moved: int
    started_at: datetime.datetime
    state: JobState
    error: str | Unset = UNSET
    finished_at: datetime.datetime | Unset = UNSET
    group: str | Unset = UNSET
    rate_per_second: int | Unset = UNSET
    topic: str | Unset = UNSET
    additional_properties: dict[str, Any] = _attrs_field(init=False, factory=dict)





    def to_dict(self) -> dict[str, Any]:
        id = self.id

        kind = self.kind.value

        matched = self.matched

        moved = self.moved

        started_at = self.started_at.isoformat()

        state = self.state.value

        error = self.error

        finished_at: str | Unset = UNSET
        if not isinstance(self.finished_at, Unset):
            finished_at = self.finished_at.isoformat()

        group = self.group

        rate_per_second = self.rate_per_second

        topic = self.topic


        field_dict: dict[str, Any] = {}
        field_dict.update(self.additional_properties)
        field_dict.update({
            "id": id,
            "kind": kind,
            "matched": matched,
            "moved": moved,
            "startedAt": started_at,
            "state": state,
        })
        if error is not UNSET:
            field_dict["error"] = error
        if finished_at is not UNSET:
            field_dict["finishedAt"] = finished_at
        if group is not UNSET:
            field_dict["group"] = group
        if rate_per_second is not UNSET:
            field_dict["ratePerSecond"] = rate_per_second
        if topic is not UNSET:
            field_dict["topic"] = topic

        return field_dict



    @classmethod
    def from_dict(cls: type[T], src_dict: Mapping[str, Any]) -> T:
        d = dict(src_dict)
        id = d.pop("id")

        kind = JobKind(d.pop("kind"))




        matched = d.pop("matched")

        moved = d.pop("moved")

        started_at = datetime.datetime.fromisoformat(d.pop("startedAt"))




        state = JobState(d.pop("state"))




        error = d.pop("error", UNSET)

        _finished_at = d.pop("finishedAt", UNSET)
        finished_at: datetime.datetime | Unset
        if isinstance(_finished_at,  Unset):
            finished_at = UNSET
        else:
            finished_at = datetime.datetime.fromisoformat(_finished_at)




        group = d.pop("group", UNSET)

        rate_per_second = d.pop("ratePerSecond", UNSET)

        topic = d.pop("topic", UNSET)

        job = cls(
            id=id,
            kind=kind,
            matched=matched,
            moved=moved,
            started_at=started_at,
            state=state,
            error=error,
            finished_at=finished_at,
            group=group,
            rate_per_second=rate_per_second,
            topic=topic,
        )


        job.additional_properties = d
        return job

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
