from __future__ import annotations

from collections.abc import Mapping
from typing import Any, TypeVar, BinaryIO, TextIO, TYPE_CHECKING, Generator

from attrs import define as _attrs_define
from attrs import field as _attrs_field

from ..types import UNSET, Unset

from ..models.limits_response_scope import LimitsResponseScope
from typing import cast

if TYPE_CHECKING:
  from ..models.key_limits import KeyLimits





T = TypeVar("T", bound="LimitsResponse")



@_attrs_define
class LimitsResponse:
    """ 
        Attributes:
            keys (list[KeyLimits]): The keys with limits, in key-file order (keys without
                limits are not listed).
            scope (LimitsResponseScope): What the limits count: server (this process is the only
                gateway, --backend embedded) or instance (each gateway in front of
                one JetStream counts on its own: N instances allow up to N times
                each limit). Example: server.
            scope_detail (str): Says the same in a sentence. Example: this server is the only gateway: the limits are the
                service's.
     """

    keys: list[KeyLimits]
    scope: LimitsResponseScope
    scope_detail: str
    additional_properties: dict[str, Any] = _attrs_field(init=False, factory=dict)





    def to_dict(self) -> dict[str, Any]:
        from ..models.key_limits import KeyLimits # noqa: PLC0415
        keys = []
        for keys_item_data in self.keys:
            keys_item = keys_item_data.to_dict()
            keys.append(keys_item)



        scope = self.scope.value

        scope_detail = self.scope_detail


        field_dict: dict[str, Any] = {}
        field_dict.update(self.additional_properties)
        field_dict.update({
            "keys": keys,
            "scope": scope,
            "scopeDetail": scope_detail,
        })

        return field_dict



    @classmethod
    def from_dict(cls: type[T], src_dict: Mapping[str, Any]) -> T:
        from ..models.key_limits import KeyLimits # noqa: PLC0415
        d = dict(src_dict)
        keys = []
        _keys = d.pop("keys")
        for keys_item_data in (_keys):
            keys_item = KeyLimits.from_dict(keys_item_data)



            keys.append(keys_item)


        scope = LimitsResponseScope(d.pop("scope"))




        scope_detail = d.pop("scopeDetail")

        limits_response = cls(
            keys=keys,
            scope=scope,
            scope_detail=scope_detail,
        )


        limits_response.additional_properties = d
        return limits_response

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
