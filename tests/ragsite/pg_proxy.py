"""A TCP port in front of the real embedded PostgreSQL that drops connections on demand."""

from __future__ import annotations

import contextlib
import socket
import threading
from pathlib import Path

import pytest
from django.db import connection


class DroppingProxy:
    """Listens on 127.0.0.1 and forwards each connection to PostgreSQL's Unix socket, except the
    first `drop_first` connections, which are closed before a byte is answered (a server that
    refuses or drops new connections). `sever()` cuts every open connection (a lost connection).
    `accepted` counts every connection attempt."""

    def __init__(self, socket_path: Path, *, drop_first: int = 0):
        self.socket_path = str(socket_path)
        self.drop_first = drop_first
        self.accepted = 0
        self._open: list[socket.socket] = []
        self._lock = threading.Lock()
        self._listener = socket.create_server(("127.0.0.1", 0))
        self.port = self._listener.getsockname()[1]
        threading.Thread(target=self._accept_forever, daemon=True).start()

    def _accept_forever(self) -> None:
        while True:
            try:
                client, _ = self._listener.accept()
            except OSError:  # closed
                return
            with self._lock:
                self.accepted += 1
                drop = self.drop_first > 0
                self.drop_first -= drop
            if drop:
                client.close()
                continue
            upstream = socket.socket(socket.AF_UNIX)
            upstream.connect(self.socket_path)
            with self._lock:
                self._open += [client, upstream]
            for source, target in ((client, upstream), (upstream, client)):
                threading.Thread(target=_pump, args=(source, target), daemon=True).start()

    def sever(self) -> None:
        """Cut every open connection, as a network failure or server restart would."""
        with self._lock:
            sockets, self._open = self._open, []
        for sock in sockets:
            _shut(sock)

    def close(self) -> None:
        self._listener.close()
        self.sever()


def _pump(source: socket.socket, target: socket.socket) -> None:
    with contextlib.suppress(OSError):
        while data := source.recv(65536):
            target.sendall(data)
    _shut(source)
    _shut(target)


def _shut(sock: socket.socket) -> None:
    with contextlib.suppress(OSError):
        sock.shutdown(socket.SHUT_RDWR)  # wakes the pump blocked in recv()
    sock.close()


def postgres_socket() -> str:
    """The Unix socket the test database server listens on."""
    return f"{connection.settings_dict['HOST']}/.s.PGSQL.{connection.settings_dict['PORT'] or 5432}"


@pytest.fixture
def proxy():
    """A DroppingProxy in front of the test database server; set `drop_first` before connecting."""
    started = DroppingProxy(postgres_socket())
    yield started
    started.close()


@pytest.fixture
def default_db_through(proxy, transactional_db):
    """The default connection goes through `proxy` from its next query on (committed data, since
    a new connection cannot see a test transaction)."""
    saved = dict(connection.settings_dict)
    connection.close()
    connection.settings_dict.update(HOST="127.0.0.1", PORT=str(proxy.port))
    yield proxy
    connection.close()
    connection.settings_dict.clear()
    connection.settings_dict.update(saved)
