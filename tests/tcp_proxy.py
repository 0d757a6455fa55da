"""A TCP proxy between the bridge and its broker that behaves as a bad
network or a bad broker would: a delay each way (a slow link), bytes from
the broker one at a time (a peer that trickles), or connections accepted and
never answered (a broker that hangs). A test fixture, not a broker."""

import select
import socket
import threading
import time


class Proxy:
    def __init__(self, target_port, listen_port=None, delay=0.0, trickle=None):
        self.target = ("127.0.0.1", target_port)
        self.delay = delay  # seconds, each way
        self.trickle = trickle  # seconds between bytes from the broker, or None
        self.hang = False  # accept, read, never forward
        self.listener = socket.socket()
        self.listener.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        self.listener.bind(("127.0.0.1", listen_port or 0))
        self.listener.listen(64)
        self.port = self.listener.getsockname()[1]
        self.open = []
        self.lock = threading.Lock()
        self.running = True
        threading.Thread(target=self._accept, daemon=True).start()

    @property
    def bootstrap(self):
        return f"127.0.0.1:{self.port}"

    def cut(self):
        """Closes every connection made so far (new ones are still taken)."""
        with self.lock:
            for s in self.open:
                try:
                    s.shutdown(socket.SHUT_RDWR)
                except OSError:
                    pass
                s.close()
            self.open.clear()

    def close(self):
        self.running = False
        self.cut()
        self.listener.close()

    def _accept(self):
        while self.running:
            try:
                client, _ = self.listener.accept()
            except OSError:
                return
            try:
                upstream = socket.create_connection(self.target, timeout=5) if not self.hang else None
            except OSError:
                client.close()
                continue
            with self.lock:
                self.open += [s for s in (client, upstream) if s is not None]
            if upstream is None:
                threading.Thread(target=self._swallow, args=(client,), daemon=True).start()
                continue
            for a, b, slow in ((client, upstream, False), (upstream, client, True)):
                threading.Thread(target=self._pump, args=(a, b, slow), daemon=True).start()

    def _swallow(self, s):
        while self.running:
            try:
                if not s.recv(65536):
                    return
            except OSError:
                return

    def _pump(self, src, dst, from_broker):
        """Forwards src → dst in order, each chunk `delay` after it came."""
        queue, cond, done = [], threading.Condition(), [False]

        def writer():
            while True:
                with cond:
                    while not queue and not done[0]:
                        cond.wait()
                    if not queue:
                        return
                    due, data = queue.pop(0)
                wait = due - time.monotonic()
                if wait > 0:
                    time.sleep(wait)
                try:
                    if from_broker and self.trickle:
                        for i in range(len(data)):
                            dst.sendall(data[i:i + 1])
                            time.sleep(self.trickle)
                    elif self.hang:
                        continue
                    else:
                        dst.sendall(data)
                except OSError:
                    return

        threading.Thread(target=writer, daemon=True).start()
        while self.running:
            try:
                r, _, _ = select.select([src], [], [], 0.2)
                if not r:
                    continue
                data = src.recv(65536)
            except (OSError, ValueError):
                data = b""
            with cond:
                if not data:
                    done[0] = True
                    cond.notify()
                    break
                queue.append((time.monotonic() + self.delay, data))
                cond.notify()
        try:
            dst.shutdown(socket.SHUT_WR)
        except OSError:
            pass
