from __future__ import annotations

from collections.abc import Mapping
from typing import Any, TypeVar, BinaryIO, TextIO, TYPE_CHECKING, Generator

from attrs import define as _attrs_define
from attrs import field as _attrs_field

from ..types import UNSET, Unset

from ..models.blocked_key_state import BlockedKeyState
from ..types import UNSET, Unset
from typing import cast
import datetime






T = TypeVar("T", bound="BlockedKey")



@_attrs_define
class BlockedKey:
    """ 
        Attributes:
            attempts (int): Failed deliveries of the head (BLOCKED) or messages parked (PARKED). Example: 3.
            queue_id (int):  Example: 0.
            sharding_key (str): The head message's ordering key (RocketMQ blocks the
                whole queue behind it). Example: customer-9.
            since (datetime.datetime): The head's first failure in a row, or when the key was parked.
            state (BlockedKeyState): BLOCKED or PARKED in the list; an action answers the entry's
                new state (SKIPPED, PARKED or RESUMED). Example: BLOCKED.
            topic (str):  Example: orders.
            last_reason (str | Unset): The last nack reason, when one was given.
            message_id (str | Unset): The failed head (BLOCKED) or the first parked message. Example:
                01J9Z7K3V1W2X3Y4Z5A6B7C8D9.
     """

    attempts: int
    queue_id: int
    sharding_key: str
    since: datetime.datetime
    state: BlockedKeyState
    topic: str
    last_reason: str | Unset = UNSET
    message_id: str | Unset = UNSET
    additional_properties: dict[str, Any] = _attrs_field(init=False, factory=dict)





    def to_dict(self) -> dict[str, Any]:
        attempts = self.attempts

        queue_id = self.queue_id

        sharding_key = self.sharding_key

        since = self.since.isoformat()

        state = self.state.value

        topic = self.topic

        last_reason = self.last_reason

        message_id = self.message_id


        field_dict: dict[str, Any] = {}
        field_dict.update(self.additional_properties)
        field_dict.update({
            "attempts": attempts,
            "queueId": queue_id,
            "shardingKey": sharding_key,
            "since": since,
            "state": state,
            "topic": topic,
        })
        if last_reason is not UNSET:
            field_dict["lastReason"] = last_reason
        if message_id is not UNSET:
            field_dict["messageId"] = message_id

        return field_dict



    @classmethod
    def from_dict(cls: type[T], src_dict: Mapping[str, Any]) -> T:
        d = dict(src_dict)
        attempts = d.pop("attempts")

        queue_id = d.pop("queueId")

        sharding_key = d.pop("shardingKey")

        since = datetime.datetime.fromisoformat(d.pop("since"))




        state = BlockedKeyState(d.pop("state"))




        topic = d.pop("topic")

        last_reason = d.pop("lastReason", UNSET)

        message_id = d.pop("messageId", UNSET)

        blocked_key = cls(
            attempts=attempts,
            queue_id=queue_id,
            sharding_key=sharding_key,
            since=since,
            state=state,
            topic=topic,
            last_reason=last_reason,
            message_id=message_id,
        )


        blocked_key.additional_properties = d
        return blocked_key

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
