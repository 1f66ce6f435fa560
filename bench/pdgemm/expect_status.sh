#!/bin/sh
# expect_status.sh STATUS TEXT COMMAND...: passes when COMMAND exits with STATUS and its output
# (stdout and stderr) contains TEXT.
want=$1 text=$2
shift 2
out=$("$@" 2>&1)
got=$?
printf '%s\n' "$out"
[ "$got" -eq "$want" ] || { echo "expect_status: exit status $got, expected $want" >&2; exit 1; }
case "$out" in *"$text"*) ;; *) false ;; esac || { echo "expect_status: output lacks: $text" >&2; exit 1; }
