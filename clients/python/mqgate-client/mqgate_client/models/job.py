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
            error (str | Unset):
            finished_at (datetime.datetime | Unset): FinishedAt is set once the job is DONE or FAILED.
            group (str | Unset):  Example: billing.
            id (str | Unset):  Example: 06h2lg7v1kf9hhtg0rkbf6cn4o.
            kind (JobKind | Unset): Kind: DLQ_REDRIVE, DLQ_PURGE or TOPIC_PURGE. Example: DLQ_REDRIVE.
            matched (int | Unset): Matched counts the messages selected so far. Example: 120.
            moved (int | Unset): Moved counts those redriven or purged so far. Example: 120.
            rate_per_second (int | Unset):  Example: 500.
            started_at (datetime.datetime | Unset):
            state (JobState | Unset): State: RUNNING, DONE or FAILED (see error). Example: RUNNING.
            topic (str | Unset):  Example: orders.
     """

    error: str | Unset = UNSET
    finished_at: datetime.datetime | Unset = UNSET
    group: str | Unset = UNSET
    id: str | Unset = UNSET
    kind: JobKind | Unset = UNSET
    matched: int | Unset = UNSET
    moved: int | Unset = UNSET
    rate_per_second: int | Unset = UNSET
    started_at: datetime.datetime | Unset = UNSET
    state: JobState | Unset = UNSET
    topic: str | Unset = UNSET
    additional_properties: dict[str, Any] = _attrs_field(init=False, factory=dict)





    def to_dict(self) -> dict[str, Any]:
        error = self.error

        finished_at: str | Unset = UNSET
        if not isinstance(self.finished_at, Unset):
            finished_at = self.finished_at.isoformat()

        group = self.group

        id = self.id

        kind: str | Unset = UNSET
        if not isinstance(self.kind, Unset):
            kind = self.kind.value


        matched = self.matched

        moved = self.moved

        rate_per_second = self.rate_per_second

        started_at: str | Unset = UNSET
        if not isinstance(self.started_at, Unset):
            started_at = self.started_at.isoformat()

        state: str | Unset = UNSET
        if not isinstance(self.state, Unset):
            state = self.state.value


        topic = self.topic


        field_dict: dict[str, Any] = {}
        field_dict.update(self.additional_properties)
        field_dict.update({
        })
        if error is not UNSET:
            field_dict["error"] = error
        if finished_at is not UNSET:
            field_dict["finishedAt"] = finished_at
        if group is not UNSET:
            field_dict["group"] = group
        if id is not UNSET:
            field_dict["id"] = id
        if kind is not UNSET:
            field_dict["kind"] = kind
        if matched is not UNSET:
            field_dict["matched"] = matched
        if moved is not UNSET:
            field_dict["moved"] = moved
        if rate_per_second is not UNSET:
            field_dict["ratePerSecond"] = rate_per_second
        if started_at is not UNSET:
            field_dict["startedAt"] = started_at
        if state is not UNSET:
            field_dict["state"] = state
        if topic is not UNSET:
            field_dict["topic"] = topic

        return field_dict



    @classmethod
    def from_dict(cls: type[T], src_dict: Mapping[str, Any]) -> T:
        d = dict(src_dict)
        error = d.pop("error", UNSET)

        _finished_at = d.pop("finishedAt", UNSET)
        finished_at: datetime.datetime | Unset
        if isinstance(_finished_at,  Unset):
            finished_at = UNSET
        else:
            finished_at = datetime.datetime.fromisoformat(_finished_at)




        group = d.pop("group", UNSET)

        id = d.pop("id", UNSET)

        _kind = d.pop("kind", UNSET)
        kind: JobKind | Unset
        if isinstance(_kind,  Unset):
            kind = UNSET
        else:
            kind = JobKind(_kind)




        matched = d.pop("matched", UNSET)

        moved = d.pop("moved", UNSET)

        rate_per_second = d.pop("ratePerSecond", UNSET)

        _started_at = d.pop("startedAt", UNSET)
        started_at: datetime.datetime | Unset
        if isinstance(_started_at,  Unset):
            started_at = UNSET
        else:
            started_at = datetime.datetime.fromisoformat(_started_at)




        _state = d.pop("state", UNSET)
        state: JobState | Unset
        if isinstance(_state,  Unset):
            state = UNSET
        else:
            state = JobState(_state)




        topic = d.pop("topic", UNSET)

        job = cls(
            error=error,
            finished_at=finished_at,
            group=group,
            id=id,
            kind=kind,
            matched=matched,
            moved=moved,
            rate_per_second=rate_per_second,
            started_at=started_at,
            state=state,
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
