#!/bin/sh
exec "$(dirname "$0")/bin/unit-render" "$(dirname "$0")/fixtures"
