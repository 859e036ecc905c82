from http import HTTPStatus
from typing import Any, cast
from urllib.parse import quote

import httpx

from ...client import AuthenticatedClient, Client
from ...types import Response, UNSET
from ... import errors

from ...models.problem import Problem
from ...types import UNSET, Unset
from typing import cast



def _get_kwargs(
    group: str,
    *,
    consumer_id: str | Unset = UNSET,
    invisible_seconds: int | Unset = UNSET,
    max_outstanding_messages: int | Unset = UNSET,
    max_outstanding_bytes: int | Unset = UNSET,
    sec_web_socket_protocol: str,

) -> dict[str, Any]:
    headers: dict[str, Any] = {}
    headers["Sec-WebSocket-Protocol"] = sec_web_socket_protocol



    

    params: dict[str, Any] = {}

    params["consumerId"] = consumer_id

    params["invisibleSeconds"] = invisible_seconds

    params["maxOutstandingMessages"] = max_outstanding_messages

    params["maxOutstandingBytes"] = max_outstanding_bytes


    params = {k: v for k, v in params.items() if v is not UNSET and v is not None}


    _kwargs: dict[str, Any] = {
        "method": "get",
        "url": "/v1/groups/{group}/stream".format(group=quote(str(group), safe=""),),
        "params": params,
    }


    _kwargs["headers"] = headers
    return _kwargs



def _parse_response(*, client: AuthenticatedClient | Client, response: httpx.Response) -> Any | Problem | None:
    if response.status_code == 101:
        response_101 = cast(Any, None)
        return response_101

    if response.status_code == 400:
        response_400 = Problem.from_dict(response.json())



        return response_400

    if response.status_code == 401:
        response_401 = Problem.from_dict(response.json())



        return response_401

    if response.status_code == 403:
        response_403 = Problem.from_dict(response.json())



        return response_403

    if response.status_code == 404:
        response_404 = Problem.from_dict(response.json())



        return response_404

    if response.status_code == 409:
        response_409 = Problem.from_dict(response.json())



        return response_409

    if response.status_code == 429:
        response_429 = Problem.from_dict(response.json())



        return response_429

    if response.status_code == 500:
        response_500 = Problem.from_dict(response.json())



        return response_500

    if response.status_code == 503:
        response_503 = Problem.from_dict(response.json())



        return response_503

    if client.raise_on_unexpected_status:
        raise errors.UnexpectedStatus(response.status_code, response.content)
    else:
        return None


def _build_response(*, client: AuthenticatedClient | Client, response: httpx.Response) -> Response[Any | Problem]:
    return Response(
        status_code=HTTPStatus(response.status_code),
        content=response.content,
        headers=response.headers,
        parsed=_parse_response(client=client, response=response),
    )


def sync_detailed(
    group: str,
    *,
    client: AuthenticatedClient,
    consumer_id: str | Unset = UNSET,
    invisible_seconds: int | Unset = UNSET,
    max_outstanding_messages: int | Unset = UNSET,
    max_outstanding_bytes: int | Unset = UNSET,
    sec_web_socket_protocol: str,

) -> Response[Any | Problem]:
    """ Consume over a WebSocket stream

     Upgrades to a WebSocket (RFC 6455) with subprotocol mqgate.v1 (Sec-WebSocket-Protocol; browsers may
    add mqgate.key.<base64url key>). The server pushes deliveries as they come, within
    maxOutstandingMessages and maxOutstandingBytes; the client acks, nacks, extends and changes the flow
    limits with frames answered per handle. The frames are described in docs/streaming.md and the
    AsyncAPI document openapi/asyncapi.json. A refused upgrade answers problem+json.

    Args:
        group (str):
        consumer_id (str | Unset):
        invisible_seconds (int | Unset):
        max_outstanding_messages (int | Unset):
        max_outstanding_bytes (int | Unset):
        sec_web_socket_protocol (str):

    Raises:
        errors.UnexpectedStatus: If the server returns an undocumented status code and Client.raise_on_unexpected_status is True.
        httpx.TimeoutException: If the request takes longer than Client.timeout.

    Returns:
        Response[Any | Problem]
     """


    kwargs = _get_kwargs(
        group=group,
consumer_id=consumer_id,
invisible_seconds=invisible_seconds,
max_outstanding_messages=max_outstanding_messages,
max_outstanding_bytes=max_outstanding_bytes,
sec_web_socket_protocol=sec_web_socket_protocol,

    )

    response = client.get_httpx_client().request(
        **kwargs,
    )

    return _build_response(client=client, response=response)

def sync(
    group: str,
    *,
    client: AuthenticatedClient,
    consumer_id: str | Unset = UNSET,
    invisible_seconds: int | Unset = UNSET,
    max_outstanding_messages: int | Unset = UNSET,
    max_outstanding_bytes: int | Unset = UNSET,
    sec_web_socket_protocol: str,

) -> Any | Problem | None:
    """ Consume over a WebSocket stream

     Upgrades to a WebSocket (RFC 6455) with subprotocol mqgate.v1 (Sec-WebSocket-Protocol; browsers may
    add mqgate.key.<base64url key>). The server pushes deliveries as they come, within
    maxOutstandingMessages and maxOutstandingBytes; the client acks, nacks, extends and changes the flow
    limits with frames answered per handle. The frames are described in docs/streaming.md and the
    AsyncAPI document openapi/asyncapi.json. A refused upgrade answers problem+json.

    Args:
        group (str):
        consumer_id (str | Unset):
        invisible_seconds (int | Unset):
        max_outstanding_messages (int | Unset):
        max_outstanding_bytes (int | Unset):
        sec_web_socket_protocol (str):

    Raises:
        errors.UnexpectedStatus: If the server returns an undocumented status code and Client.raise_on_unexpected_status is True.
        httpx.TimeoutException: If the request takes longer than Client.timeout.

    Returns:
        Any | Problem
     """


    return sync_detailed(
        group=group,
client=client,
consumer_id=consumer_id,
invisible_seconds=invisible_seconds,
max_outstanding_messages=max_outstanding_messages,
max_outstanding_bytes=max_outstanding_bytes,
sec_web_socket_protocol=sec_web_socket_protocol,

    ).parsed

async def asyncio_detailed(
    group: str,
    *,
    client: AuthenticatedClient,
    consumer_id: str | Unset = UNSET,
    invisible_seconds: int | Unset = UNSET,
    max_outstanding_messages: int | Unset = UNSET,
    max_outstanding_bytes: int | Unset = UNSET,
    sec_web_socket_protocol: str,

) -> Response[Any | Problem]:
    """ Consume over a WebSocket stream

     Upgrades to a WebSocket (RFC 6455) with subprotocol mqgate.v1 (Sec-WebSocket-Protocol; browsers may
    add mqgate.key.<base64url key>). The server pushes deliveries as they come, within
    maxOutstandingMessages and maxOutstandingBytes; the client acks, nacks, extends and changes the flow
    limits with frames answered per handle. The frames are described in docs/streaming.md and the
    AsyncAPI document openapi/asyncapi.json. A refused upgrade answers problem+json.

    Args:
        group (str):
        consumer_id (str | Unset):
        invisible_seconds (int | Unset):
        max_outstanding_messages (int | Unset):
        max_outstanding_bytes (int | Unset):
        sec_web_socket_protocol (str):

    Raises:
        errors.UnexpectedStatus: If the server returns an undocumented status code and Client.raise_on_unexpected_status is True.
        httpx.TimeoutException: If the request takes longer than Client.timeout.

    Returns:
        Response[Any | Problem]
     """


    kwargs = _get_kwargs(
        group=group,
consumer_id=consumer_id,
invisible_seconds=invisible_seconds,
max_outstanding_messages=max_outstanding_messages,
max_outstanding_bytes=max_outstanding_bytes,
sec_web_socket_protocol=sec_web_socket_protocol,

    )

    response = await client.get_async_httpx_client().request(
        **kwargs
    )

    return _build_response(client=client, response=response)

async def asyncio(
    group: str,
    *,
    client: AuthenticatedClient,
    consumer_id: str | Unset = UNSET,
    invisible_seconds: int | Unset = UNSET,
    max_outstanding_messages: int | Unset = UNSET,
    max_outstanding_bytes: int | Unset = UNSET,
    sec_web_socket_protocol: str,

) -> Any | Problem | None:
    """ Consume over a WebSocket stream

     Upgrades to a WebSocket (RFC 6455) with subprotocol mqgate.v1 (Sec-WebSocket-Protocol; browsers may
    add mqgate.key.<base64url key>). The server pushes deliveries as they come, within
    maxOutstandingMessages and maxOutstandingBytes; the client acks, nacks, extends and changes the flow
    limits with frames answered per handle. The frames are described in docs/streaming.md and the
    AsyncAPI document openapi/asyncapi.json. A refused upgrade answers problem+json.

    Args:
        group (str):
        consumer_id (str | Unset):
        invisible_seconds (int | Unset):
        max_outstanding_messages (int | Unset):
        max_outstanding_bytes (int | Unset):
        sec_web_socket_protocol (str):

    Raises:
        errors.UnexpectedStatus: If the server returns an undocumented status code and Client.raise_on_unexpected_status is True.
        httpx.TimeoutException: If the request takes longer than Client.timeout.

    Returns:
        Any | Problem
     """


    return (await asyncio_detailed(
        group=group,
client=client,
consumer_id=consumer_id,
invisible_seconds=invisible_seconds,
max_outstanding_messages=max_outstanding_messages,
max_outstanding_bytes=max_outstanding_bytes,
sec_web_socket_protocol=sec_web_socket_protocol,

    )).parsed
