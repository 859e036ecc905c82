from http import HTTPStatus
from typing import Any, cast
from urllib.parse import quote

import httpx

from ...client import AuthenticatedClient, Client
from ...types import Response, UNSET
from ... import errors

from ...models.problem import Problem
from ...models.publish_message_request import PublishMessageRequest
from ...models.publish_result import PublishResult
from ...types import UNSET, Unset
from typing import cast



def _get_kwargs(
    topic: str,
    *,
    body: PublishMessageRequest,
    idempotency_key: str | Unset = UNSET,
    traceparent: str | Unset = UNSET,
    tracestate: str | Unset = UNSET,

) -> dict[str, Any]:
    headers: dict[str, Any] = {}
    if not isinstance(idempotency_key, Unset):
        headers["Idempotency-Key"] = idempotency_key

    if not isinstance(traceparent, Unset):
        headers["traceparent"] = traceparent

    if not isinstance(tracestate, Unset):
        headers["tracestate"] = tracestate



    

    

    _kwargs: dict[str, Any] = {
        "method": "post",
        "url": "/v1/topics/{topic}/messages".format(topic=quote(str(topic), safe=""),),
    }

    _kwargs["json"] = body.to_dict()

    headers["Content-Type"] = "application/json"

    _kwargs["headers"] = headers
    return _kwargs



def _parse_response(*, client: AuthenticatedClient | Client, response: httpx.Response) -> Problem | PublishResult | None:
    if response.status_code == 201:
        response_201 = PublishResult.from_dict(response.json())



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


def _build_response(*, client: AuthenticatedClient | Client, response: httpx.Response) -> Response[Problem | PublishResult]:
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
    body: PublishMessageRequest,
    idempotency_key: str | Unset = UNSET,
    traceparent: str | Unset = UNSET,
    tracestate: str | Unset = UNSET,

) -> Response[Problem | PublishResult]:
    """ Publish a message

     Stores one message durably (synced) before answering. Exactly one of body and bodyBase64; at most
    one of delayLevel, delaySeconds and deliverAt. With shardingKey the queue is chosen by hash, else
    round-robin. A deliverAt in the past stores the message in its queue at once.

    Args:
        topic (str):
        idempotency_key (str | Unset):
        traceparent (str | Unset):
        tracestate (str | Unset):
        body (PublishMessageRequest): A message to publish. Exactly one of body, bodyBase64. At
            most one of delayLevel, delaySeconds, deliverAt. Repeats are made idempotent by the
            Idempotency-Key header.

    Raises:
        errors.UnexpectedStatus: If the server returns an undocumented status code and Client.raise_on_unexpected_status is True.
        httpx.TimeoutException: If the request takes longer than Client.timeout.

    Returns:
        Response[Problem | PublishResult]
     """


    kwargs = _get_kwargs(
        topic=topic,
body=body,
idempotency_key=idempotency_key,
traceparent=traceparent,
tracestate=tracestate,

    )

    response = client.get_httpx_client().request(
        **kwargs,
    )

    return _build_response(client=client, response=response)

def sync(
    topic: str,
    *,
    client: AuthenticatedClient,
    body: PublishMessageRequest,
    idempotency_key: str | Unset = UNSET,
    traceparent: str | Unset = UNSET,
    tracestate: str | Unset = UNSET,

) -> Problem | PublishResult | None:
    """ Publish a message

     Stores one message durably (synced) before answering. Exactly one of body and bodyBase64; at most
    one of delayLevel, delaySeconds and deliverAt. With shardingKey the queue is chosen by hash, else
    round-robin. A deliverAt in the past stores the message in its queue at once.

    Args:
        topic (str):
        idempotency_key (str | Unset):
        traceparent (str | Unset):
        tracestate (str | Unset):
        body (PublishMessageRequest): A message to publish. Exactly one of body, bodyBase64. At
            most one of delayLevel, delaySeconds, deliverAt. Repeats are made idempotent by the
            Idempotency-Key header.

    Raises:
        errors.UnexpectedStatus: If the server returns an undocumented status code and Client.raise_on_unexpected_status is True.
        httpx.TimeoutException: If the request takes longer than Client.timeout.

    Returns:
        Problem | PublishResult
     """


    return sync_detailed(
        topic=topic,
client=client,
body=body,
idempotency_key=idempotency_key,
traceparent=traceparent,
tracestate=tracestate,

    ).parsed

async def asyncio_detailed(
    topic: str,
    *,
    client: AuthenticatedClient,
    body: PublishMessageRequest,
    idempotency_key: str | Unset = UNSET,
    traceparent: str | Unset = UNSET,
    tracestate: str | Unset = UNSET,

) -> Response[Problem | PublishResult]:
    """ Publish a message

     Stores one message durably (synced) before answering. Exactly one of body and bodyBase64; at most
    one of delayLevel, delaySeconds and deliverAt. With shardingKey the queue is chosen by hash, else
    round-robin. A deliverAt in the past stores the message in its queue at once.

    Args:
        topic (str):
        idempotency_key (str | Unset):
        traceparent (str | Unset):
        tracestate (str | Unset):
        body (PublishMessageRequest): A message to publish. Exactly one of body, bodyBase64. At
            most one of delayLevel, delaySeconds, deliverAt. Repeats are made idempotent by the
            Idempotency-Key header.

    Raises:
        errors.UnexpectedStatus: If the server returns an undocumented status code and Client.raise_on_unexpected_status is True.
        httpx.TimeoutException: If the request takes longer than Client.timeout.

    Returns:
        Response[Problem | PublishResult]
     """


    kwargs = _get_kwargs(
        topic=topic,
body=body,
idempotency_key=idempotency_key,
traceparent=traceparent,
tracestate=tracestate,

    )

    response = await client.get_async_httpx_client().request(
        **kwargs
    )

    return _build_response(client=client, response=response)

async def asyncio(
    topic: str,
    *,
    client: AuthenticatedClient,
    body: PublishMessageRequest,
    idempotency_key: str | Unset = UNSET,
    traceparent: str | Unset = UNSET,
    tracestate: str | Unset = UNSET,

) -> Problem | PublishResult | None:
    """ Publish a message

     Stores one message durably (synced) before answering. Exactly one of body and bodyBase64; at most
    one of delayLevel, delaySeconds and deliverAt. With shardingKey the queue is chosen by hash, else
    round-robin. A deliverAt in the past stores the message in its queue at once.

    Args:
        topic (str):
        idempotency_key (str | Unset):
        traceparent (str | Unset):
        tracestate (str | Unset):
        body (PublishMessageRequest): A message to publish. Exactly one of body, bodyBase64. At
            most one of delayLevel, delaySeconds, deliverAt. Repeats are made idempotent by the
            Idempotency-Key header.

    Raises:
        errors.UnexpectedStatus: If the server returns an undocumented status code and Client.raise_on_unexpected_status is True.
        httpx.TimeoutException: If the request takes longer than Client.timeout.

    Returns:
        Problem | PublishResult
     """


    return (await asyncio_detailed(
        topic=topic,
client=client,
body=body,
idempotency_key=idempotency_key,
traceparent=traceparent,
tracestate=tracestate,

    )).parsed
