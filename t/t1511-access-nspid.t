#!/bin/bash
# t1510 (access) again, every daemon it starts through test-lib under
# t/bin/helper-noioctl, as on a kernel before Linux 6.10: hidepid's
# views of one user (proc/ as nobody sees it, proc/self of a reader)
# are views too, made by the daemon that translates by NSpid lines.
# Then info must say "pidns_translate nspid" (t/lib-noioctl.sh). The
# trash directory is t/trash.t1511-access-nspid.
test_description='Access, as t1510: hidepid and gid read by real users,
with the daemon under helper-noioctl (no nsfs ioctls that translate
numbers: NSpid lines).'
. "$(dirname "$0")/lib-noioctl.sh"
. "$(dirname "$0")/t1510-access.t"
