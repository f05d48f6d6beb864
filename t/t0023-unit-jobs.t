#!/bin/sh
exec "$(dirname "$0")/bin/unit-jobs"
