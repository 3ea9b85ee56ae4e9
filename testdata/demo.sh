#!/bin/sh
# make demo: start medalliond on a throwaway data dir and socket, store a
# medallion, restart the daemon, update the medallion and show its history.
# Usage: sh testdata/demo.sh BIN_DIR
set -eu
bin=$(cd "${1:-bin}" && pwd)
here=$(cd "$(dirname "$0")" && pwd)
work=$(mktemp -d "${TMPDIR:-/tmp}/medallion-demo.XXXXXX")
sock="$work/run/medallion.sock"
ctl() { echo "\$ medallionctl $*"; "$bin/medallionctl" --socket "$sock" "$@"; echo; }
start() {
	"$bin/medalliond" run --data-dir "$work/data" --socket "$sock" --log-level warn &
	pid=$!
	"$bin/medallionctl" --socket "$sock" status --wait 30s >/dev/null 2>&1
}
stop() { kill -INT "$pid" 2>/dev/null && wait "$pid" 2>/dev/null || true; }
trap 'stop; rm -rf "$work"' EXIT INT TERM

echo "== medalliond on a fresh data dir: $work/data"
start
ctl status
ctl put -f "$here/medallions/muse.json"

echo "== restart the daemon: nothing is lost"
stop
start
ctl list --node repo:muse
ctl put -f "$here/medallions/muse-v2.json"
ctl show muse-project-state
ctl history muse-project-state
echo "== done; the demo data dir is removed on exit"
