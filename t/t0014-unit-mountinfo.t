#!/bin/sh
exec "$(dirname "$0")/bin/unit-mountinfo" "$(dirname "$0")/fixtures"
