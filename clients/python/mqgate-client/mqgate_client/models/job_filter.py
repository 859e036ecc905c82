from __future__ import annotations

from collections.abc import Mapping
from typing import Any, TypeVar, BinaryIO, TextIO, TYPE_CHECKING, Generator

from attrs import define as _attrs_define
from attrs import field as _attrs_field

from ..types import UNSET, Unset

from ..types import UNSET, Unset
from typing import cast
import datetime






T = TypeVar("T", bound="JobFilter")



@_attrs_define
class JobFilter:
    """ 
        Attributes:
            from_ (datetime.datetime | Unset): Selects messages stored (dead letters: dead-lettered) at or
                after this time.
            reason (str | Unset): A substring of the message's lastReason. Example: 503.
            sql (str | Unset): A SQL92 expression over properties and TAGS (as a
                subscription's with filterType SQL92). Example: region = 'eu' AND amount > 100.
            tags (str | Unset): A tag expression: `*` or tags joined by `||`. Example: created || paid.
            to (datetime.datetime | Unset): Selects messages stored before this time.
     """

    from_: datetime.datetime | Unset = UNSET
    reason: str | Unset = UNSET
    sql: str | Unset = UNSET
    tags: str | Unset = UNSET
    to: datetime.datetime | Unset = UNSET
    additional_properties: dict[str, Any] = _attrs_field(init=False, factory=dict)





    def to_dict(self) -> dict[str, Any]:
        from_: str | Unset = UNSET
        if not isinstance(self.from_, Unset):
            from_ = self.from_.isoformat()

        reason = self.reason

        sql = self.sql

        tags = self.tags

        to: str | Unset = UNSET
        if not isinstance(self.to, Unset):
            to = self.to.isoformat()


        field_dict: dict[str, Any] = {}
        field_dict.update(self.additional_properties)
        field_dict.update({
        })
        if from_ is not UNSET:
            field_dict["from"] = from_
        if reason is not UNSET:
            field_dict["reason"] = reason
        if sql is not UNSET:
            field_dict["sql"] = sql
        if tags is not UNSET:
            field_dict["tags"] = tags
        if to is not UNSET:
            field_dict["to"] = to

        return field_dict



    @classmethod
    def from_dict(cls: type[T], src_dict: Mapping[str, Any]) -> T:
        d = dict(src_dict)
        _from_ = d.pop("from", UNSET)
        from_: datetime.datetime | Unset
        if isinstance(_from_,  Unset):
            from_ = UNSET
        else:
            from_ = datetime.datetime.fromisoformat(_from_)




        reason = d.pop("reason", UNSET)

        sql = d.pop("sql", UNSET)

        tags = d.pop("tags", UNSET)

        _to = d.pop("to", UNSET)
        to: datetime.datetime | Unset
        if isinstance(_to,  Unset):
            to = UNSET
        else:
            to = datetime.datetime.fromisoformat(_to)




        job_filter = cls(
            from_=from_,
            reason=reason,
            sql=sql,
            tags=tags,
            to=to,
        )


        job_filter.additional_properties = d
        return job_filter

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
