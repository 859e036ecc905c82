from http import HTTPStatus
from typing import Any, cast
from urllib.parse import quote

import httpx

from ...client import AuthenticatedClient, Client
from ...types import Response, UNSET
from ... import errors

from ...models.message_list import MessageList
from ...models.problem import Problem
from ...types import UNSET, Unset
from typing import cast



def _get_kwargs(
    topic: str,
    *,
    key: str | Unset = UNSET,
    queue_id: int | Unset = UNSET,
    offset: int | Unset = UNSET,
    limit: int | Unset = UNSET,
    filter_: str | Unset = UNSET,

) -> dict[str, Any]:
    

    

    params: dict[str, Any] = {}

    params["key"] = key

    params["queueId"] = queue_id

    params["offset"] = offset

    params["limit"] = limit

    params["filter"] = filter_


    params = {k: v for k, v in params.items() if v is not UNSET and v is not None}


    _kwargs: dict[str, Any] = {
        "method": "get",
        "url": "/v1/topics/{topic}/messages".format(topic=quote(str(topic), safe=""),),
        "params": params,
    }


    return _kwargs



def _parse_response(*, client: AuthenticatedClient | Client, response: httpx.Response) -> MessageList | Problem | None:
    if response.status_code == 200:
        response_200 = MessageList.from_dict(response.json())



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


def _build_response(*, client: AuthenticatedClient | Client, response: httpx.Response) -> Response[MessageList | Problem]:
    return Response(
        status_code=HTTPStatus(response.status_code),
        content=response.content,
        headers=response.headers,
        parsed=_parse_response(client=client, response=response),
    )


def sync_detailed(
    topic: str,
    *,
    client: AuthenticatedClient,
    key: str | Unset = UNSET,
    queue_id: int | Unset = UNSET,
    offset: int | Unset = UNSET,
    limit: int | Unset = UNSET,
    filter_: str | Unset = UNSET,

) -> Response[MessageList | Problem]:
    """ Query messages by key, or browse a queue

     With `key`: the messages carrying that key (newest last). With `queueId`: up to `limit` messages of
    that queue from `offset` (default: the oldest kept), without consuming them; `nextOffset` continues
    the browse. Exactly one of key and queueId.

    Args:
        topic (str):
        key (str | Unset):
        queue_id (int | Unset):
        offset (int | Unset):
        limit (int | Unset):
        filter_ (str | Unset):

    Raises:
        errors.UnexpectedStatus: If the server returns an undocumented status code and Client.raise_on_unexpected_status is True.
        httpx.TimeoutException: If the request takes longer than Client.timeout.

    Returns:
        Response[MessageList | Problem]
     """


    kwargs = _get_kwargs(
        topic=topic,
key=key,
queue_id=queue_id,
offset=offset,
limit=limit,
filter_=filter_,

    )

    response = client.get_httpx_client().request(
        **kwargs,
    )

    return _build_response(client=client, response=response)

def sync(
    topic: str,
    *,
    client: AuthenticatedClient,
    key: str | Unset = UNSET,
    queue_id: int | Unset = UNSET,
    offset: int | Unset = UNSET,
    limit: int | Unset = UNSET,
    filter_: str | Unset = UNSET,

) -> MessageList | Problem | None:
    """ Query messages by key, or browse a queue

     With `key`: the messages carrying that key (newest last). With `queueId`: up to `limit` messages of
    that queue from `offset` (default: the oldest kept), without consuming them; `nextOffset` continues
    the browse. Exactly one of key and queueId.

    Args:
        topic (str):
        key (str | Unset):
        queue_id (int | Unset):
        offset (int | Unset):
        limit (int | Unset):
        filter_ (str | Unset):

    Raises:
        errors.UnexpectedStatus: If the server returns an undocumented status code and Client.raise_on_unexpected_status is True.
        httpx.TimeoutException: If the request takes longer than Client.timeout.

    Returns:
        MessageList | Problem
     """


    return sync_detailed(
        topic=topic,
client=client,
key=key,
queue_id=queue_id,
offset=offset,
limit=limit,
filter_=filter_,

    ).parsed

async def asyncio_detailed(
    topic: str,
    *,
    client: AuthenticatedClient,
    key: str | Unset = UNSET,
    queue_id: int | Unset = UNSET,
    offset: int | Unset = UNSET,
    limit: int | Unset = UNSET,
    filter_: str | Unset = UNSET,

) -> Response[MessageList | Problem]:
    """ Query messages by key, or browse a queue

     With `key`: the messages carrying that key (newest last). With `queueId`: up to `limit` messages of
    that queue from `offset` (default: the oldest kept), without consuming them; `nextOffset` continues
    the browse. Exactly one of key and queueId.

    Args:
        topic (str):
        key (str | Unset):
        queue_id (int | Unset):
        offset (int | Unset):
        limit (int | Unset):
        filter_ (str | Unset):

    Raises:
        errors.UnexpectedStatus: If the server returns an undocumented status code and Client.raise_on_unexpected_status is True.
        httpx.TimeoutException: If the request takes longer than Client.timeout.

    Returns:
        Response[MessageList | Problem]
     """


    kwargs = _get_kwargs(
        topic=topic,
key=key,
queue_id=queue_id,
offset=offset,
limit=limit,
filter_=filter_,

    )

    response = await client.get_async_httpx_client().request(
        **kwargs
    )

    return _build_response(client=client, response=response)

async def asyncio(
    topic: str,
    *,
    client: AuthenticatedClient,
    key: str | Unset = UNSET,
    queue_id: int | Unset = UNSET,
    offset: int | Unset = UNSET,
    limit: int | Unset = UNSET,
    filter_: str | Unset = UNSET,

) -> MessageList | Problem | None:
    """ Query messages by key, or browse a queue

     With `key`: the messages carrying that key (newest last). With `queueId`: up to `limit` messages of
    that queue from `offset` (default: the oldest kept), without consuming them; `nextOffset` continues
    the browse. Exactly one of key and queueId.

    Args:
        topic (str):
        key (str | Unset):
        queue_id (int | Unset):
        offset (int | Unset):
        limit (int | Unset):
        filter_ (str | Unset):

    Raises:
        errors.UnexpectedStatus: If the server returns an undocumented status code and Client.raise_on_unexpected_status is True.
        httpx.TimeoutException: If the request takes longer than Client.timeout.

    Returns:
        MessageList | Problem
     """


    return (await asyncio_detailed(
        topic=topic,
client=client,
key=key,
queue_id=queue_id,
offset=offset,
limit=limit,
filter_=filter_,

    )).parsed
