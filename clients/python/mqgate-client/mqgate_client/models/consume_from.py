from __future__ import annotations

from collections.abc import Mapping
from typing import Any, TypeVar, BinaryIO, TextIO, TYPE_CHECKING, Generator

from attrs import define as _attrs_define
from attrs import field as _attrs_field

from ..types import UNSET, Unset

from ..models.consume_from_position import ConsumeFromPosition
from ..types import UNSET, Unset
from typing import cast
import datetime






T = TypeVar("T", bound="ConsumeFrom")



@_attrs_define
class ConsumeFrom:
    """ 
        Attributes:
            position (ConsumeFromPosition | Unset): LAST_OFFSET (default), FIRST_OFFSET or TIMESTAMP. Example: LAST_OFFSET.
            timestamp (datetime.datetime | None | Unset): Required with TIMESTAMP (RFC 3339); null or absent
                otherwise.
     """

    position: ConsumeFromPosition | Unset = UNSET
    timestamp: datetime.datetime | None | Unset = UNSET





    def to_dict(self) -> dict[str, Any]:
        position: str | Unset = UNSET
        if not isinstance(self.position, Unset):
            position = self.position.value


        timestamp: None | str | Unset
        if isinstance(self.timestamp, Unset):
            timestamp = UNSET
        elif isinstance(self.timestamp, datetime.datetime):
            timestamp = self.timestamp.isoformat()
        else:
            timestamp = self.timestamp


        field_dict: dict[str, Any] = {}

        field_dict.update({
        })
        if position is not UNSET:
            field_dict["position"] = position
        if timestamp is not UNSET:
            field_dict["timestamp"] = timestamp

        return field_dict



    @classmethod
    def from_dict(cls: type[T], src_dict: Mapping[str, Any]) -> T:
        d = dict(src_dict)
        _position = d.pop("position", UNSET)
        position: ConsumeFromPosition | Unset
        if isinstance(_position,  Unset):
            position = UNSET
        else:
            position = ConsumeFromPosition(_position)




        def _parse_timestamp(data: object) -> datetime.datetime | None | Unset:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            try:
                if not isinstance(data, str):
                    raise TypeError()
                timestamp_type_0 = datetime.datetime.fromisoformat(data)



                return timestamp_type_0
            except (TypeError, ValueError, AttributeError, KeyError):
                pass
            return cast(datetime.datetime | None | Unset, data)

        timestamp = _parse_timestamp(d.pop("timestamp", UNSET))


        consume_from = cls(
            position=position,
            timestamp=timestamp,
        )

        return consume_from

