from __future__ import annotations

from collections.abc import Mapping
from typing import Any, TypeVar, BinaryIO, TextIO, TYPE_CHECKING, Generator

from attrs import define as _attrs_define
from attrs import field as _attrs_field

from ..types import UNSET, Unset

from ..types import UNSET, Unset
from typing import cast

if TYPE_CHECKING:
  from ..models.group_limit import GroupLimit
  from ..models.limit_policy import LimitPolicy
  from ..models.topic_limit import TopicLimit





T = TypeVar("T", bound="KeyLimits")



@_attrs_define
class KeyLimits:
    """ 
        Attributes:
            max_delay_seconds (float): How long a request over a rate limit is held
                for its tokens before it is refused (0: refused at once). Example: 0.5.
            name (str): The key's name (never its secret). Example: orders-writer.
            policies (list[LimitPolicy]): The limits as the RateLimit headers name them, with
                what each has left now.
            concurrent_receives (int | Unset): Caps the receive calls (long polls) in flight. Example: 8.
            deliveries_burst (int | Unset): The deliveries bucket's size. Example: 500.
            deliveries_per_second (float | Unset): Limits messages handed out by receive. Example: 500.
            groups (list[GroupLimit] | Unset): The limits shared by the groups matching each pattern.
            publish_burst (int | Unset): The publish bucket's size. Example: 100.
            publish_bytes_burst (int | Unset): The bytes bucket's size. Example: 1048576.
            publish_bytes_per_second (float | Unset): Limits published body bytes. Example: 1048576.
            publish_per_second (float | Unset): Limits published messages (a batch counts each). Example: 100.
            topics (list[TopicLimit] | Unset): The limits shared by the topics matching each pattern.
     """

    max_delay_seconds: float
    name: str
    policies: list[LimitPolicy]
    concurrent_receives: int | Unset = UNSET
    deliveries_burst: int | Unset = UNSET
    deliveries_per_second: float | Unset = UNSET
    groups: list[GroupLimit] | Unset = UNSET
    publish_burst: int | Unset = UNSET
    publish_bytes_burst: int | Unset = UNSET
    publish_bytes_per_second: float | Unset = UNSET
    publish_per_second: float | Unset = UNSET
    topics: list[TopicLimit] | Unset = UNSET
    additional_properties: dict[str, Any] = _attrs_field(init=False, factory=dict)





    def to_dict(self) -> dict[str, Any]:
        from ..models.group_limit import GroupLimit # noqa: PLC0415
        from ..models.limit_policy import LimitPolicy # noqa: PLC0415
        from ..models.topic_limit import TopicLimit # noqa: PLC0415
        max_delay_seconds = self.max_delay_seconds

        name = self.name

        policies = []
        for policies_item_data in self.policies:
            policies_item = policies_item_data.to_dict()
            policies.append(policies_item)



        concurrent_receives = self.concurrent_receives

        deliveries_burst = self.deliveries_burst

        deliveries_per_second = self.deliveries_per_second

        groups: list[dict[str, Any]] | Unset = UNSET
        if not isinstance(self.groups, Unset):
            groups = []
            for groups_item_data in self.groups:
                groups_item = groups_item_data.to_dict()
                groups.append(groups_item)



        publish_burst = self.publish_burst

        publish_bytes_burst = self.publish_bytes_burst

        publish_bytes_per_second = self.publish_bytes_per_second

        publish_per_second = self.publish_per_second

        topics: list[dict[str, Any]] | Unset = UNSET
        if not isinstance(self.topics, Unset):
            topics = []
            for topics_item_data in self.topics:
                topics_item = topics_item_data.to_dict()
                topics.append(topics_item)




        field_dict: dict[str, Any] = {}
        field_dict.update(self.additional_properties)
        field_dict.update({
            "maxDelaySeconds": max_delay_seconds,
            "name": name,
            "policies": policies,
        })
        if concurrent_receives is not UNSET:
            field_dict["concurrentReceives"] = concurrent_receives
        if deliveries_burst is not UNSET:
            field_dict["deliveriesBurst"] = deliveries_burst
        if deliveries_per_second is not UNSET:
            field_dict["deliveriesPerSecond"] = deliveries_per_second
        if groups is not UNSET:
            field_dict["groups"] = groups
        if publish_burst is not UNSET:
            field_dict["publishBurst"] = publish_burst
        if publish_bytes_burst is not UNSET:
            field_dict["publishBytesBurst"] = publish_bytes_burst
        if publish_bytes_per_second is not UNSET:
            field_dict["publishBytesPerSecond"] = publish_bytes_per_second
        if publish_per_second is not UNSET:
            field_dict["publishPerSecond"] = publish_per_second
        if topics is not UNSET:
            field_dict["topics"] = topics

        return field_dict



    @classmethod
    def from_dict(cls: type[T], src_dict: Mapping[str, Any]) -> T:
        from ..models.group_limit import GroupLimit # noqa: PLC0415
        from ..models.limit_policy import LimitPolicy # noqa: PLC0415
        from ..models.topic_limit import TopicLimit # noqa: PLC0415
        d = dict(src_dict)
        max_delay_seconds = d.pop("maxDelaySeconds")

        name = d.pop("name")

        policies = []
        _policies = d.pop("policies")
        for policies_item_data in (_policies):
            policies_item = LimitPolicy.from_dict(policies_item_data)



            policies.append(policies_item)


        concurrent_receives = d.pop("concurrentReceives", UNSET)

        deliveries_burst = d.pop("deliveriesBurst", UNSET)

        deliveries_per_second = d.pop("deliveriesPerSecond", UNSET)

        _groups = d.pop("groups", UNSET)
        groups: list[GroupLimit] | Unset = UNSET
        if _groups is not UNSET:
            groups = []
            for groups_item_data in _groups:
                groups_item = GroupLimit.from_dict(groups_item_data)



                groups.append(groups_item)


        publish_burst = d.pop("publishBurst", UNSET)

        publish_bytes_burst = d.pop("publishBytesBurst", UNSET)

        publish_bytes_per_second = d.pop("publishBytesPerSecond", UNSET)

        publish_per_second = d.pop("publishPerSecond", UNSET)

        _topics = d.pop("topics", UNSET)
        topics: list[TopicLimit] | Unset = UNSET
        if _topics is not UNSET:
            topics = []
            for topics_item_data in _topics:
                topics_item = TopicLimit.from_dict(topics_item_data)



                topics.append(topics_item)


        key_limits = cls(
            max_delay_seconds=max_delay_seconds,
            name=name,
            policies=policies,
            concurrent_receives=concurrent_receives,
            deliveries_burst=deliveries_burst,
            deliveries_per_second=deliveries_per_second,
            groups=groups,
            publish_burst=publish_burst,
            publish_bytes_burst=publish_bytes_burst,
            publish_bytes_per_second=publish_bytes_per_second,
            publish_per_second=publish_per_second,
            topics=topics,
        )


        key_limits.additional_properties = d
        return key_limits

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
