#!/usr/bin/env bash
# Runs a command, then says how long it took and how much CPU time it (with
# all that it started and waited for) used, as its last line:
#   [timed] LABEL: exit RC, WALL s, CPU s of CPU
# Usage: scripts/timed.sh LABEL command...
label=$1
shift
start=$SECONDS
rc=0
"$@" || rc=$?
times_file=$(mktemp)
times >"$times_file" # a builtin: this shell's children, not a subshell's
cpu=$(awk 'NR == 2 { gsub(/[ms]/, " "); printf "%d", $1 * 60 + $2 + $3 * 60 + $4 }' "$times_file")
rm -f "$times_file"
echo "[timed] $label: exit $rc, $((SECONDS - start)) s, $cpu s of CPU"
exit $rc
