"""The Celery broker's transport (`CELERY_BROKER_TRANSPORT`): kombu's Redis transport, with the
defect that made a worker exit on a Redis restart corrected.

When the worker loses Redis, Celery's consumer collects the broken connection, which detaches its
transport (`transport.client = None`, kombu `Connection._do_close_transport`), and then closes it
(`Consumer.on_connection_error_after_connected`). A channel whose first close broke off, because
Redis refused the read of the BRPOP it had pending, is closed again then; the close puts its
unacknowledged messages back (`QoS.restore_unacked`: a job in flight, with `acks_late`), which
builds a connection pool from `self.connection.client`: None, so `AttributeError` in kombu's
`Channel._connparams`. No caller takes that for a broker error (`ignore_errors` lets only the
transport's connection and channel errors pass), and the worker's main process exits with
"Unrecoverable error". The acknowledgement of that job, sent through the same channel once it
finishes, failed the same way.

Here a channel keeps the parameters of the server it was opened on, so that once detached it
still reaches that server to put messages back and to acknowledge them, as kombu means it to; and
a channel that never knew them raises the transport's connection error, which kombu and Celery
handle as the broker being away. Either way the close goes on and the worker reconnects.
"""

from __future__ import annotations

from typing import Any

import redis
from kombu.transport import redis as kombu_redis


class Channel(kombu_redis.Channel):
    _server: dict[str, Any] | None = None

    def _connparams(self, asynchronous: bool = False) -> dict[str, Any]:
        """The parameters of a new connection pool: the parent's, or once the channel was closed or
        detached from its connection, those of the server it was opened on (synchronous commands
        only: a detached channel no longer polls).

        Raises redis.ConnectionError when the channel is detached and never had a pool of its own."""
        transport = self.connection
        if transport is not None and transport.client is not None:
            # celery-types describes no `_connparams`; kombu 5.7.0 has it (kombu/transport/redis.py).
            params: dict[str, Any] = super()._connparams(asynchronous=asynchronous)  # type: ignore[misc]
            if not asynchronous:
                self._server = dict(params)
            return params
        if self._server is None or asynchronous:
            raise redis.ConnectionError("the channel's broker connection was closed")
        return dict(self._server)


class Transport(kombu_redis.Transport):
    Channel = Channel
