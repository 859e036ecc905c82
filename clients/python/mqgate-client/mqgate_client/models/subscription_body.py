from __future__ import annotations

from collections.abc import Mapping
from typing import Any, TypeVar, BinaryIO, TextIO, TYPE_CHECKING, Generator

from attrs import define as _attrs_define
from attrs import field as _attrs_field

from ..types import UNSET, Unset

from ..models.subscription_body_filter_type import SubscriptionBodyFilterType
from ..types import UNSET, Unset






T = TypeVar("T", bound="SubscriptionBody")



@_attrs_define
class SubscriptionBody:
    """ 
        Attributes:
            topic (str): A user topic. Example: orders.
            filter_ (str | Unset): `*` (default) or tags joined by `||`; with filterType
                SQL92 an expression over properties and TAGS, e.g.
                `a > 5 AND region IN ('eu','us') AND b IS NOT NULL` (a bad one is a
                400 naming its position). Example: created || paid.
            filter_type (SubscriptionBodyFilterType | Unset): TAG (default) or SQL92. Example: TAG.
     """

    topic: str
    filter_: str | Unset = UNSET
    filter_type: SubscriptionBodyFilterType | Unset = UNSET





    def to_dict(self) -> dict[str, Any]:
        topic = self.topic

        filter_ = self.filter_

        filter_type: str | Unset = UNSET
        if not isinstance(self.filter_type, Unset):
            filter_type = self.filter_type.value



        field_dict: dict[str, Any] = {}

        field_dict.update({
            "topic": topic,
        })
        if filter_ is not UNSET:
            field_dict["filter"] = filter_
        if filter_type is not UNSET:
            field_dict["filterType"] = filter_type

        return field_dict



    @classmethod
    def from_dict(cls: type[T], src_dict: Mapping[str, Any]) -> T:
        d = dict(src_dict)
        topic = d.pop("topic")

        filter_ = d.pop("filter", UNSET)

        _filter_type = d.pop("filterType", UNSET)
        filter_type: SubscriptionBodyFilterType | Unset
        if isinstance(_filter_type,  Unset):
            filter_type = UNSET
        else:
            filter_type = SubscriptionBodyFilterType(_filter_type)




        subscription_body = cls(
            topic=topic,
            filter_=filter_,
            filter_type=filter_type,
        )

        return subscription_body

