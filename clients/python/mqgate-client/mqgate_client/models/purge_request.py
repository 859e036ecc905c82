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





T = TypeVar("T", bound="PurgeRequest")



@_attrs_define
class PurgeRequest:
    """ 
        Attributes:
            dry_run (bool | Unset): Only counts what the filter selects (200 {"matched"}). Example: False.
            filter_ (JobFilter | Unset):
            rate_per_second (int | Unset): Bounds how many messages a second the job handles
                (default: no bound). Example: 500.
     """

    dry_run: bool | Unset = UNSET
    filter_: JobFilter | Unset = UNSET
    rate_per_second: int | Unset = UNSET
    additional_properties: dict[str, Any] = _attrs_field(init=False, factory=dict)





    def to_dict(self) -> dict[str, Any]:
        from ..models.job_filter import JobFilter # noqa: PLC0415
        dry_run = self.dry_run

        filter_: dict[str, Any] | Unset = UNSET
        if not isinstance(self.filter_, Unset):
            filter_ = self.filter_.to_dict()

        rate_per_second = self.rate_per_second


        field_dict: dict[str, Any] = {}
        field_dict.update(self.additional_properties)
        field_dict.update({
        })
        if dry_run is not UNSET:
            field_dict["dryRun"] = dry_run
        if filter_ is not UNSET:
            field_dict["filter"] = filter_
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




        rate_per_second = d.pop("ratePerSecond", UNSET)

        purge_request = cls(
            dry_run=dry_run,
            filter_=filter_,
            rate_per_second=rate_per_second,
        )


        purge_request.additional_properties = d
        return purge_request

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
