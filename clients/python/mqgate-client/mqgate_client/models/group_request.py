from __future__ import annotations

from collections.abc import Mapping
from typing import Any, TypeVar, BinaryIO, TextIO, TYPE_CHECKING, Generator

from attrs import define as _attrs_define
from attrs import field as _attrs_field

from ..types import UNSET, Unset

from ..models.group_request_consume_mode import GroupRequestConsumeMode
from ..models.group_request_message_model import GroupRequestMessageModel
from ..types import UNSET, Unset
from typing import cast

if TYPE_CHECKING:
  from ..models.consume_from import ConsumeFrom
  from ..models.push_body import PushBody
  from ..models.subscription_body import SubscriptionBody





T = TypeVar("T", bound="GroupRequest")



@_attrs_define
class GroupRequest:
    """ 
        Attributes:
            subscriptions (list[SubscriptionBody]): The topics the group consumes, each with a tag filter.
            consume_from (ConsumeFrom | Unset):
            consume_mode (GroupRequestConsumeMode | Unset): CONCURRENTLY (default) or ORDERLY (per queue, in order).
                Example: CONCURRENTLY.
            invisible_seconds (int | Unset): The default lease of a received message (default 60). Example: 60.
            max_reconsume_times (int | Unset): How many failures send a message to the
                dead-letter topic (default 16). Example: 16.
            message_model (GroupRequestMessageModel | Unset): CLUSTERING (each message to one consumer; default) or
                BROADCASTING (every consumerId gets every message). Example: CLUSTERING.
            push (PushBody | Unset):
     """

    subscriptions: list[SubscriptionBody]
    consume_from: ConsumeFrom | Unset = UNSET
    consume_mode: GroupRequestConsumeMode | Unset = UNSET
    invisible_seconds: int | Unset = UNSET
    max_reconsume_times: int | Unset = UNSET
    message_model: GroupRequestMessageModel | Unset = UNSET
    push: PushBody | Unset = UNSET





    def to_dict(self) -> dict[str, Any]:
        from ..models.consume_from import ConsumeFrom # noqa: PLC0415
        from ..models.push_body import PushBody # noqa: PLC0415
        from ..models.subscription_body import SubscriptionBody # noqa: PLC0415
        subscriptions = []
        for subscriptions_item_data in self.subscriptions:
            subscriptions_item = subscriptions_item_data.to_dict()
            subscriptions.append(subscriptions_item)



        consume_from: dict[str, Any] | Unset = UNSET
        if not isinstance(self.consume_from, Unset):
            consume_from = self.consume_from.to_dict()

        consume_mode: str | Unset = UNSET
        if not isinstance(self.consume_mode, Unset):
            consume_mode = self.consume_mode.value


        invisible_seconds = self.invisible_seconds

        max_reconsume_times = self.max_reconsume_times

        message_model: str | Unset = UNSET
        if not isinstance(self.message_model, Unset):
            message_model = self.message_model.value


        push: dict[str, Any] | Unset = UNSET
        if not isinstance(self.push, Unset):
            push = self.push.to_dict()


        field_dict: dict[str, Any] = {}

        field_dict.update({
            "subscriptions": subscriptions,
        })
        if consume_from is not UNSET:
            field_dict["consumeFrom"] = consume_from
        if consume_mode is not UNSET:
            field_dict["consumeMode"] = consume_mode
        if invisible_seconds is not UNSET:
            field_dict["invisibleSeconds"] = invisible_seconds
        if max_reconsume_times is not UNSET:
            field_dict["maxReconsumeTimes"] = max_reconsume_times
        if message_model is not UNSET:
            field_dict["messageModel"] = message_model
        if push is not UNSET:
            field_dict["push"] = push

        return field_dict



    @classmethod
    def from_dict(cls: type[T], src_dict: Mapping[str, Any]) -> T:
        from ..models.consume_from import ConsumeFrom # noqa: PLC0415
        from ..models.push_body import PushBody # noqa: PLC0415
        from ..models.subscription_body import SubscriptionBody # noqa: PLC0415
        d = dict(src_dict)
        subscriptions = []
        _subscriptions = d.pop("subscriptions")
        for subscriptions_item_data in (_subscriptions):
            subscriptions_item = SubscriptionBody.from_dict(subscriptions_item_data)



            subscriptions.append(subscriptions_item)


        _consume_from = d.pop("consumeFrom", UNSET)
        consume_from: ConsumeFrom | Unset
        if isinstance(_consume_from,  Unset):
            consume_from = UNSET
        else:
            consume_from = ConsumeFrom.from_dict(_consume_from)




        _consume_mode = d.pop("consumeMode", UNSET)
        consume_mode: GroupRequestConsumeMode | Unset
        if isinstance(_consume_mode,  Unset):
            consume_mode = UNSET
        else:
            consume_mode = GroupRequestConsumeMode(_consume_mode)




        invisible_seconds = d.pop("invisibleSeconds", UNSET)

        max_reconsume_times = d.pop("maxReconsumeTimes", UNSET)

        _message_model = d.pop("messageModel", UNSET)
        message_model: GroupRequestMessageModel | Unset
        if isinstance(_message_model,  Unset):
            message_model = UNSET
        else:
            message_model = GroupRequestMessageModel(_message_model)




        _push = d.pop("push", UNSET)
        push: PushBody | Unset
        if isinstance(_push,  Unset):
            push = UNSET
        else:
            push = PushBody.from_dict(_push)




        group_request = cls(
            subscriptions=subscriptions,
            consume_from=consume_from,
            consume_mode=consume_mode,
            invisible_seconds=invisible_seconds,
            max_reconsume_times=max_reconsume_times,
            message_model=message_model,
            push=push,
        )

        return group_request

