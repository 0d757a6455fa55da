"""A TCP proxy between the bridge and its broker that behaves as a bad
network or a bad broker would: a delay each way (a slow link, which still
delivers what was sent before a connection closed), one request held up on
its connection (a stalled link), bytes from the broker one at a time (a peer
that trickles), or connections accepted and never answered (a broker that
hangs). It also notes when requests carrying given bytes (a topic's name)
went by. A test fixture, not a broker."""

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
        self.stalls = []  # [marker, seconds]: the next request carrying marker waits that much longer
        self.watched = {}  # marker -> monotonic times of the requests that carried it
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

    def stall(self, marker, seconds):
        """Holds the next request that carries `marker` `seconds` longer, and
        what follows it on its connection behind it."""
        with self.lock:
            self.stalls.append([marker, seconds])

    def watch(self, marker):
        """From now on, notes when a request carrying `marker` went by (`seen`)."""
        with self.lock:
            self.watched.setdefault(marker, [])

    def seen(self, marker):
        with self.lock:
            return list(self.watched.get(marker, []))

    def _to_broker(self, data):
        """The extra delay of a chunk on its way to the broker; notes what it carries."""
        now, extra = time.monotonic(), 0.0
        with self.lock:
            for marker, times in self.watched.items():
                if marker in data:
                    times.append(now)
            for stall in list(self.stalls):
                if stall[0] in data:
                    extra = max(extra, stall[1])
                    self.stalls.remove(stall)
        return extra

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
        """Forwards src → dst in order, each chunk `delay` after it came (a
        stalled one later, and what follows it behind it); once src closed,
        what was sent before goes on, then dst is closed for writing."""
        queue, cond, done = [], threading.Condition(), [False]

        def writer():
            while True:
                with cond:
                    while not queue and not done[0]:
                        cond.wait()
                    if not queue:
                        try:
                            dst.shutdown(socket.SHUT_WR)
                        except OSError:
                            pass
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
            extra = 0.0 if from_broker or not data else self._to_broker(data)
            with cond:
                if not data:
                    done[0] = True
                    cond.notify()
                    break
                queue.append((time.monotonic() + self.delay + extra, data))
                cond.notify()
