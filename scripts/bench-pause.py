#!/usr/bin/python3
"""bench-pause: the pause a reader sees when timingfs's server is killed.

usage: bench-pause.py MNT SUPERVISOR_PID KILLS

A reader thread opens, reads and closes MNT/proc/1/cycles in a loop and
notes when each read ended. The main thread kills the server (the
supervisor's child named timingfs) with SIGKILL KILLS times, 0.2 to 0.5 s
apart, each once the last kill's successor serves. For each kill, the
pause is the reader's gap around it: from its last answer before the kill
to its first after. Prints the median and the worst pause of the kills,
the reader's usual gap for scale, and its errors (any is a failure:
exit 1).
"""
import os
import random
import signal
import statistics
import sys
import threading
import time


def server_of(sup):
    with open(f"/proc/{sup}/task/{sup}/children") as f:
        for pid in f.read().split():
            try:
                with open(f"/proc/{pid}/comm") as c:
                    if c.read().strip() == "timingfs":
                        return int(pid)
            except OSError:
                pass
    return None


def starts(mnt):
    with open(f"{mnt}/info") as f:
        for line in f:
            if line.startswith("server_starts "):
                return int(line.split()[1])
    return 0


def main():
    mnt, sup, kills = sys.argv[1], int(sys.argv[2]), int(sys.argv[3])
    path = f"{mnt}/proc/1/cycles"
    done = []
    errors = []
    stop = threading.Event()

    def reader():
        while not stop.is_set():
            try:
                with open(path, "rb") as f:
                    data = f.read()
                if not data.endswith(b"\n") or not data[:-1].isdigit():
                    errors.append(f"bad content {data!r}")
            except OSError as e:
                errors.append(str(e))
            done.append(time.monotonic_ns())

    t = threading.Thread(target=reader)
    t.start()
    killed = []
    for _ in range(kills):
        time.sleep(random.uniform(0.2, 0.5))
        before = starts(mnt)
        srv = server_of(sup)
        if srv is None:
            errors.append("no server")
            break
        killed.append(time.monotonic_ns())
        os.kill(srv, signal.SIGKILL)
        deadline = time.monotonic() + 10
        while starts(mnt) != before + 1 and time.monotonic() < deadline:
            time.sleep(0.005)
    time.sleep(0.3)
    stop.set()
    t.join()
    pauses = []
    for k in killed:
        before = [d for d in done if d <= k]
        after = [d for d in done if d > k]
        if before and after:
            pauses.append((after[0] - before[-1]) / 1e6)
    gaps = [(b - a) / 1e6 for a, b in zip(done, done[1:])]
    print(f"kills {len(killed)}, reads {len(done)}, errors {len(errors)}")
    if pauses:
        print(f"pause at a kill: median {statistics.median(pauses):.1f} ms,"
              f" worst {max(pauses):.1f} ms"
              f" (a read's usual gap {statistics.median(gaps):.3f} ms)")
    for e in errors[:5]:
        print(f"error: {e}")
    return 1 if errors or len(pauses) != kills else 0


if __name__ == "__main__":
    sys.exit(main())
