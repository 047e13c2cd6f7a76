#!/usr/bin/env bash
# Every command has --help with an example; an unknown command or option names the closest
# valid one; the examples of the commands that write no file run as printed.
set -euo pipefail
rectwin=$1
src=$2
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
fail() {
  echo "FAIL: $*" >&2
  exit 1
}
commands=$("$rectwin" --help | awk '/^commands:/ { on = 1; next } on && /^  [a-z]/ { print $1 } /^$/ && on { on = 0 }')
[ -n "$commands" ] || fail "no commands listed by rectwin --help"
for c in $commands; do
  "$rectwin" "$c" --help >"$tmp/$c.help" 2>&1 || fail "$c --help: non-zero exit"
  grep -q '^example' "$tmp/$c.help" || fail "$c --help: no example"
done
# suggest CMD... EXPECTED: the command fails with exit 2 and names EXPECTED.
suggest() {
  local want=${*: -1} rc=0
  "${@:1:$#-1}" >"$tmp/s.out" 2>"$tmp/s.err" || rc=$?
  [ "$rc" -eq 2 ] || { cat "$tmp/s.err"; fail "$*: exit $rc, want 2"; }
  grep -q "did you mean '$want'" "$tmp/s.err" || { cat "$tmp/s.err"; fail "$*: no suggestion '$want'"; }
}
scn=$src/experiments/dlrm-criteo.yaml
suggest "$rectwin" smi sim
suggest "$rectwin" plan "$scn" --jsn --json
suggest "$rectwin" sim "$scn" --egnine analytic --engine
suggest "$rectwin" collective --topolgy x --topology
suggest "$rectwin" platform x --node 2 --nodes
suggest "$rectwin" partition "$scn" --tower 2 --towers
suggest "$rectwin" compare a b --tpo 3 --top
suggest "$rectwin" plot rooflin x roofline
suggest "$rectwin" plot timeline x --rank 2 --ranks
# The examples of plan and collective write nothing: run them as printed, from the source tree.
for c in plan collective; do
  cmd=$(sed -n '/^example/,$p' "$tmp/$c.help" | sed -n '2,$p' | sed 's/\\$//' | tr '\n' ' ')
  (cd "$src" && eval "\"$rectwin\" ${cmd#*rectwin }") >"$tmp/$c.example" 2>&1 ||
    { cat "$tmp/$c.example"; fail "$c: the --help example failed: $cmd"; }
done
echo "help: $(echo $commands | wc -w) commands with examples, suggestions and runnable examples"
