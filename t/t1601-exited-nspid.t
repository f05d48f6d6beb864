#!/bin/bash
# t1600 (exited tasks) again, every daemon it starts through test-lib
# under t/bin/helper-noioctl, as on a kernel before Linux 6.10: a kept
# task of a PID namespace under its numbers there, and a kept task of
# the host that is none of a namespace's, with the daemon translating
# by NSpid lines. The whole of t1600 runs: its other tests are the
# ground that nothing else changed. Then info must say
# "pidns_translate nspid" (t/lib-noioctl.sh). The trash directory is
# t/trash.t1601-exited-nspid.
test_description='Exited tasks, as t1600, kept ones of a PID namespace
included, with the daemon under helper-noioctl (no nsfs ioctls that
translate numbers: NSpid lines).'
. "$(dirname "$0")/lib-noioctl.sh"
. "$(dirname "$0")/t1600-exited.t"
