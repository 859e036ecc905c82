from http import HTTPStatus
from typing import Any, cast
from urllib.parse import quote

import httpx

from ...client import AuthenticatedClient, Client
from ...types import Response, UNSET
from ... import errors

from ...models.group import Group
from ...models.problem import Problem
from typing import cast



def _get_kwargs(
    group: str,

) -> dict[str, Any]:
    

    

    

    _kwargs: dict[str, Any] = {
        "method": "post",
        "url": "/v1/groups/{group}/pause".format(group=quote(str(group), safe=""),),
    }


    return _kwargs



def _parse_response(*, client: AuthenticatedClient | Client, response: httpx.Response) -> Group | Problem | None:
    if response.status_code == 200:
        response_200 = Group.from_dict(response.json())



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

) -> Response[Group | Problem]:
    """ Pause a consumer group

     The group hands out nothing until resumed: a receive waits out its waitSeconds and answers empty
    with reason PAUSED (GET of the group shows the same), and a push group's webhook gets no new
    request. Messages already received can still be acked, nacked and extended, and leases still expire.
    The pause is stored with the group before the answer (it survives restarts, and PUT keeps it). When
    it takes hold depends on the backend: the embedded server applies it before the answer (webhook
    requests in flight are aborted, and what they carried is delivered again after the resume); behind
    JetStream every gateway applies it within about a second of the answer (its group cache; push groups
    within the bucket watch's latency), and webhook requests in flight finish and are answered by their
    outcome. Pausing a paused group changes nothing.

    Args:
        group (str):

    Raises:
        errors.UnexpectedStatus: If the server returns an undocumented status code and Client.raise_on_unexpected_status is True.
        httpx.TimeoutException: If the request takes longer than Client.timeout.

    Returns:
        Response[Group | Problem]
     """


    kwargs = _get_kwargs(
        group=group,

    )

    response = client.get_httpx_client().request(
        **kwargs,
    )

    return _build_response(client=client, response=response)

def sync(
    group: str,
    *,
    client: AuthenticatedClient,

) -> Group | Problem | None:
    """ Pause a consumer group

     The group hands out nothing until resumed: a receive waits out its waitSeconds and answers empty
    with reason PAUSED (GET of the group shows the same), and a push group's webhook gets no new
    request. Messages already received can still be acked, nacked and extended, and leases still expire.
    The pause is stored with the group before the answer (it survives restarts, and PUT keeps it). When
    it takes hold depends on the backend: the embedded server applies it before the answer (webhook
    requests in flight are aborted, and what they carried is delivered again after the resume); behind
    JetStream every gateway applies it within about a second of the answer (its group cache; push groups
    within the bucket watch's latency), and webhook requests in flight finish and are answered by their
    outcome. Pausing a paused group changes nothing.

    Args:
        group (str):

    Raises:
        errors.UnexpectedStatus: If the server returns an undocumented status code and Client.raise_on_unexpected_status is True.
        httpx.TimeoutException: If the request takes longer than Client.timeout.

    Returns:
        Group | Problem
     """


    return sync_detailed(
        group=group,
client=client,

    ).parsed

async def asyncio_detailed(
    group: str,
    *,
    client: AuthenticatedClient,

) -> Response[Group | Problem]:
    """ Pause a consumer group

     The group hands out nothing until resumed: a receive waits out its waitSeconds and answers empty
    with reason PAUSED (GET of the group shows the same), and a push group's webhook gets no new
    request. Messages already received can still be acked, nacked and extended, and leases still expire.
    The pause is stored with the group before the answer (it survives restarts, and PUT keeps it). When
    it takes hold depends on the backend: the embedded server applies it before the answer (webhook
    requests in flight are aborted, and what they carried is delivered again after the resume); behind
    JetStream every gateway applies it within about a second of the answer (its group cache; push groups
    within the bucket watch's latency), and webhook requests in flight finish and are answered by their
    outcome. Pausing a paused group changes nothing.

    Args:
        group (str):

    Raises:
        errors.UnexpectedStatus: If the server returns an undocumented status code and Client.raise_on_unexpected_status is True.
        httpx.TimeoutException: If the request takes longer than Client.timeout.

    Returns:
        Response[Group | Problem]
     """


    kwargs = _get_kwargs(
        group=group,

    )

    response = await client.get_async_httpx_client().request(
        **kwargs
    )

    return _build_response(client=client, response=response)

async def asyncio(
    group: str,
    *,
    client: AuthenticatedClient,

) -> Group | Problem | None:
    """ Pause a consumer group

     The group hands out nothing until resumed: a receive waits out its waitSeconds and answers empty
    with reason PAUSED (GET of the group shows the same), and a push group's webhook gets no new
    request. Messages already received can still be acked, nacked and extended, and leases still expire.
    The pause is stored with the group before the answer (it survives restarts, and PUT keeps it). When
    it takes hold depends on the backend: the embedded server applies it before the answer (webhook
    requests in flight are aborted, and what they carried is delivered again after the resume); behind
    JetStream every gateway applies it within about a second of the answer (its group cache; push groups
    within the bucket watch's latency), and webhook requests in flight finish and are answered by their
    outcome. Pausing a paused group changes nothing.

    Args:
        group (str):

    Raises:
        errors.UnexpectedStatus: If the server returns an undocumented status code and Client.raise_on_unexpected_status is True.
        httpx.TimeoutException: If the request takes longer than Client.timeout.

    Returns:
        Group | Problem
     """


    return (await asyncio_detailed(
        group=group,
client=client,

    )).parsed
