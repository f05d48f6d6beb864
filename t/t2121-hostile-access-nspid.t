#!/bin/bash
# t2120 (hostile tenants, access) again, every daemon it starts through
# test-lib under t/bin/helper-noioctl, as on a kernel before Linux 6.10:
# the views of the reopen attack and of the passes over /proc translate
# by NSpid lines, and there the passes are counted.
test_description='Hostile tenants, access, as t2120, with the daemon
under helper-noioctl (NSpid lines).'
. "$(dirname "$0")/lib-noioctl.sh"
. "$(dirname "$0")/t2120-hostile-access.t"
