from http import HTTPStatus
from typing import Any, cast
from urllib.parse import quote

import httpx

from ...client import AuthenticatedClient, Client
from ...types import Response, UNSET
from ... import errors

from ...models.limits_response import LimitsResponse
from ...models.problem import Problem
from typing import cast



def _get_kwargs(
    
) -> dict[str, Any]:
    

    

    

    _kwargs: dict[str, Any] = {
        "method": "get",
        "url": "/v1/admin/limits",
    }


    return _kwargs



def _parse_response(*, client: AuthenticatedClient | Client, response: httpx.Response) -> LimitsResponse | Problem | None:
    if response.status_code == 200:
        response_200 = LimitsResponse.from_dict(response.json())



        return response_200

    if response.status_code == 401:
        response_401 = Problem.from_dict(response.json())



        return response_401

    if response.status_code == 403:
        response_403 = Problem.from_dict(response.json())



        return response_403

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


def _build_response(*, client: AuthenticatedClient | Client, response: httpx.Response) -> Response[LimitsResponse | Problem]:
    return Response(
        status_code=HTTPStatus(response.status_code),
        content=response.content,
        headers=response.headers,
        parsed=_parse_response(client=client, response=response),
    )


def sync_detailed(
    *,
    client: AuthenticatedClient,

) -> Response[LimitsResponse | Problem]:
    """ API-key limits

     The limits of every API key that has some, as the key file gives them (reloaded on SIGHUP), and what
    each has left now. scope says what they count: on --backend jetstream each gateway instance counts
    on its own, so N instances allow up to N times each limit. Without --api-keys there are no limits
    and the list is empty.

    Raises:
        errors.UnexpectedStatus: If the server returns an undocumented status code and Client.raise_on_unexpected_status is True.
        httpx.TimeoutException: If the request takes longer than Client.timeout.

    Returns:
        Response[LimitsResponse | Problem]
     """


    kwargs = _get_kwargs(
        
    )

    response = client.get_httpx_client().request(
        **kwargs,
    )

    return _build_response(client=client, response=response)

def sync(
    *,
    client: AuthenticatedClient,

) -> LimitsResponse | Problem | None:
    """ API-key limits

     The limits of every API key that has some, as the key file gives them (reloaded on SIGHUP), and what
    each has left now. scope says what they count: on --backend jetstream each gateway instance counts
    on its own, so N instances allow up to N times each limit. Without --api-keys there are no limits
    and the list is empty.

    Raises:
        errors.UnexpectedStatus: If the server returns an undocumented status code and Client.raise_on_unexpected_status is True.
        httpx.TimeoutException: If the request takes longer than Client.timeout.

    Returns:
        LimitsResponse | Problem
     """


    return sync_detailed(
        client=client,

    ).parsed

async def asyncio_detailed(
    *,
    client: AuthenticatedClient,

) -> Response[LimitsResponse | Problem]:
    """ API-key limits

     The limits of every API key that has some, as the key file gives them (reloaded on SIGHUP), and what
    each has left now. scope says what they count: on --backend jetstream each gateway instance counts
    on its own, so N instances allow up to N times each limit. Without --api-keys there are no limits
    and the list is empty.

    Raises:
        errors.UnexpectedStatus: If the server returns an undocumented status code and Client.raise_on_unexpected_status is True.
        httpx.TimeoutException: If the request takes longer than Client.timeout.

    Returns:
        Response[LimitsResponse | Problem]
     """


    kwargs = _get_kwargs(
        
    )

    response = await client.get_async_httpx_client().request(
        **kwargs
    )

    return _build_response(client=client, response=response)

async def asyncio(
    *,
    client: AuthenticatedClient,

) -> LimitsResponse | Problem | None:
    """ API-key limits

     The limits of every API key that has some, as the key file gives them (reloaded on SIGHUP), and what
    each has left now. scope says what they count: on --backend jetstream each gateway instance counts
    on its own, so N instances allow up to N times each limit. Without --api-keys there are no limits
    and the list is empty.

    Raises:
        errors.UnexpectedStatus: If the server returns an undocumented status code and Client.raise_on_unexpected_status is True.
        httpx.TimeoutException: If the request takes longer than Client.timeout.

    Returns:
        LimitsResponse | Problem
     """


    return (await asyncio_detailed(
        client=client,

    )).parsed
