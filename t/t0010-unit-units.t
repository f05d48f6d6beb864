#!/bin/sh
exec "$(dirname "$0")/bin/unit-units" "$(dirname "$0")/fixtures"
