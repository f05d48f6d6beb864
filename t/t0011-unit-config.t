#!/bin/sh
exec "$(dirname "$0")/bin/unit-config" "$(dirname "$0")/fixtures"
