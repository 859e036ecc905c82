from http import HTTPStatus
from typing import Any, cast
from urllib.parse import quote

import httpx

from ...client import AuthenticatedClient, Client
from ...types import Response, UNSET
from ... import errors

from ...models.dry_run_result import DryRunResult
from ...models.job import Job
from ...models.problem import Problem
from ...models.purge_request import PurgeRequest
from ...types import UNSET, Unset
from typing import cast



def _get_kwargs(
    topic: str,
    *,
    body: PurgeRequest | Unset = UNSET,

) -> dict[str, Any]:
    headers: dict[str, Any] = {}


    

    

    _kwargs: dict[str, Any] = {
        "method": "post",
        "url": "/v1/topics/{topic}/purge".format(topic=quote(str(topic), safe=""),),
    }

    
    if not isinstance(body, Unset):
        _kwargs["json"] = body.to_dict()

    headers["Content-Type"] = "application/json"

    _kwargs["headers"] = headers
    return _kwargs



def _parse_response(*, client: AuthenticatedClient | Client, response: httpx.Response) -> DryRunResult | Job | Problem | None:
    if response.status_code == 200:
        response_200 = DryRunResult.from_dict(response.json())



        return response_200

    if response.status_code == 202:
        response_202 = Job.from_dict(response.json())



        return response_202

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


def _build_response(*, client: AuthenticatedClient | Client, response: httpx.Response) -> Response[DryRunResult | Job | Problem]:
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
    body: PurgeRequest | Unset = UNSET,

) -> Response[DryRunResult | Job | Problem]:
    """ Purge a topic's messages by filter

     Messages of the topic that match the filter (all without one), among those stored when the job
    starts, are never delivered to any group again (nor shown when browsing); lookups by id or key find
    them until retention removes them, and messages already handed to a consumer are not recalled. With
    dryRun the answer is 200 {"matched"}; otherwise 202 and a job to follow at GET /v1/jobs/{id}.

    Args:
        topic (str):
        body (PurgeRequest | Unset):

    Raises:
        errors.UnexpectedStatus: If the server returns an undocumented status code and Client.raise_on_unexpected_status is True.
        httpx.TimeoutException: If the request takes longer than Client.timeout.

    Returns:
        Response[DryRunResult | Job | Problem]
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
    body: PurgeRequest | Unset = UNSET,

) -> DryRunResult | Job | Problem | None:
    """ Purge a topic's messages by filter

     Messages of the topic that match the filter (all without one), among those stored when the job
    starts, are never delivered to any group again (nor shown when browsing); lookups by id or key find
    them until retention removes them, and messages already handed to a consumer are not recalled. With
    dryRun the answer is 200 {"matched"}; otherwise 202 and a job to follow at GET /v1/jobs/{id}.

    Args:
        topic (str):
        body (PurgeRequest | Unset):

    Raises:
        errors.UnexpectedStatus: If the server returns an undocumented status code and Client.raise_on_unexpected_status is True.
        httpx.TimeoutException: If the request takes longer than Client.timeout.

    Returns:
        DryRunResult | Job | Problem
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
    body: PurgeRequest | Unset = UNSET,

) -> Response[DryRunResult | Job | Problem]:
    """ Purge a topic's messages by filter

     Messages of the topic that match the filter (all without one), among those stored when the job
    starts, are never delivered to any group again (nor shown when browsing); lookups by id or key find
    them until retention removes them, and messages already handed to a consumer are not recalled. With
    dryRun the answer is 200 {"matched"}; otherwise 202 and a job to follow at GET /v1/jobs/{id}.

    Args:
        topic (str):
        body (PurgeRequest | Unset):

    Raises:
        errors.UnexpectedStatus: If the server returns an undocumented status code and Client.raise_on_unexpected_status is True.
        httpx.TimeoutException: If the request takes longer than Client.timeout.

    Returns:
        Response[DryRunResult | Job | Problem]
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
    body: PurgeRequest | Unset = UNSET,

) -> DryRunResult | Job | Problem | None:
    """ Purge a topic's messages by filter

     Messages of the topic that match the filter (all without one), among those stored when the job
    starts, are never delivered to any group again (nor shown when browsing); lookups by id or key find
    them until retention removes them, and messages already handed to a consumer are not recalled. With
    dryRun the answer is 200 {"matched"}; otherwise 202 and a job to follow at GET /v1/jobs/{id}.

    Args:
        topic (str):
        body (PurgeRequest | Unset):

    Raises:
        errors.UnexpectedStatus: If the server returns an undocumented status code and Client.raise_on_unexpected_status is True.
        httpx.TimeoutException: If the request takes longer than Client.timeout.

    Returns:
        DryRunResult | Job | Problem
     """


    return (await asyncio_detailed(
        topic=topic,
client=client,
body=body,

    )).parsed
