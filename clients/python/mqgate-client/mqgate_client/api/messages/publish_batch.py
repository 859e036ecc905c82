from http import HTTPStatus
from typing import Any, cast
from urllib.parse import quote

import httpx

from ...client import AuthenticatedClient, Client
from ...types import Response, UNSET
from ... import errors

from ...models.problem import Problem
from ...models.publish_batch_request import PublishBatchRequest
from ...models.publish_batch_result import PublishBatchResult
from typing import cast



def _get_kwargs(
    topic: str,
    *,
    body: PublishBatchRequest,

) -> dict[str, Any]:
    headers: dict[str, Any] = {}


    

    

    _kwargs: dict[str, Any] = {
        "method": "post",
        "url": "/v1/topics/{topic}/messages/batch".format(topic=quote(str(topic), safe=""),),
    }

    _kwargs["json"] = body.to_dict()

    headers["Content-Type"] = "application/json"

    _kwargs["headers"] = headers
    return _kwargs



def _parse_response(*, client: AuthenticatedClient | Client, response: httpx.Response) -> Problem | PublishBatchResult | None:
    if response.status_code == 201:
        response_201 = PublishBatchResult.from_dict(response.json())



        return response_201

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

    if response.status_code == 413:
        response_413 = Problem.from_dict(response.json())



        return response_413

    if response.status_code == 415:
        response_415 = Problem.from_dict(response.json())



        return response_415

    if response.status_code == 422:
        response_422 = Problem.from_dict(response.json())



        return response_422

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


def _build_response(*, client: AuthenticatedClient | Client, response: httpx.Response) -> Response[Problem | PublishBatchResult]:
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
    body: PublishBatchRequest,

) -> Response[Problem | PublishBatchResult]:
    """ Publish a batch of messages

     Stores 1..1000 messages (at most 4 MiB of bodies in all) in one durable transaction: all or nothing.
    Results are in request order. Messages with a shardingKey go to its queue by hash; all the others of
    one batch go together to the next round-robin queue (as a RocketMQ batch goes to one queue), so give
    sharding keys to spread a batch.

    Args:
        topic (str):
        body (PublishBatchRequest):

    Raises:
        errors.UnexpectedStatus: If the server returns an undocumented status code and Client.raise_on_unexpected_status is True.
        httpx.TimeoutException: If the request takes longer than Client.timeout.

    Returns:
        Response[Problem | PublishBatchResult]
     """


    kwargs = _get_kwargs(
        topic=topic,
body=body,

    )

    response = client.get_httpx_client().request(
        **kwargs,
    )

    return _build_response(client=client, response=response)

def sync(
    topic: str,
    *,
    client: AuthenticatedClient,
    body: PublishBatchRequest,

) -> Problem | PublishBatchResult | None:
    """ Publish a batch of messages

     Stores 1..1000 messages (at most 4 MiB of bodies in all) in one durable transaction: all or nothing.
    Results are in request order. Messages with a shardingKey go to its queue by hash; all the others of
    one batch go together to the next round-robin queue (as a RocketMQ batch goes to one queue), so give
    sharding keys to spread a batch.

    Args:
        topic (str):
        body (PublishBatchRequest):

    Raises:
        errors.UnexpectedStatus: If the server returns an undocumented status code and Client.raise_on_unexpected_status is True.
        httpx.TimeoutException: If the request takes longer than Client.timeout.

    Returns:
        Problem | PublishBatchResult
     """


    return sync_detailed(
        topic=topic,
client=client,
body=body,

    ).parsed

async def asyncio_detailed(
    topic: str,
    *,
    client: AuthenticatedClient,
    body: PublishBatchRequest,

) -> Response[Problem | PublishBatchResult]:
    """ Publish a batch of messages

     Stores 1..1000 messages (at most 4 MiB of bodies in all) in one durable transaction: all or nothing.
    Results are in request order. Messages with a shardingKey go to its queue by hash; all the others of
    one batch go together to the next round-robin queue (as a RocketMQ batch goes to one queue), so give
    sharding keys to spread a batch.

    Args:
        topic (str):
        body (PublishBatchRequest):

    Raises:
        errors.UnexpectedStatus: If the server returns an undocumented status code and Client.raise_on_unexpected_status is True.
        httpx.TimeoutException: If the request takes longer than Client.timeout.

    Returns:
        Response[Problem | PublishBatchResult]
     """


    kwargs = _get_kwargs(
        topic=topic,
body=body,

    )

    response = await client.get_async_httpx_client().request(
        **kwargs
    )

    return _build_response(client=client, response=response)

async def asyncio(
    topic: str,
    *,
    client: AuthenticatedClient,
    body: PublishBatchRequest,

) -> Problem | PublishBatchResult | None:
    """ Publish a batch of messages

     Stores 1..1000 messages (at most 4 MiB of bodies in all) in one durable transaction: all or nothing.
    Results are in request order. Messages with a shardingKey go to its queue by hash; all the others of
    one batch go together to the next round-robin queue (as a RocketMQ batch goes to one queue), so give
    sharding keys to spread a batch.

    Args:
        topic (str):
        body (PublishBatchRequest):

    Raises:
        errors.UnexpectedStatus: If the server returns an undocumented status code and Client.raise_on_unexpected_status is True.
        httpx.TimeoutException: If the request takes longer than Client.timeout.

    Returns:
        Problem | PublishBatchResult
     """


    return (await asyncio_detailed(
        topic=topic,
client=client,
body=body,

    )).parsed
