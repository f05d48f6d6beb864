#!/bin/sh
exec "$(dirname "$0")/bin/unit-engine" "$(dirname "$0")/fixtures"
