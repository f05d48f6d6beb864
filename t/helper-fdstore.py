#!/usr/bin/python3
"""helper-fdstore: systemd's side of a service's descriptor store.

usage: helper-fdstore.py DIR CMD...

Runs CMD (a daemon that stays in the foreground) as systemd runs a
service with FileDescriptorStoreMax=: NOTIFY_SOCKET names a socket of
this helper's, which keeps the descriptors sent with FDSTORE=1 under
their FDNAME and drops those named by FDSTOREREMOVE=1. Then, on a line
on stdin:

  restart   as `systemctl restart` with RestartKillSignal=SIGUSR1: the
            daemon gets SIGUSR1, must exit 0 within 10 s; CMD starts
            again with the kept descriptors from 3 on, LISTEN_FDS,
            LISTEN_FDNAMES and LISTEN_PID set
  stop      SIGTERM, then the store is emptied; the exit status is said
  names     the names kept, sorted, on one line

Writes the daemon's pid to DIR/pid whenever one starts, and a line to
stdout for every command done ("restarted STATUS", "stopped STATUS",
"names ...").
"""
import array
import fcntl
import os
import signal
import socket
import subprocess
import sys
import threading
import time


def main():
    d, cmd = sys.argv[1], sys.argv[2:]
    path = os.path.join(d, "notify.sock")
    sock = socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM)
    sock.bind(path)
    store = []  # (name, fd), in the order kept
    lock = threading.Lock()

    def listen():
        while True:
            fds = array.array("i")
            msg, anc, _, _ = sock.recvmsg(4096, socket.CMSG_SPACE(64 * 4))
            for level, kind, data in anc:
                if level == socket.SOL_SOCKET and kind == socket.SCM_RIGHTS:
                    fds.frombytes(data[:len(data) - len(data) % 4])
            fields = dict(line.split("=", 1)
                          for line in msg.decode().split("\n") if "=" in line)
            name = fields.get("FDNAME", "stored")
            with lock:
                if fields.get("FDSTOREREMOVE") == "1":
                    for n, fd in [e for e in store if e[0] == name]:
                        os.close(fd)
                        store.remove((n, fd))
                if fields.get("FDSTORE") == "1":
                    for fd in fds:
                        store.append((name, fd))
                else:
                    for fd in fds:
                        os.close(fd)

    threading.Thread(target=listen, daemon=True).start()
    env = dict(os.environ, NOTIFY_SOCKET=path)

    def start(kept):
        # The kept descriptors at 3, 4, ...: bash moves them there
        # from above any of its targets, and closes the originals.
        high = [fcntl.fcntl(fd, fcntl.F_DUPFD_CLOEXEC, 1000) for fd in kept]
        moves = " ".join(f"{3 + i}<&{fd} {fd}<&-"
                         for i, fd in enumerate(high))
        e = dict(env)
        if kept:
            e["LISTEN_FDS"] = str(len(kept))
            e["LISTEN_FDNAMES"] = ":".join(n for n, _ in kept_named)
        script = (f"exec {moves}; " if moves else "") + \
            'export LISTEN_PID=$$; exec "$0" "$@"'
        p = subprocess.Popen(["bash", "-c", script] + cmd, env=e,
                             pass_fds=high)
        for fd in high:
            os.close(fd)
        with open(os.path.join(d, "pid"), "w") as f:
            f.write(f"{p.pid}\n")
        return p

    kept_named = []
    proc = start([])
    for line in sys.stdin:
        word = line.strip()
        if word == "restart":
            proc.send_signal(signal.SIGUSR1)
            try:
                status = proc.wait(10)
            except subprocess.TimeoutExpired:
                proc.kill()
                status = proc.wait()
            time.sleep(0.1)  # the last messages, if any
            with lock:
                kept_named = list(store)
            proc = start([fd for _, fd in kept_named])
            print(f"restarted {status}", flush=True)
        elif word == "stop":
            proc.send_signal(signal.SIGTERM)
            try:
                status = proc.wait(20)
            except subprocess.TimeoutExpired:
                proc.kill()
                status = proc.wait()
            with lock:
                for _, fd in store:
                    os.close(fd)
                store.clear()
            print(f"stopped {status}", flush=True)
            return 0
        elif word == "names":
            with lock:
                names = sorted(n for n, _ in store)
            print("names " + " ".join(names), flush=True)
    proc.kill()
    return 0


if __name__ == "__main__":
    sys.exit(main())
