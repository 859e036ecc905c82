from __future__ import annotations

from collections.abc import Mapping
from typing import Any, TypeVar, BinaryIO, TextIO, TYPE_CHECKING, Generator

from attrs import define as _attrs_define
from attrs import field as _attrs_field

from ..types import UNSET, Unset

from ..types import UNSET, Unset
from typing import cast

if TYPE_CHECKING:
  from ..models.empty_receive import EmptyReceive
  from ..models.push_status import PushStatus





T = TypeVar("T", bound="GroupStatus")



@_attrs_define
class GroupStatus:
    """ 
        Attributes:
            buffered (int): Counts messages pulled and waiting for a receive. Example: 12.
            consumers (list[str]): The live client ids (the gateway for CLUSTERING, each
                consumerId for BROADCASTING).
            dlq_depth (int): Counts the group's dead letters not yet redriven. Example: 0.
            in_flight (int): Counts messages received and not yet acked, nacked or expired. Example: 3.
            queues_owned (int): Counts the queues this gateway's clients own. Example: 8.
            retry_depth (int): The lag of the group's retry queue (%RETRY%group). Example: 0.
            waiting (int): Counts long polls parked on the group. Example: 2.
            empty (EmptyReceive | Unset):
            push (PushStatus | Unset):
     """

    buffered: int
    consumers: list[str]
    dlq_depth: int
    in_flight: int
    queues_owned: int
    retry_depth: int
    waiting: int
    empty: EmptyReceive | Unset = UNSET
    push: PushStatus | Unset = UNSET
    additional_properties: dict[str, Any] = _attrs_field(init=False, factory=dict)





    def to_dict(self) -> dict[str, Any]:
        from ..models.empty_receive import EmptyReceive # noqa: PLC0415
        from ..models.push_status import PushStatus # noqa: PLC0415
        buffered = self.buffered

        consumers = self.consumers



        dlq_depth = self.dlq_depth

        in_flight = self.in_flight

        queues_owned = self.queues_owned

        retry_depth = self.retry_depth

        waiting = self.waiting

        empty: dict[str, Any] | Unset = UNSET
        if not isinstance(self.empty, Unset):
            empty = self.empty.to_dict()

        push: dict[str, Any] | Unset = UNSET
        if not isinstance(self.push, Unset):
            push = self.push.to_dict()


        field_dict: dict[str, Any] = {}
        field_dict.update(self.additional_properties)
        field_dict.update({
            "buffered": buffered,
            "consumers": consumers,
            "dlqDepth": dlq_depth,
            "inFlight": in_flight,
            "queuesOwned": queues_owned,
            "retryDepth": retry_depth,
            "waiting": waiting,
        })
        if empty is not UNSET:
            field_dict["empty"] = empty
        if push is not UNSET:
            field_dict["push"] = push

        return field_dict



    @classmethod
    def from_dict(cls: type[T], src_dict: Mapping[str, Any]) -> T:
        from ..models.empty_receive import EmptyReceive # noqa: PLC0415
        from ..models.push_status import PushStatus # noqa: PLC0415
        d = dict(src_dict)
        buffered = d.pop("buffered")

        consumers = cast(list[str], d.pop("consumers"))


        dlq_depth = d.pop("dlqDepth")

        in_flight = d.pop("inFlight")

        queues_owned = d.pop("queuesOwned")

        retry_depth = d.pop("retryDepth")

        waiting = d.pop("waiting")

        _empty = d.pop("empty", UNSET)
        empty: EmptyReceive | Unset
        if isinstance(_empty,  Unset):
            empty = UNSET
        else:
            empty = EmptyReceive.from_dict(_empty)




        _push = d.pop("push", UNSET)
        push: PushStatus | Unset
        if isinstance(_push,  Unset):
            push = UNSET
        else:
            push = PushStatus.from_dict(_push)




        group_status = cls(
            buffered=buffered,
            consumers=consumers,
            dlq_depth=dlq_depth,
            in_flight=in_flight,
            queues_owned=queues_owned,
            retry_depth=retry_depth,
            waiting=waiting,
            empty=empty,
            push=push,
        )


        group_status.additional_properties = d
        return group_status

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
