# Sourced by tests/cli/*.sh (this directory is not a test): refuse_platform NAME YAML NODES
# LINE_PATTERN MESSAGE_PATTERN checks that `rectwin platform YAML --nodes NODES` fails, says
# MESSAGE_PATTERN located at YAML's first line matching LINE_PATTERN (file:line:), and writes
# no platform. Uses the caller's $rectwin and $out.
refuse_platform() {
  rm -f "$out/refused.xml"
  if "$rectwin" platform "$2" --nodes "$3" -o "$out/refused.xml" 2>"$out/err"; then
    echo "$1: accepted"
    exit 1
  fi
  local line
  line=$(grep -n "$4" "$2" | head -1 | cut -d: -f1)
  grep -q "$(basename "$2"):$line:.*$5" "$out/err" || { echo "$1:"; cat "$out/err"; exit 1; }
  [ ! -e "$out/refused.xml" ] || { echo "$1: a refused platform was written"; exit 1; }
}
