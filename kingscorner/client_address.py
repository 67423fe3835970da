"""The client's address as the rate limits and the admin's login lockout both count it."""

from typing import cast

from django.http import HttpRequest
from rest_framework.request import Request
from rest_framework.throttling import BaseThrottle


def client_address(request: HttpRequest) -> str | None:
    """The connecting address, or with NUM_PROXIES proxies in front the address the outermost of them saw,
    read from the right of X-Forwarded-For so that a client cannot choose it (DRF's rule for throttles). None
    for a request that has no address, such as the one Django's test client makes to force a login."""
    # DRF reads only META, which Django's request has as DRF's does.
    address: str | None = BaseThrottle().get_ident(cast(Request, request))
    return address
