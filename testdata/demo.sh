#!/bin/sh
# make demo: the whole product in one command. It starts medalliond on a
# throwaway data dir and socket, watching a throwaway transcripts folder;
# replays a Claude Code session (testdata/demo/) into that folder line by
# line, the way the agent writes it; checkpoints it; and prints what the
# next session would start with (medallionctl load), then how the medallion
# evolved when the session went on (history and diff). It says when the
# daemon checkpointed by itself (a version number that jumps), and shows
# the SessionStart hook's JSON: what Claude Code hands the agent.
#
# Usage: sh testdata/demo.sh BIN_DIR
# MEDALLION_DEMO_DELAY sets the pause between two transcript lines
# (default 0.05 s). Nothing is left behind: the daemon is stopped and the
# temp dir removed on exit, whatever happens.
set -eu
bin=$(cd "${1:-bin}" && pwd)
here=$(cd "$(dirname "$0")" && pwd)
delay=${MEDALLION_DEMO_DELAY:-0.05}
# A short path: a Unix socket path must fit in about 100 bytes.
work=$(mktemp -d "${TMPDIR:-/tmp}/med-demo.XXXXXX")
sock="$work/d.sock"
repo="$work/muse"
pid=

cleanup() {
	if [ -n "$pid" ]; then
		kill -INT "$pid" 2>/dev/null || true
		wait "$pid" 2>/dev/null || true
	fi
	rm -rf "$work"
}
# Every way out runs cleanup, including a closed stdout (demo.sh | head).
trap cleanup EXIT
trap 'exit 129' HUP
trap 'exit 130' INT
trap 'exit 141' PIPE
trap 'exit 143' TERM

fail() {
	echo "demo: $*" >&2
	if [ -s "$work/daemon.log" ]; then
		echo "demo: medalliond's log:" >&2
		sed 's/^/  /' "$work/daemon.log" >&2
	fi
	exit 1
}

# mctl runs medallionctl quietly; ctl shows the command line first.
mctl() { "$bin/medallionctl" --socket "$sock" "$@"; }
ctl() {
	echo "\$ medallionctl $*"
	mctl "$@" || fail "medallionctl $* failed"
	echo
}

# waitfor PATTERN ARGS...: run medallionctl ARGS until its output contains
# PATTERN (a fixed string), for at most 30 s.
waitfor() {
	pattern=$1
	shift
	i=0
	until mctl "$@" 2>/dev/null | grep -qF -- "$pattern"; do
		i=$((i + 1))
		[ "$i" -lt 300 ] || fail "no \"$pattern\" in medallionctl $* after 30 s"
		sleep 0.1
	done
}

# The project the agent works on: a git repository, so its scope is
# repo:muse. Without git a scope rule says the same.
mkdir -p "$repo" "$work/claude/projects"
scope_rule=
if command -v git >/dev/null 2>&1; then
	git init -q "$repo"
else
	scope_rule="scope_rule \"muse\" {
  path  = \"$repo\"
  nodes = [\"repo:muse\"]
}"
fi

# Claude Code keeps one folder per project, named after its path.
session=3c9d2f6e-8a41-4b7c-9e15-6d2a7f0b4c81
transcript="$work/claude/projects/$(printf '%s' "$repo" | tr '/.' '--')/$session.jsonl"
mkdir -p "$(dirname "$transcript")"

cat >"$work/config.hcl" <<HCL
data_dir  = "$work/data"
socket    = "$sock"
log_level = "warn"

watch "claude-code" {
  path   = "$work/claude/projects"
  format = "claude-code"
}
$scope_rule
# Checkpoint when the session has been quiet for 3 s (and on the
# significant events: an error fixed, a user correction); the demo also
# asks for checkpoints itself rather than wait.
checkpoint {
  every_events = 0
  idle         = "3s"
}
HCL

echo "== medalliond on a fresh data dir, watching $work/claude/projects"
"$bin/medalliond" run --config "$work/config.hcl" 2>"$work/daemon.log" &
pid=$!
mctl status --wait 30s >/dev/null 2>&1 || fail "medalliond did not start"

# replay FILE: append FILE to the session transcript one line at a time,
# the way Claude Code writes it, with the session's cwd put in and its
# timestamps moved to the last hour (GNU date, else BSD date).
cwd_sed=$(printf '%s' "$repo" | sed 's/[&|\\]/\\&/g')
hour_ago=$(($(date -u +%s) - 3600))
hour=$(date -u -d "@$hour_ago" +%Y-%m-%dT%H 2>/dev/null || date -u -r "$hour_ago" +%Y-%m-%dT%H)
replay() {
	sed -e "s|__CWD__|$cwd_sed|g" -e "s|__DATEHOUR__|$hour|g" "$1" >"$work/replay.jsonl"
	while IFS= read -r line; do
		printf '%s\n' "$line" >>"$transcript"
		sleep "$delay"
	done <"$work/replay.jsonl"
	# Wait until the daemon has read the last line: its timestamp (to the
	# second) is the session's last event.
	last=$(tail -n 1 "$work/replay.jsonl" | sed 's/.*"timestamp":"\([0-9T:-]*\).*/\1/')
	waitfor "\"last_event_at\": \"$last" session show "$session" -o json
}

echo "== an agent works in $repo: a failing test, a fix, a user correction, a todo list, an approved plan"
replay "$here/demo/session.jsonl"
ctl sessions
ctl checkpoint --session "$session"

# The medallion of repo:muse and the version the first part ended with
# (the significant events may have checkpointed before the demo asked).
mctl list --node repo:muse -o json >"$work/list.json"
id=$(sed -n 's/.*"medallion_id": "\([^"]*\)".*/\1/p' "$work/list.json" | head -n 1)
first=$(sed -n 's/^ *"version": \([0-9]*\).*/\1/p' "$work/list.json" | head -n 1)
[ -n "$id" ] && [ -n "$first" ] || fail "the checkpoint stored no medallion for repo:muse"
# auto SINCE NOW MANUAL: say so when the version jumped by more than the
# checkpoints the demo asked for (MANUAL): the daemon checkpointed by
# itself meanwhile.
auto() {
	n=$(($2 - $1 - $3))
	if [ "$n" -gt 0 ]; then
		times=times; [ "$n" -eq 1 ] && times=time
		echo "(version $2, not $(($1 + $3)): the daemon also checkpointed $n $times by itself while the"
		echo " session ran — an error followed by its fix and a user correction are significant"
		echo " events, curated at once; \"medallionctl history $id\" lists every version)"
		echo
	fi
}
auto 0 "$first" 1

echo "== what the next session in $repo starts with"
ctl load --node repo:muse

# What Claude Code itself runs at SessionStart (medallionctl integrate
# claude-code installs it) and hands the agent: the same save file, as the
# hook's JSON.
hook_input="{\"session_id\":\"next-session\",\"cwd\":\"$repo\",\"hook_event_name\":\"SessionStart\",\"source\":\"startup\"}"
echo "== what the agent receives: Claude Code runs the SessionStart hook with"
echo "   $hook_input"
echo "\$ medallionctl hook claude-code"
printf '%s' "$hook_input" | mctl hook claude-code || fail "medallionctl hook claude-code failed"
echo
echo

echo "== the session goes on: the regression test, a go vet error fixed, a new rule"
replay "$here/demo/session-2.jsonl"
ctl checkpoint --session "$session"

mctl list --node repo:muse -o json >"$work/list.json"
second=$(sed -n 's/^ *"version": \([0-9]*\).*/\1/p' "$work/list.json" | head -n 1)
auto "$first" "$second" 1

echo "== how the medallion evolved"
ctl history "$id"
ctl diff "$id" --from "$first"
ctl load --node repo:muse
echo "== done; the daemon is stopped and $work removed on exit"
