#!/bin/bash
# t2000 (twenty containers attached to one daemon) again, every daemon
# it starts through test-lib under t/bin/helper-noioctl: the nsfs
# ioctls that translate numbers between PID namespaces fail with ENOTTY,
# as on a kernel before Linux 6.10 (t/lib-noioctl.sh), and each attached
# mount's view must translate by the NSpid lines.
test_description='Attached containers, as t2000, with the daemon under
helper-noioctl (no nsfs ioctls that translate numbers: NSpid lines).'
. "$(dirname "$0")/lib-noioctl.sh"
. "$(dirname "$0")/t2000-attach.t"
