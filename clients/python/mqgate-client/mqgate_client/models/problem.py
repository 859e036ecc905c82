from __future__ import annotations

from collections.abc import Mapping
from typing import Any, TypeVar, BinaryIO, TextIO, TYPE_CHECKING, Generator

from attrs import define as _attrs_define
from attrs import field as _attrs_field

from ..types import UNSET, Unset

from ..types import UNSET, Unset
from typing import cast

if TYPE_CHECKING:
  from ..models.field_problem import FieldProblem





T = TypeVar("T", bound="Problem")



@_attrs_define
class Problem:
    """ 
        Attributes:
            status (int): The HTTP status code of this answer. Example: 400.
            title (str): A short, fixed summary of the kind of problem. Example: Invalid request.
            type_ (str): A URI naming the kind of problem (urn:mqgate:problem:<code>). Example: urn:mqgate:problem:invalid.
            detail (str | Unset): Explains this occurrence of the problem. Example: the request has invalid fields.
            errors (list[FieldProblem] | Unset): Lists the offending fields of a 400 answer.
            instance (str | Unset): The request path. Example: /v1/topics/orders/messages.
            request_id (str | Unset): Matches the X-Request-Id header and the server's log line. Example: 7f3c9a1e2b4d5f60.
            violated_policies (list[str] | Unset): Names the API-key limits a 429 (or 413) answer
                exceeded, as in its RateLimit-Policy header (docs/quotas.md). Example: ['pub'].
     """

    status: int
    title: str
    type_: str
    detail: str | Unset = UNSET
    errors: list[FieldProblem] | Unset = UNSET
    instance: str | Unset = UNSET
    request_id: str | Unset = UNSET
    violated_policies: list[str] | Unset = UNSET
    additional_properties: dict[str, Any] = _attrs_field(init=False, factory=dict)





    def to_dict(self) -> dict[str, Any]:
        from ..models.field_problem import FieldProblem # noqa: PLC0415
        status = self.status

        title = self.title

        type_ = self.type_

        detail = self.detail

        errors: list[dict[str, Any]] | Unset = UNSET
        if not isinstance(self.errors, Unset):
            errors = []
            for errors_item_data in self.errors:
                errors_item = errors_item_data.to_dict()
                errors.append(errors_item)



        instance = self.instance

        request_id = self.request_id

        violated_policies: list[str] | Unset = UNSET
        if not isinstance(self.violated_policies, Unset):
            violated_policies = self.violated_policies




        field_dict: dict[str, Any] = {}
        field_dict.update(self.additional_properties)
        field_dict.update({
            "status": status,
            "title": title,
            "type": type_,
        })
        if detail is not UNSET:
            field_dict["detail"] = detail
        if errors is not UNSET:
            field_dict["errors"] = errors
        if instance is not UNSET:
            field_dict["instance"] = instance
        if request_id is not UNSET:
            field_dict["requestId"] = request_id
        if violated_policies is not UNSET:
            field_dict["violatedPolicies"] = violated_policies

        return field_dict



    @classmethod
    def from_dict(cls: type[T], src_dict: Mapping[str, Any]) -> T:
        from ..models.field_problem import FieldProblem # noqa: PLC0415
        d = dict(src_dict)
        status = d.pop("status")

        title = d.pop("title")

        type_ = d.pop("type")

        detail = d.pop("detail", UNSET)

        _errors = d.pop("errors", UNSET)
        errors: list[FieldProblem] | Unset = UNSET
        if _errors is not UNSET:
            errors = []
            for errors_item_data in _errors:
                errors_item = FieldProblem.from_dict(errors_item_data)



                errors.append(errors_item)


        instance = d.pop("instance", UNSET)

        request_id = d.pop("requestId", UNSET)

        violated_policies = cast(list[str], d.pop("violatedPolicies", UNSET))


        problem = cls(
            status=status,
            title=title,
            type_=type_,
            detail=detail,
            errors=errors,
            instance=instance,
            request_id=request_id,
            violated_policies=violated_policies,
        )


        problem.additional_properties = d
        return problem

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
