#!/bin/sh
exec "$(dirname "$0")/bin/unit-tree" "$(dirname "$0")/fixtures"
