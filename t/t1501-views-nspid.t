#!/bin/bash
# t1500 (views) again, every daemon it starts through test-lib under
# t/bin/helper-noioctl: the nsfs ioctls that translate numbers between
# PID namespaces fail with ENOTTY, as on a kernel before Linux 6.10, and
# the daemon must translate by the tasks' NSpid/NStgid lines and their
# /proc/PID/ns/pid (docs/containers.md: the `nspid` way of
# translating), pinned mounts of another
# namespace included. Then info must say "pidns_translate nspid"
# (t/lib-noioctl.sh). The trash directory is t/trash.t1501-views-nspid.
test_description='Views, as t1500: several PID namespaces read one
mount, and a mount pinned to one, with the daemon under helper-noioctl
(no nsfs ioctls that translate numbers: NSpid lines).'
. "$(dirname "$0")/lib-noioctl.sh"
. "$(dirname "$0")/t1500-views.t"
