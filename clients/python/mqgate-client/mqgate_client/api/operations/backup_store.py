from http import HTTPStatus
from typing import Any, cast
from urllib.parse import quote

import httpx

from ...client import AuthenticatedClient, Client
from ...types import Response, UNSET
from ... import errors

from ...models.problem import Problem
from ...types import File, FileTypes
from io import BytesIO
from typing import cast



def _get_kwargs(
    
) -> dict[str, Any]:
    

    

    

    _kwargs: dict[str, Any] = {
        "method": "get",
        "url": "/v1/admin/backup",
    }


    return _kwargs



def _parse_response(*, client: AuthenticatedClient | Client, response: httpx.Response) -> File | Problem | None:
    if response.status_code == 200:
        response_200 = File(
             payload = BytesIO(response.json())
        )



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


def _build_response(*, client: AuthenticatedClient | Client, response: httpx.Response) -> Response[File | Problem]:
    return Response(
        status_code=HTTPStatus(response.status_code),
        content=response.content,
        headers=response.headers,
        parsed=_parse_response(client=client, response=response),
    )


def sync_detailed(
    *,
    client: AuthenticatedClient,

) -> Response[File | Problem]:
    """ Back up the store

     Streams a consistent snapshot of the whole store file (bbolt, one read transaction) while the server
    keeps serving: it holds every message whose publish was answered before the request, and the
    consumer groups' state as committed then. Save it and start a server on it as mqgate.db to restore
    (docs/operations.md, "Backup and restore"); `mqgate backup --url` downloads and verifies it.
    Content-Length is the snapshot's size; a body cut short means the backup failed.

    Raises:
        errors.UnexpectedStatus: If the server returns an undocumented status code and Client.raise_on_unexpected_status is True.
        httpx.TimeoutException: If the request takes longer than Client.timeout.

    Returns:
        Response[File | Problem]
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

) -> File | Problem | None:
    """ Back up the store

     Streams a consistent snapshot of the whole store file (bbolt, one read transaction) while the server
    keeps serving: it holds every message whose publish was answered before the request, and the
    consumer groups' state as committed then. Save it and start a server on it as mqgate.db to restore
    (docs/operations.md, "Backup and restore"); `mqgate backup --url` downloads and verifies it.
    Content-Length is the snapshot's size; a body cut short means the backup failed.

    Raises:
        errors.UnexpectedStatus: If the server returns an undocumented status code and Client.raise_on_unexpected_status is True.
        httpx.TimeoutException: If the request takes longer than Client.timeout.

    Returns:
        File | Problem
     """


    return sync_detailed(
        client=client,

    ).parsed

async def asyncio_detailed(
    *,
    client: AuthenticatedClient,

) -> Response[File | Problem]:
    """ Back up the store

     Streams a consistent snapshot of the whole store file (bbolt, one read transaction) while the server
    keeps serving: it holds every message whose publish was answered before the request, and the
    consumer groups' state as committed then. Save it and start a server on it as mqgate.db to restore
    (docs/operations.md, "Backup and restore"); `mqgate backup --url` downloads and verifies it.
    Content-Length is the snapshot's size; a body cut short means the backup failed.

    Raises:
        errors.UnexpectedStatus: If the server returns an undocumented status code and Client.raise_on_unexpected_status is True.
        httpx.TimeoutException: If the request takes longer than Client.timeout.

    Returns:
        Response[File | Problem]
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

) -> File | Problem | None:
    """ Back up the store

     Streams a consistent snapshot of the whole store file (bbolt, one read transaction) while the server
    keeps serving: it holds every message whose publish was answered before the request, and the
    consumer groups' state as committed then. Save it and start a server on it as mqgate.db to restore
    (docs/operations.md, "Backup and restore"); `mqgate backup --url` downloads and verifies it.
    Content-Length is the snapshot's size; a body cut short means the backup failed.

    Raises:
        errors.UnexpectedStatus: If the server returns an undocumented status code and Client.raise_on_unexpected_status is True.
        httpx.TimeoutException: If the request takes longer than Client.timeout.

    Returns:
        File | Problem
     """


    return (await asyncio_detailed(
        client=client,

    )).parsed
