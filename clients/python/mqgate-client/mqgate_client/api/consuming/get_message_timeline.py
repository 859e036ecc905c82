from http import HTTPStatus
from typing import Any, cast
from urllib.parse import quote

import httpx

from ...client import AuthenticatedClient, Client
from ...types import Response, UNSET
from ... import errors

from ...models.problem import Problem
from ...models.timeline import Timeline
from typing import cast



def _get_kwargs(
    group: str,
    message_id: str,

) -> dict[str, Any]:
    

    

    

    _kwargs: dict[str, Any] = {
        "method": "get",
        "url": "/v1/groups/{group}/messages/{message_id}/timeline".format(group=quote(str(group), safe=""),message_id=quote(str(message_id), safe=""),),
    }


    return _kwargs



def _parse_response(*, client: AuthenticatedClient | Client, response: httpx.Response) -> Problem | Timeline | None:
    if response.status_code == 200:
        response_200 = Timeline.from_dict(response.json())



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


def _build_response(*, client: AuthenticatedClient | Client, response: httpx.Response) -> Response[Problem | Timeline]:
    return Response(
        status_code=HTTPStatus(response.status_code),
        content=response.content,
        headers=response.headers,
        parsed=_parse_response(client=client, response=response),
    )


def sync_detailed(
    group: str,
    message_id: str,
    *,
    client: AuthenticatedClient,

) -> Response[Problem | Timeline]:
    """ A message's timeline in a group

     PUBLISHED (from the stored message), then what this gateway saw in the group: DELIVERED, ACKED,
    NACKED, LEASE_EXPIRED, RETRY_SCHEDULED, DEAD_LETTERED, REDRIVEN (with jobId when a redrive job moved
    it), SKIPPED, oldest first. Retention: the last 4096 events of each group, in memory (a restart
    forgets them).

    Args:
        group (str):
        message_id (str):

    Raises:
        errors.UnexpectedStatus: If the server returns an undocumented status code and Client.raise_on_unexpected_status is True.
        httpx.TimeoutException: If the request takes longer than Client.timeout.

    Returns:
        Response[Problem | Timeline]
     """


    kwargs = _get_kwargs(
        group=group,
message_id=message_id,

    )

    response = client.get_httpx_client().request(
        **kwargs,
    )

    return _build_response(client=client, response=response)

def sync(
    group: str,
    message_id: str,
    *,
    client: AuthenticatedClient,

) -> Problem | Timeline | None:
    """ A message's timeline in a group

     PUBLISHED (from the stored message), then what this gateway saw in the group: DELIVERED, ACKED,
    NACKED, LEASE_EXPIRED, RETRY_SCHEDULED, DEAD_LETTERED, REDRIVEN (with jobId when a redrive job moved
    it), SKIPPED, oldest first. Retention: the last 4096 events of each group, in memory (a restart
    forgets them).

    Args:
        group (str):
        message_id (str):

    Raises:
        errors.UnexpectedStatus: If the server returns an undocumented status code and Client.raise_on_unexpected_status is True.
        httpx.TimeoutException: If the request takes longer than Client.timeout.

    Returns:
        Problem | Timeline
     """


    return sync_detailed(
        group=group,
message_id=message_id,
client=client,

    ).parsed

async def asyncio_detailed(
    group: str,
    message_id: str,
    *,
    client: AuthenticatedClient,

) -> Response[Problem | Timeline]:
    """ A message's timeline in a group

     PUBLISHED (from the stored message), then what this gateway saw in the group: DELIVERED, ACKED,
    NACKED, LEASE_EXPIRED, RETRY_SCHEDULED, DEAD_LETTERED, REDRIVEN (with jobId when a redrive job moved
    it), SKIPPED, oldest first. Retention: the last 4096 events of each group, in memory (a restart
    forgets them).

    Args:
        group (str):
        message_id (str):

    Raises:
        errors.UnexpectedStatus: If the server returns an undocumented status code and Client.raise_on_unexpected_status is True.
        httpx.TimeoutException: If the request takes longer than Client.timeout.

    Returns:
        Response[Problem | Timeline]
     """


    kwargs = _get_kwargs(
        group=group,
message_id=message_id,

    )

    response = await client.get_async_httpx_client().request(
        **kwargs
    )

    return _build_response(client=client, response=response)

async def asyncio(
    group: str,
    message_id: str,
    *,
    client: AuthenticatedClient,

) -> Problem | Timeline | None:
    """ A message's timeline in a group

     PUBLISHED (from the stored message), then what this gateway saw in the group: DELIVERED, ACKED,
    NACKED, LEASE_EXPIRED, RETRY_SCHEDULED, DEAD_LETTERED, REDRIVEN (with jobId when a redrive job moved
    it), SKIPPED, oldest first. Retention: the last 4096 events of each group, in memory (a restart
    forgets them).

    Args:
        group (str):
        message_id (str):

    Raises:
        errors.UnexpectedStatus: If the server returns an undocumented status code and Client.raise_on_unexpected_status is True.
        httpx.TimeoutException: If the request takes longer than Client.timeout.

    Returns:
        Problem | Timeline
     """


    return (await asyncio_detailed(
        group=group,
message_id=message_id,
client=client,

    )).parsed
