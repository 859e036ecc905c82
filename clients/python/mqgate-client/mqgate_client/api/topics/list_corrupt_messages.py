from http import HTTPStatus
from typing import Any, cast
from urllib.parse import quote

import httpx

from ...client import AuthenticatedClient, Client
from ...types import Response, UNSET
from ... import errors

from ...models.corrupt_list import CorruptList
from ...models.problem import Problem
from typing import cast



def _get_kwargs(
    topic: str,

) -> dict[str, Any]:
    

    

    

    _kwargs: dict[str, Any] = {
        "method": "get",
        "url": "/v1/topics/{topic}/corrupt".format(topic=quote(str(topic), safe=""),),
    }


    return _kwargs



def _parse_response(*, client: AuthenticatedClient | Client, response: httpx.Response) -> CorruptList | Problem | None:
    if response.status_code == 200:
        response_200 = CorruptList.from_dict(response.json())



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


def _build_response(*, client: AuthenticatedClient | Client, response: httpx.Response) -> Response[CorruptList | Problem]:
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

) -> Response[CorruptList | Problem]:
    """ List a topic's corrupt messages

     Lists the stored messages of the topic that failed their checksum when read (by a consumer's pull, a
    GET, or the start-up check). Each was set aside: counted in the topic's stats (stats.corrupt) and
    mqgate_store_corrupt_records, never delivered. docs/operations.md says what to do about them.

    Args:
        topic (str):

    Raises:
        errors.UnexpectedStatus: If the server returns an undocumented status code and Client.raise_on_unexpected_status is True.
        httpx.TimeoutException: If the request takes longer than Client.timeout.

    Returns:
        Response[CorruptList | Problem]
     """


    kwargs = _get_kwargs(
        topic=topic,

    )

    response = client.get_httpx_client().request(
        **kwargs,
    )

    return _build_response(client=client, response=response)

def sync(
    topic: str,
    *,
    client: AuthenticatedClient,

) -> CorruptList | Problem | None:
    """ List a topic's corrupt messages

     Lists the stored messages of the topic that failed their checksum when read (by a consumer's pull, a
    GET, or the start-up check). Each was set aside: counted in the topic's stats (stats.corrupt) and
    mqgate_store_corrupt_records, never delivered. docs/operations.md says what to do about them.

    Args:
        topic (str):

    Raises:
        errors.UnexpectedStatus: If the server returns an undocumented status code and Client.raise_on_unexpected_status is True.
        httpx.TimeoutException: If the request takes longer than Client.timeout.

    Returns:
        CorruptList | Problem
     """


    return sync_detailed(
        topic=topic,
client=client,

    ).parsed

async def asyncio_detailed(
    topic: str,
    *,
    client: AuthenticatedClient,

) -> Response[CorruptList | Problem]:
    """ List a topic's corrupt messages

     Lists the stored messages of the topic that failed their checksum when read (by a consumer's pull, a
    GET, or the start-up check). Each was set aside: counted in the topic's stats (stats.corrupt) and
    mqgate_store_corrupt_records, never delivered. docs/operations.md says what to do about them.

    Args:
        topic (str):

    Raises:
        errors.UnexpectedStatus: If the server returns an undocumented status code and Client.raise_on_unexpected_status is True.
        httpx.TimeoutException: If the request takes longer than Client.timeout.

    Returns:
        Response[CorruptList | Problem]
     """


    kwargs = _get_kwargs(
        topic=topic,

    )

    response = await client.get_async_httpx_client().request(
        **kwargs
    )

    return _build_response(client=client, response=response)

async def asyncio(
    topic: str,
    *,
    client: AuthenticatedClient,

) -> CorruptList | Problem | None:
    """ List a topic's corrupt messages

     Lists the stored messages of the topic that failed their checksum when read (by a consumer's pull, a
    GET, or the start-up check). Each was set aside: counted in the topic's stats (stats.corrupt) and
    mqgate_store_corrupt_records, never delivered. docs/operations.md says what to do about them.

    Args:
        topic (str):

    Raises:
        errors.UnexpectedStatus: If the server returns an undocumented status code and Client.raise_on_unexpected_status is True.
        httpx.TimeoutException: If the request takes longer than Client.timeout.

    Returns:
        CorruptList | Problem
     """


    return (await asyncio_detailed(
        topic=topic,
client=client,

    )).parsed
