from http import HTTPStatus
from typing import Any, cast
from urllib.parse import quote

import httpx

from ...client import AuthenticatedClient, Client
from ...types import Response, UNSET
from ... import errors

from ...models.blocked_key import BlockedKey
from ...models.blocked_key_request import BlockedKeyRequest
from ...models.problem import Problem
from typing import cast



def _get_kwargs(
    group: str,
    *,
    body: BlockedKeyRequest,

) -> dict[str, Any]:
    headers: dict[str, Any] = {}


    

    

    _kwargs: dict[str, Any] = {
        "method": "post",
        "url": "/v1/groups/{group}/blocked/skip".format(group=quote(str(group), safe=""),),
    }

    _kwargs["json"] = body.to_dict()

    headers["Content-Type"] = "application/json"

    _kwargs["headers"] = headers
    return _kwargs



def _parse_response(*, client: AuthenticatedClient | Client, response: httpx.Response) -> BlockedKey | Problem | None:
    if response.status_code == 200:
        response_200 = BlockedKey.from_dict(response.json())



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

    if response.status_code == 408:
        response_408 = Problem.from_dict(response.json())



        return response_408

    if response.status_code == 409:
        response_409 = Problem.from_dict(response.json())



        return response_409

    if response.status_code == 413:
        response_413 = Problem.from_dict(response.json())



        return response_413

    if response.status_code == 415:
        response_415 = Problem.from_dict(response.json())



        return response_415

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


def _build_response(*, client: AuthenticatedClient | Client, response: httpx.Response) -> Response[BlockedKey | Problem]:
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
    body: BlockedKeyRequest,

) -> Response[BlockedKey | Problem]:
    """ Skip a blocked key's head message

     Sends the failed head message of the queue blocked on this key to the DLQ through the consumer's
    dead-letter path (exactly once), and the queue continues. A suspended head is dead-lettered when its
    suspension ends (within a second). BROADCASTING (consumerId required): the head is dropped for that
    consumer only — a broadcast failure has no retry or DLQ copy (RocketMQ) — and its queue continues;
    other consumers are untouched.

    Args:
        group (str):
        body (BlockedKeyRequest):

    Raises:
        errors.UnexpectedStatus: If the server returns an undocumented status code and Client.raise_on_unexpected_status is True.
        httpx.TimeoutException: If the request takes longer than Client.timeout.

    Returns:
        Response[BlockedKey | Problem]
     """


    kwargs = _get_kwargs(
        group=group,
body=body,

    )

    response = client.get_httpx_client().request(
        **kwargs,
    )

    return _build_response(client=client, response=response)

def sync(
    group: str,
    *,
    client: AuthenticatedClient,
    body: BlockedKeyRequest,

) -> BlockedKey | Problem | None:
    """ Skip a blocked key's head message

     Sends the failed head message of the queue blocked on this key to the DLQ through the consumer's
    dead-letter path (exactly once), and the queue continues. A suspended head is dead-lettered when its
    suspension ends (within a second). BROADCASTING (consumerId required): the head is dropped for that
    consumer only — a broadcast failure has no retry or DLQ copy (RocketMQ) — and its queue continues;
    other consumers are untouched.

    Args:
        group (str):
        body (BlockedKeyRequest):

    Raises:
        errors.UnexpectedStatus: If the server returns an undocumented status code and Client.raise_on_unexpected_status is True.
        httpx.TimeoutException: If the request takes longer than Client.timeout.

    Returns:
        BlockedKey | Problem
     """


    return sync_detailed(
        group=group,
client=client,
body=body,

    ).parsed

async def asyncio_detailed(
    group: str,
    *,
    client: AuthenticatedClient,
    body: BlockedKeyRequest,

) -> Response[BlockedKey | Problem]:
    """ Skip a blocked key's head message

     Sends the failed head message of the queue blocked on this key to the DLQ through the consumer's
    dead-letter path (exactly once), and the queue continues. A suspended head is dead-lettered when its
    suspension ends (within a second). BROADCASTING (consumerId required): the head is dropped for that
    consumer only — a broadcast failure has no retry or DLQ copy (RocketMQ) — and its queue continues;
    other consumers are untouched.

    Args:
        group (str):
        body (BlockedKeyRequest):

    Raises:
        errors.UnexpectedStatus: If the server returns an undocumented status code and Client.raise_on_unexpected_status is True.
        httpx.TimeoutException: If the request takes longer than Client.timeout.

    Returns:
        Response[BlockedKey | Problem]
     """


    kwargs = _get_kwargs(
        group=group,
body=body,

    )

    response = await client.get_async_httpx_client().request(
        **kwargs
    )

    return _build_response(client=client, response=response)

async def asyncio(
    group: str,
    *,
    client: AuthenticatedClient,
    body: BlockedKeyRequest,

) -> BlockedKey | Problem | None:
    """ Skip a blocked key's head message

     Sends the failed head message of the queue blocked on this key to the DLQ through the consumer's
    dead-letter path (exactly once), and the queue continues. A suspended head is dead-lettered when its
    suspension ends (within a second). BROADCASTING (consumerId required): the head is dropped for that
    consumer only — a broadcast failure has no retry or DLQ copy (RocketMQ) — and its queue continues;
    other consumers are untouched.

    Args:
        group (str):
        body (BlockedKeyRequest):

    Raises:
        errors.UnexpectedStatus: If the server returns an undocumented status code and Client.raise_on_unexpected_status is True.
        httpx.TimeoutException: If the request takes longer than Client.timeout.

    Returns:
        BlockedKey | Problem
     """


    return (await asyncio_detailed(
        group=group,
client=client,
body=body,

    )).parsed
