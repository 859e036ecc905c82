from http import HTTPStatus
from typing import Any, cast
from urllib.parse import quote

import httpx

from ...client import AuthenticatedClient, Client
from ...types import Response, UNSET
from ... import errors

from ...models.blocked_list import BlockedList
from ...models.problem import Problem
from ...types import UNSET, Unset
from typing import cast



def _get_kwargs(
    group: str,
    *,
    limit: int | Unset = UNSET,
    cursor: str | Unset = UNSET,
    consumer_id: str | Unset = UNSET,

) -> dict[str, Any]:
    

    

    params: dict[str, Any] = {}

    params["limit"] = limit

    params["cursor"] = cursor

    params["consumerId"] = consumer_id


    params = {k: v for k, v in params.items() if v is not UNSET and v is not None}


    _kwargs: dict[str, Any] = {
        "method": "get",
        "url": "/v1/groups/{group}/blocked".format(group=quote(str(group), safe=""),),
        "params": params,
    }


    return _kwargs



def _parse_response(*, client: AuthenticatedClient | Client, response: httpx.Response) -> BlockedList | Problem | None:
    if response.status_code == 200:
        response_200 = BlockedList.from_dict(response.json())



        return response_200

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


def _build_response(*, client: AuthenticatedClient | Client, response: httpx.Response) -> Response[BlockedList | Problem]:
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
    limit: int | Unset = UNSET,
    cursor: str | Unset = UNSET,
    consumer_id: str | Unset = UNSET,

) -> Response[BlockedList | Problem]:
    """ List blocked ordering keys

     ORDERLY groups: queues whose head message failed (nacked or expired, or waiting out its suspension)
    — everything behind it waits — and keys set aside with park. Sorted by topic, queue and key. A
    BROADCASTING group's consumers each have their own queues: name one with consumerId.

    Args:
        group (str):
        limit (int | Unset):
        cursor (str | Unset):
        consumer_id (str | Unset):

    Raises:
        errors.UnexpectedStatus: If the server returns an undocumented status code and Client.raise_on_unexpected_status is True.
        httpx.TimeoutException: If the request takes longer than Client.timeout.

    Returns:
        Response[BlockedList | Problem]
     """


    kwargs = _get_kwargs(
        group=group,
limit=limit,
cursor=cursor,
consumer_id=consumer_id,

    )

    response = client.get_httpx_client().request(
        **kwargs,
    )

    return _build_response(client=client, response=response)

def sync(
    group: str,
    *,
    client: AuthenticatedClient,
    limit: int | Unset = UNSET,
    cursor: str | Unset = UNSET,
    consumer_id: str | Unset = UNSET,

) -> BlockedList | Problem | None:
    """ List blocked ordering keys

     ORDERLY groups: queues whose head message failed (nacked or expired, or waiting out its suspension)
    — everything behind it waits — and keys set aside with park. Sorted by topic, queue and key. A
    BROADCASTING group's consumers each have their own queues: name one with consumerId.

    Args:
        group (str):
        limit (int | Unset):
        cursor (str | Unset):
        consumer_id (str | Unset):

    Raises:
        errors.UnexpectedStatus: If the server returns an undocumented status code and Client.raise_on_unexpected_status is True.
        httpx.TimeoutException: If the request takes longer than Client.timeout.

    Returns:
        BlockedList | Problem
     """


    return sync_detailed(
        group=group,
client=client,
limit=limit,
cursor=cursor,
consumer_id=consumer_id,

    ).parsed

async def asyncio_detailed(
    group: str,
    *,
    client: AuthenticatedClient,
    limit: int | Unset = UNSET,
    cursor: str | Unset = UNSET,
    consumer_id: str | Unset = UNSET,

) -> Response[BlockedList | Problem]:
    """ List blocked ordering keys

     ORDERLY groups: queues whose head message failed (nacked or expired, or waiting out its suspension)
    — everything behind it waits — and keys set aside with park. Sorted by topic, queue and key. A
    BROADCASTING group's consumers each have their own queues: name one with consumerId.

    Args:
        group (str):
        limit (int | Unset):
        cursor (str | Unset):
        consumer_id (str | Unset):

    Raises:
        errors.UnexpectedStatus: If the server returns an undocumented status code and Client.raise_on_unexpected_status is True.
        httpx.TimeoutException: If the request takes longer than Client.timeout.

    Returns:
        Response[BlockedList | Problem]
     """


    kwargs = _get_kwargs(
        group=group,
limit=limit,
cursor=cursor,
consumer_id=consumer_id,

    )

    response = await client.get_async_httpx_client().request(
        **kwargs
    )

    return _build_response(client=client, response=response)

async def asyncio(
    group: str,
    *,
    client: AuthenticatedClient,
    limit: int | Unset = UNSET,
    cursor: str | Unset = UNSET,
    consumer_id: str | Unset = UNSET,

) -> BlockedList | Problem | None:
    """ List blocked ordering keys

     ORDERLY groups: queues whose head message failed (nacked or expired, or waiting out its suspension)
    — everything behind it waits — and keys set aside with park. Sorted by topic, queue and key. A
    BROADCASTING group's consumers each have their own queues: name one with consumerId.

    Args:
        group (str):
        limit (int | Unset):
        cursor (str | Unset):
        consumer_id (str | Unset):

    Raises:
        errors.UnexpectedStatus: If the server returns an undocumented status code and Client.raise_on_unexpected_status is True.
        httpx.TimeoutException: If the request takes longer than Client.timeout.

    Returns:
        BlockedList | Problem
     """


    return (await asyncio_detailed(
        group=group,
client=client,
limit=limit,
cursor=cursor,
consumer_id=consumer_id,

    )).parsed
