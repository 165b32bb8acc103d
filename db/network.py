"""How a failed connection failed, for the HTTP clients of `collectors` and `runners`: a host
that cannot be reached at all (refused, no route, unknown name, connect timeout) is reported
at once, while a connection that broke mid-way is worth retrying like a 5xx. In `db` because
both packages need it and `db` is the one package both may import; it imports no HTTP
library, it only reads the exception."""
from __future__ import annotations

CONNECT_TIMEOUT_S = 5.0  # how long opening a connection may take before the host is unreachable

_SIGNS = (("ConnectTimeout", "connection timed out"),
          ("Connection refused", "connection refused"),
          ("No route to host", "no route to host"),
          ("Network is unreachable", "network is unreachable"),
          ("NameResolutionError", "unknown host name"),
          ("Name or service not known", "unknown host name"),
          ("nodename nor servname", "unknown host name"),
          ("Temporary failure in name resolution", "unknown host name"))


def unreachable(exc: BaseException) -> str | None:
    """Why the host could not be reached, or None when the failure came later."""
    text = f"{type(exc).__name__} {exc!r}"
    for sign, reason in _SIGNS:
        if sign in text:
            return reason
    return None
