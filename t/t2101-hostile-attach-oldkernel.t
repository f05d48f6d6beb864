#!/bin/bash
# t2100 again, with the daemon as on a kernel before Linux 5.2 (RHEL 8's
# 4.18): no mount API, so a child mounts with mount(2) on the directory
# it reached and sends the new mount's root back as its identity; no
# pidfd, so the end of a container and of a child are polled for.
TEST_DAEMON_OLDKERNEL=1
if ! "$(dirname "$0")/bin/helper-oldkernel" true; then
	echo "1..0 # SKIP helper-oldkernel cannot install its filter here"
	exit 0
fi
. "$(dirname "$0")/t2100-hostile-attach.t"
