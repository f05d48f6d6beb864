#!/bin/bash
# t2150 (identity) again, every daemon it starts through test-lib under
# t/bin/helper-noioctl: the nsfs ioctls fail with ENOTTY, as on a
# kernel before Linux 6.10, and the daemon translates numbers by the
# tasks' NSpid lines (t/lib-noioctl.sh). The trash directory is
# t/trash.t2151-hostile-identity-nspid.
test_description='Identity, as t2150, with the daemon under
helper-noioctl (no nsfs ioctls that translate numbers: NSpid lines).'
. "$(dirname "$0")/lib-noioctl.sh"
. "$(dirname "$0")/t2150-hostile-identity.t"
