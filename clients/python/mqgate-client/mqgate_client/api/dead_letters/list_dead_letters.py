from http import HTTPStatus
from typing import Any, cast
from urllib.parse import quote

import httpx

from ...client import AuthenticatedClient, Client
from ...types import Response, UNSET
from ... import errors

from ...models.dlq_page import DLQPage
from ...models.problem import Problem
from ...types import UNSET, Unset
from typing import cast



def _get_kwargs(
    group: str,
    *,
    limit: int | Unset = UNSET,
    cursor: str | Unset = UNSET,

) -> dict[str, Any]:
    

    

    params: dict[str, Any] = {}

    params["limit"] = limit

    params["cursor"] = cursor


    params = {k: v for k, v in params.items() if v is not UNSET and v is not None}


    _kwargs: dict[str, Any] = {
        "method": "get",
        "url": "/v1/groups/{group}/dlq".format(group=quote(str(group), safe=""),),
        "params": params,
    }


    return _kwargs



def _parse_response(*, client: AuthenticatedClient | Client, response: httpx.Response) -> DLQPage | Problem | None:
    if response.status_code == 200:
        response_200 = DLQPage.from_dict(response.json())



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


def _build_response(*, client: AuthenticatedClient | Client, response: httpx.Response) -> Response[DLQPage | Problem]:
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

) -> Response[DLQPage | Problem]:
    """ List a group's dead letters

     Dead letters of the group (%DLQ%group), oldest first, redriven ones left out. Each shows its
    original id, topic, tags, keys, properties, body and reconsumeTimes. Follow nextCursor for the next
    page.

    Args:
        group (str):
        limit (int | Unset):
        cursor (str | Unset):

    Raises:
        errors.UnexpectedStatus: If the server returns an undocumented status code and Client.raise_on_unexpected_status is True.
        httpx.TimeoutException: If the request takes longer than Client.timeout.

    Returns:
        Response[DLQPage | Problem]
     """


    kwargs = _get_kwargs(
        group=group,
limit=limit,
cursor=cursor,

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

) -> DLQPage | Problem | None:
    """ List a group's dead letters

     Dead letters of the group (%DLQ%group), oldest first, redriven ones left out. Each shows its
    original id, topic, tags, keys, properties, body and reconsumeTimes. Follow nextCursor for the next
    page.

    Args:
        group (str):
        limit (int | Unset):
        cursor (str | Unset):

    Raises:
        errors.UnexpectedStatus: If the server returns an undocumented status code and Client.raise_on_unexpected_status is True.
        httpx.TimeoutException: If the request takes longer than Client.timeout.

    Returns:
        DLQPage | Problem
     """


    return sync_detailed(
        group=group,
client=client,
limit=limit,
cursor=cursor,

    ).parsed

async def asyncio_detailed(
    group: str,
    *,
    client: AuthenticatedClient,
    limit: int | Unset = UNSET,
    cursor: str | Unset = UNSET,

) -> Response[DLQPage | Problem]:
    """ List a group's dead letters

     Dead letters of the group (%DLQ%group), oldest first, redriven ones left out. Each shows its
    original id, topic, tags, keys, properties, body and reconsumeTimes. Follow nextCursor for the next
    page.

    Args:
        group (str):
        limit (int | Unset):
        cursor (str | Unset):

    Raises:
        errors.UnexpectedStatus: If the server returns an undocumented status code and Client.raise_on_unexpected_status is True.
        httpx.TimeoutException: If the request takes longer than Client.timeout.

    Returns:
        Response[DLQPage | Problem]
     """


    kwargs = _get_kwargs(
        group=group,
limit=limit,
cursor=cursor,

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

) -> DLQPage | Problem | None:
    """ List a group's dead letters

     Dead letters of the group (%DLQ%group), oldest first, redriven ones left out. Each shows its
    original id, topic, tags, keys, properties, body and reconsumeTimes. Follow nextCursor for the next
    page.

    Args:
        group (str):
        limit (int | Unset):
        cursor (str | Unset):

    Raises:
        errors.UnexpectedStatus: If the server returns an undocumented status code and Client.raise_on_unexpected_status is True.
        httpx.TimeoutException: If the request takes longer than Client.timeout.

    Returns:
        DLQPage | Problem
     """


    return (await asyncio_detailed(
        group=group,
client=client,
limit=limit,
cursor=cursor,

    )).parsed
