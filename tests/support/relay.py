"""Test tooling: a TCP relay in front of a server, standing for one client's network, which a test can cut
(every connection through it closed at once, and any new one closed as it arrives) and restore. A browser's
offline emulation alone fails only new requests: a stream already open would go on receiving."""

import socket
import threading


class Relay:
    """Relays connections on `port` to 127.0.0.1:`target_port`, byte for byte, until cut."""

    def __init__(self, target_port: int) -> None:
        self.target_port = target_port
        self.listener = socket.create_server(("127.0.0.1", 0))
        self.port = int(self.listener.getsockname()[1])
        self.base_url = f"http://127.0.0.1:{self.port}"
        self._lock = threading.Lock()
        self._open: set[socket.socket] = set()
        self._cut = False
        self._closed = False
        threading.Thread(target=self._accept, name="relay", daemon=True).start()

    def _accept(self) -> None:
        while True:
            try:
                client, _ = self.listener.accept()
            except OSError:
                return
            with self._lock:
                if self._cut or self._closed:
                    client.close()
                    continue
            try:
                upstream = socket.create_connection(("127.0.0.1", self.target_port), timeout=10)
            except OSError:
                client.close()
                continue
            upstream.settimeout(None)
            with self._lock:
                self._open |= {client, upstream}
            for source, sink in ((client, upstream), (upstream, client)):
                threading.Thread(target=self._pump, args=(source, sink), daemon=True).start()

    def _pump(self, source: socket.socket, sink: socket.socket) -> None:
        try:
            while data := source.recv(65536):
                sink.sendall(data)
        except OSError:
            pass
        finally:
            self._close(source, sink)

    def _close(self, *sockets: socket.socket) -> None:
        with self._lock:
            self._open -= set(sockets)
        for sock in sockets:
            try:
                sock.shutdown(socket.SHUT_RDWR)
            except OSError:
                pass
            sock.close()

    def cut(self) -> None:
        """The network is gone: every connection through the relay ends, and no new one gets through."""
        with self._lock:
            self._cut = True
            cut = set(self._open)
        self._close(*cut)

    def restore(self) -> None:
        with self._lock:
            self._cut = False

    def close(self) -> None:
        with self._lock:
            self._closed = True
        self.listener.close()
        self.cut()
