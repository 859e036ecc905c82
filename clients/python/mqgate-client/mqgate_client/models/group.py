from __future__ import annotations

from collections.abc import Mapping
from typing import Any, TypeVar, BinaryIO, TextIO, TYPE_CHECKING, Generator

from attrs import define as _attrs_define
from attrs import field as _attrs_field

from ..types import UNSET, Unset

from ..models.group_consume_mode import GroupConsumeMode
from ..models.group_message_model import GroupMessageModel
from ..types import UNSET, Unset
from typing import cast
import datetime

if TYPE_CHECKING:
  from ..models.consume_from_view import ConsumeFromView
  from ..models.group_status import GroupStatus
  from ..models.push_view import PushView
  from ..models.subscription_body import SubscriptionBody





T = TypeVar("T", bound="Group")



@_attrs_define
class Group:
    """ 
        Attributes:
            consume_from (ConsumeFromView):
            consume_mode (GroupConsumeMode):  Example: CONCURRENTLY.
            created_at (datetime.datetime):
            invisible_seconds (int):  Example: 60.
            max_reconsume_times (int):  Example: 16.
            message_model (GroupMessageModel):  Example: CLUSTERING.
            name (str):  Example: orders-billing.
            paused (bool): The group hands out nothing (receives answer empty with
                reason PAUSED, a push group's webhook gets no request) until
                POST /v1/groups/{group}/resume. Set by POST …/pause, kept by PUT. Example: False.
            subscriptions (list[SubscriptionBody]):
            updated_at (datetime.datetime):
            paused_at (datetime.datetime | Unset): When the group was paused (absent when not paused).
            push (PushView | Unset):
            status (GroupStatus | Unset):
     """

    consume_from: ConsumeFromView
    consume_mode: GroupConsumeMode
    created_at: datetime.datetime
    invisible_seconds: int
    max_reconsume_times: int
    message_model: GroupMessageModel
    name: str
    paused: bool
    subscriptions: list[SubscriptionBody]
    updated_at: datetime.datetime
    paused_at: datetime.datetime | Unset = UNSET
    push: PushView | Unset = UNSET
    status: GroupStatus | Unset = UNSET
    additional_properties: dict[str, Any] = _attrs_field(init=False, factory=dict)





    def to_dict(self) -> dict[str, Any]:
        from ..models.consume_from_view import ConsumeFromView # noqa: PLC0415
        from ..models.group_status import GroupStatus # noqa: PLC0415
        from ..models.push_view import PushView # noqa: PLC0415
        from ..models.subscription_body import SubscriptionBody # noqa: PLC0415
        consume_from = self.consume_from.to_dict()

        consume_mode = self.consume_mode.value

        created_at = self.created_at.isoformat()

        invisible_seconds = self.invisible_seconds

        max_reconsume_times = self.max_reconsume_times

        message_model = self.message_model.value

        name = self.name

        paused = self.paused

        subscriptions = []
        for subscriptions_item_data in self.subscriptions:
            subscriptions_item = subscriptions_item_data.to_dict()
            subscriptions.append(subscriptions_item)



        updated_at = self.updated_at.isoformat()

        paused_at: str | Unset = UNSET
        if not isinstance(self.paused_at, Unset):
            paused_at = self.paused_at.isoformat()

        push: dict[str, Any] | Unset = UNSET
        if not isinstance(self.push, Unset):
            push = self.push.to_dict()

        status: dict[str, Any] | Unset = UNSET
        if not isinstance(self.status, Unset):
            status = self.status.to_dict()


        field_dict: dict[str, Any] = {}
        field_dict.update(self.additional_properties)
        field_dict.update({
            "consumeFrom": consume_from,
            "consumeMode": consume_mode,
            "createdAt": created_at,
            "invisibleSeconds": invisible_seconds,
            "maxReconsumeTimes": max_reconsume_times,
            "messageModel": message_model,
            "name": name,
            "paused": paused,
            "subscriptions": subscriptions,
            "updatedAt": updated_at,
        })
        if paused_at is not UNSET:
            field_dict["pausedAt"] = paused_at
        if push is not UNSET:
            field_dict["push"] = push
        if status is not UNSET:
            field_dict["status"] = status

        return field_dict



    @classmethod
    def from_dict(cls: type[T], src_dict: Mapping[str, Any]) -> T:
        from ..models.consume_from_view import ConsumeFromView # noqa: PLC0415
        from ..models.group_status import GroupStatus # noqa: PLC0415
        from ..models.push_view import PushView # noqa: PLC0415
        from ..models.subscription_body import SubscriptionBody # noqa: PLC0415
        d = dict(src_dict)
        consume_from = ConsumeFromView.from_dict(d.pop("consumeFrom"))




        consume_mode = GroupConsumeMode(d.pop("consumeMode"))




        created_at = datetime.datetime.fromisoformat(d.pop("createdAt"))




        invisible_seconds = d.pop("invisibleSeconds")

        max_reconsume_times = d.pop("maxReconsumeTimes")

        message_model = GroupMessageModel(d.pop("messageModel"))




        name = d.pop("name")

        paused = d.pop("paused")

        subscriptions = []
        _subscriptions = d.pop("subscriptions")
        for subscriptions_item_data in (_subscriptions):
            subscriptions_item = SubscriptionBody.from_dict(subscriptions_item_data)



            subscriptions.append(subscriptions_item)


        updated_at = datetime.datetime.fromisoformat(d.pop("updatedAt"))




        _paused_at = d.pop("pausedAt", UNSET)
        paused_at: datetime.datetime | Unset
        if isinstance(_paused_at,  Unset):
            paused_at = UNSET
        else:
            paused_at = datetime.datetime.fromisoformat(_paused_at)




        _push = d.pop("push", UNSET)
        push: PushView | Unset
        if isinstance(_push,  Unset):
            push = UNSET
        else:
            push = PushView.from_dict(_push)




        _status = d.pop("status", UNSET)
        status: GroupStatus | Unset
        if isinstance(_status,  Unset):
            status = UNSET
        else:
            status = GroupStatus.from_dict(_status)




        group = cls(
            consume_from=consume_from,
            consume_mode=consume_mode,
            created_at=created_at,
            invisible_seconds=invisible_seconds,
            max_reconsume_times=max_reconsume_times,
            message_model=message_model,
            name=name,
            paused=paused,
            subscriptions=subscriptions,
            updated_at=updated_at,
            paused_at=paused_at,
            push=push,
            status=status,
        )


        group.additional_properties = d
        return group

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
