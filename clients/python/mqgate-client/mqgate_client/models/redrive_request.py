from __future__ import annotations

from collections.abc import Mapping
from typing import Any, TypeVar, BinaryIO, TextIO, TYPE_CHECKING, Generator

from attrs import define as _attrs_define
from attrs import field as _attrs_field

from ..types import UNSET, Unset

from ..types import UNSET, Unset
from typing import cast

if TYPE_CHECKING:
  from ..models.job_filter import JobFilter





T = TypeVar("T", bound="RedriveRequest")



@_attrs_define
class RedriveRequest:
    """ 
        Attributes:
            dry_run (bool | Unset): Only counts what the filter selects: 200 {"matched"}. Example: False.
            filter_ (JobFilter | Unset):
            message_ids (list[str] | Unset): Original message ids to redrive; empty or absent
                redrives every dead letter of the group. Example: ['0A1B2C3D4E5F60718293A4B5'].
            rate_per_second (int | Unset): Bounds how many dead letters a second the job
                redrives (default: no bound). 0 or absent: the default. Example: 500.
     """

    dry_run: bool | Unset = UNSET
    filter_: JobFilter | Unset = UNSET
    message_ids: list[str] | Unset = UNSET
    rate_per_second: int | Unset = UNSET





    def to_dict(self) -> dict[str, Any]:
        from ..models.job_filter import JobFilter # noqa: PLC0415
        dry_run = self.dry_run

        filter_: dict[str, Any] | Unset = UNSET
        if not isinstance(self.filter_, Unset):
            filter_ = self.filter_.to_dict()

        message_ids: list[str] | Unset = UNSET
        if not isinstance(self.message_ids, Unset):
            message_ids = self.message_ids



        rate_per_second = self.rate_per_second


        field_dict: dict[str, Any] = {}

        field_dict.update({
        })
        if dry_run is not UNSET:
            field_dict["dryRun"] = dry_run
        if filter_ is not UNSET:
            field_dict["filter"] = filter_
        if message_ids is not UNSET:
            field_dict["messageIds"] = message_ids
        if rate_per_second is not UNSET:
            field_dict["ratePerSecond"] = rate_per_second

        return field_dict



    @classmethod
    def from_dict(cls: type[T], src_dict: Mapping[str, Any]) -> T:
        from ..models.job_filter import JobFilter # noqa: PLC0415
        d = dict(src_dict)
        dry_run = d.pop("dryRun", UNSET)

        _filter_ = d.pop("filter", UNSET)
        filter_: JobFilter | Unset
        if isinstance(_filter_,  Unset):
            filter_ = UNSET
        else:
            filter_ = JobFilter.from_dict(_filter_)




        message_ids = cast(list[str], d.pop("messageIds", UNSET))


        rate_per_second = d.pop("ratePerSecond", UNSET)

        redrive_request = cls(
            dry_run=dry_run,
            filter_=filter_,
            message_ids=message_ids,
            rate_per_second=rate_per_second,
        )

        return redrive_request

