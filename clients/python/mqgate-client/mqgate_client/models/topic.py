from __future__ import annotations

from collections.abc import Mapping
from typing import Any, TypeVar, BinaryIO, TextIO, TYPE_CHECKING, Generator

from attrs import define as _attrs_define
from attrs import field as _attrs_field

from ..types import UNSET, Unset

from ..types import UNSET, Unset
from typing import cast
import datetime

if TYPE_CHECKING:
  from ..models.topic_stats import TopicStats





T = TypeVar("T", bound="Topic")



@_attrs_define
class Topic:
    """ 
        Attributes:
            created_at (datetime.datetime): When the topic was created (RFC 3339, UTC, milliseconds). Example:
                2026-01-02T15:04:05.000Z.
            name (str): Of the topic. Example: orders.
            queues (int): The number of queues. Example: 8.
            retention_hours (int): How long messages are kept. Example: 72.
            stats (TopicStats | Unset):
     """

    created_at: datetime.datetime
    name: str
    queues: int
    retention_hours: int
    stats: TopicStats | Unset = UNSET
    additional_properties: dict[str, Any] = _attrs_field(init=False, factory=dict)





    def to_dict(self) -> dict[str, Any]:
        from ..models.topic_stats import TopicStats # noqa: PLC0415
        created_at = self.created_at.isoformat()

        name = self.name

        queues = self.queues

        retention_hours = self.retention_hours

        stats: dict[str, Any] | Unset = UNSET
        if not isinstance(self.stats, Unset):
            stats = self.stats.to_dict()


        field_dict: dict[str, Any] = {}
        field_dict.update(self.additional_properties)
        field_dict.update({
            "createdAt": created_at,
            "name": name,
            "queues": queues,
            "retentionHours": retention_hours,
        })
        if stats is not UNSET:
            field_dict["stats"] = stats

        return field_dict



    @classmethod
    def from_dict(cls: type[T], src_dict: Mapping[str, Any]) -> T:
        from ..models.topic_stats import TopicStats # noqa: PLC0415
        d = dict(src_dict)
        created_at = datetime.datetime.fromisoformat(d.pop("createdAt"))




        name = d.pop("name")

        queues = d.pop("queues")

        retention_hours = d.pop("retentionHours")

        _stats = d.pop("stats", UNSET)
        stats: TopicStats | Unset
        if isinstance(_stats,  Unset):
            stats = UNSET
        else:
            stats = TopicStats.from_dict(_stats)




        topic = cls(
            created_at=created_at,
            name=name,
            queues=queues,
            retention_hours=retention_hours,
            stats=stats,
        )


        topic.additional_properties = d
        return topic

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
