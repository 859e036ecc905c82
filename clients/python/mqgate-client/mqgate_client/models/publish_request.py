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
  from ..models.publish_request_properties import PublishRequestProperties





T = TypeVar("T", bound="PublishRequest")



@_attrs_define
class PublishRequest:
    """ A message of a batch. Exactly one of body, bodyBase64. At most one of delayLevel, delaySeconds, deliverAt. A
    deduplicationId makes the entry idempotent.

        Attributes:
            body (str | Unset): A UTF-8 text body, not empty; it is returned as `body`. Example: order 17 created.
            body_base_64 (str | Unset): A binary body in standard base64; it is returned as
                `bodyBase64`. At most 4 MiB once decoded.
            deduplication_id (str | Unset): Makes a batch entry idempotent (1..128 printable
                ASCII characters): within the server's dedup window a repeat on the
                same topic with the same id stores nothing and answers the original
                result; with a different message it answers 422. Batch entries only:
                a single publish takes the Idempotency-Key header instead. Example: order-17-created.
            delay_level (int | Unset): Delays delivery by a RocketMQ delay level of the
                server's --delay-levels, by default 1..18 = 1s 5s 10s 30s 1m 2m 3m
                4m 5m 6m 7m 8m 9m 10m 20m 30m 1h 2h; a level above the last means
                the last. Example: 3.
            delay_seconds (int | Unset): Delays delivery by this many seconds (at most 40 days).
            deliver_at (datetime.datetime | Unset): Delivers the message at this time (RFC 3339), at most 40
                days ahead.
            keys (list[str] | Unset): Indexed for GET /v1/topics/{topic}/messages?key=K. Example: ['order-17'].
            properties (PublishRequestProperties | Unset): User properties, returned as given. Property names: not empty, at
                most 128 characters.
            sharding_key (str | Unset): Picks the queue by hash: messages with the same key go
                to the same queue, in order. Example: customer-9.
            tags (str | Unset): One tag that subscription filters match (`TagA || TagB`). Example: created.
            traceparent (str | Unset): The message's W3C traceparent (Trace Context level
                1, version 00): stored with the message, returned on receive and
                sent as the traceparent header of a webhook push. A single publish
                may send the traceparent header instead (not both); a malformed
                value here answers 400 (a malformed header is ignored, as W3C says). Example:
                00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01.
            tracestate (str | Unset): The W3C tracestate that goes with traceparent (at
                most 512 characters; only with traceparent). Example: vendor=value.
     """

    body: str | Unset = UNSET
    body_base_64: str | Unset = UNSET
    deduplication_id: str | Unset = UNSET
    delay_level: int | Unset = UNSET
    delay_seconds: int | Unset = UNSET
    deliver_at: datetime.datetime | Unset = UNSET
    keys: list[str] | Unset = UNSET
    properties: PublishRequestProperties | Unset = UNSET
    sharding_key: str | Unset = UNSET
    tags: str | Unset = UNSET
    traceparent: str | Unset = UNSET
    tracestate: str | Unset = UNSET





    def to_dict(self) -> dict[str, Any]:
        from ..models.publish_request_properties import PublishRequestProperties # noqa: PLC0415
        body = self.body

        body_base_64 = self.body_base_64

        deduplication_id = self.deduplication_id

        delay_level = self.delay_level

        delay_seconds = self.delay_seconds

        deliver_at: str | Unset = UNSET
        if not isinstance(self.deliver_at, Unset):
            deliver_at = self.deliver_at.isoformat()

        keys: list[str] | Unset = UNSET
        if not isinstance(self.keys, Unset):
            keys = self.keys



        properties: dict[str, Any] | Unset = UNSET
        if not isinstance(self.properties, Unset):
            properties = self.properties.to_dict()

        sharding_key = self.sharding_key

        tags = self.tags

        traceparent = self.traceparent

        tracestate = self.tracestate


        field_dict: dict[str, Any] = {}

        field_dict.update({
        })
        if body is not UNSET:
            field_dict["body"] = body
        if body_base_64 is not UNSET:
            field_dict["bodyBase64"] = body_base_64
        if deduplication_id is not UNSET:
            field_dict["deduplicationId"] = deduplication_id
        if delay_level is not UNSET:
            field_dict["delayLevel"] = delay_level
        if delay_seconds is not UNSET:
            field_dict["delaySeconds"] = delay_seconds
        if deliver_at is not UNSET:
            field_dict["deliverAt"] = deliver_at
        if keys is not UNSET:
            field_dict["keys"] = keys
        if properties is not UNSET:
            field_dict["properties"] = properties
        if sharding_key is not UNSET:
            field_dict["shardingKey"] = sharding_key
        if tags is not UNSET:
            field_dict["tags"] = tags
        if traceparent is not UNSET:
            field_dict["traceparent"] = traceparent
        if tracestate is not UNSET:
            field_dict["tracestate"] = tracestate

        return field_dict



    @classmethod
    def from_dict(cls: type[T], src_dict: Mapping[str, Any]) -> T:
        from ..models.publish_request_properties import PublishRequestProperties # noqa: PLC0415
        d = dict(src_dict)
        body = d.pop("body", UNSET)

        body_base_64 = d.pop("bodyBase64", UNSET)

        deduplication_id = d.pop("deduplicationId", UNSET)

        delay_level = d.pop("delayLevel", UNSET)

        delay_seconds = d.pop("delaySeconds", UNSET)

        _deliver_at = d.pop("deliverAt", UNSET)
        deliver_at: datetime.datetime | Unset
        if isinstance(_deliver_at,  Unset):
            deliver_at = UNSET
        else:
            deliver_at = datetime.datetime.fromisoformat(_deliver_at)




        keys = cast(list[str], d.pop("keys", UNSET))


        _properties = d.pop("properties", UNSET)
        properties: PublishRequestProperties | Unset
        if isinstance(_properties,  Unset):
            properties = UNSET
        else:
            properties = PublishRequestProperties.from_dict(_properties)




        sharding_key = d.pop("shardingKey", UNSET)

        tags = d.pop("tags", UNSET)

        traceparent = d.pop("traceparent", UNSET)

        tracestate = d.pop("tracestate", UNSET)

        publish_request = cls(
            body=body,
            body_base_64=body_base_64,
            deduplication_id=deduplication_id,
            delay_level=delay_level,
            delay_seconds=delay_seconds,
            deliver_at=deliver_at,
            keys=keys,
            properties=properties,
            sharding_key=sharding_key,
            tags=tags,
            traceparent=traceparent,
            tracestate=tracestate,
        )

        return publish_request

