from http import HTTPStatus
from typing import Any, cast
from urllib.parse import quote

import httpx

from ...client import AuthenticatedClient, Client
from ...types import Response, UNSET
from ... import errors

from ...models.group import Group
from ...models.group_request import GroupRequest
from ...models.problem import Problem
from typing import cast



def _get_kwargs(
    group: str,
    *,
    body: GroupRequest,

) -> dict[str, Any]:
    headers: dict[str, Any] = {}


    

    

    _kwargs: dict[str, Any] = {
        "method": "put",
        "url": "/v1/groups/{group}".format(group=quote(str(group), safe=""),),
    }

    _kwargs["json"] = body.to_dict()

    headers["Content-Type"] = "application/json"

    _kwargs["headers"] = headers
    return _kwargs



def _parse_response(*, client: AuthenticatedClient | Client, response: httpx.Response) -> Group | Problem | None:
    if response.status_code == 200:
        response_200 = Group.from_dict(response.json())



        return response_200

    if response.status_code == 201:
        response_201 = Group.from_dict(response.json())



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

    if response.status_code == 408:
        response_408 = Problem.from_dict(response.json())



        return response_408

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


def _build_response(*, client: AuthenticatedClient | Client, response: httpx.Response) -> Response[Group | Problem]:
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
    body: GroupRequest,

) -> Response[Group | Problem]:
    """ Create or replace a consumer group

     Creates the group (201) or replaces its config (200). Changes (subscriptions, mode, push) take
    effect without a restart. A push block makes it a webhook group (receive answers 409); removing it
    makes it a pull group again. The push secret is write-only.

    Args:
        group (str):
        body (GroupRequest):

    Raises:
        errors.UnexpectedStatus: If the server returns an undocumented status code and Client.raise_on_unexpected_status is True.
        httpx.TimeoutException: If the request takes longer than Client.timeout.

    Returns:
        Response[Group | Problem]
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
    body: GroupRequest,

) -> Group | Problem | None:
    """ Create or replace a consumer group

     Creates the group (201) or replaces its config (200). Changes (subscriptions, mode, push) take
    effect without a restart. A push block makes it a webhook group (receive answers 409); removing it
    makes it a pull group again. The push secret is write-only.

    Args:
        group (str):
        body (GroupRequest):

    Raises:
        errors.UnexpectedStatus: If the server returns an undocumented status code and Client.raise_on_unexpected_status is True.
        httpx.TimeoutException: If the request takes longer than Client.timeout.

    Returns:
        Group | Problem
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
    body: GroupRequest,

) -> Response[Group | Problem]:
    """ Create or replace a consumer group

     Creates the group (201) or replaces its config (200). Changes (subscriptions, mode, push) take
    effect without a restart. A push block makes it a webhook group (receive answers 409); removing it
    makes it a pull group again. The push secret is write-only.

    Args:
        group (str):
        body (GroupRequest):

    Raises:
        errors.UnexpectedStatus: If the server returns an undocumented status code and Client.raise_on_unexpected_status is True.
        httpx.TimeoutException: If the request takes longer than Client.timeout.

    Returns:
        Response[Group | Problem]
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
    body: GroupRequest,

) -> Group | Problem | None:
    """ Create or replace a consumer group

     Creates the group (201) or replaces its config (200). Changes (subscriptions, mode, push) take
    effect without a restart. A push block makes it a webhook group (receive answers 409); removing it
    makes it a pull group again. The push secret is write-only.

    Args:
        group (str):
        body (GroupRequest):

    Raises:
        errors.UnexpectedStatus: If the server returns an undocumented status code and Client.raise_on_unexpected_status is True.
        httpx.TimeoutException: If the request takes longer than Client.timeout.

    Returns:
        Group | Problem
     """


    return (await asyncio_detailed(
        group=group,
client=client,
body=body,

    )).parsed
