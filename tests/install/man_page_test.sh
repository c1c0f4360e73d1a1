#!/usr/bin/env bash
# The man page documents every command 'ibnetsim --help' lists (a subsection ".SS "COMMAND ...") and the global
# options, and formats without warnings when groff is installed. Usage: man_page_test.sh IBNETSIM MAN_PAGE
set -euo pipefail
ibnetsim="$1"
page="$2"
help="$("$ibnetsim" --help)"
# The command list: the indented lines between "commands:" and the next blank line, first word of each.
# Here-strings, not pipes: awk and grep -q stop reading early, and under pipefail the writer's SIGPIPE would fail
# the test at random.
commands="$(awk '/^commands:/ {on = 1; next} on && /^$/ {exit} on && /^  [a-z]/ {print $1}' <<<"$help")"
[[ -n "$commands" ]] || { echo "FAIL: no commands found in 'ibnetsim --help'" >&2; exit 1; }
missing=0
for command in $commands; do
  if ! grep -qE "^\.SS \"?$command( |\"|$)" "$page"; then
    echo "FAIL: command '$command' (in ibnetsim --help) has no .SS section in $page" >&2
    missing=1
  fi
done
for word in data-dir IBNETSIM_DATA_DIR; do
  if ! grep -qF -- "$word" <<<"$help" || ! grep -qF -- "$word" <<<"$(sed 's/\\-/-/g' "$page")"; then
    echo "FAIL: '$word' is not in both 'ibnetsim --help' and $page" >&2
    missing=1
  fi
done
if command -v groff >/dev/null; then
  warnings="$(groff -man -Tutf8 -ww "$page" 2>&1 >/dev/null)"
  if [[ -n "$warnings" ]]; then
    echo "FAIL: groff warns about $page:" >&2
    echo "$warnings" >&2
    missing=1
  fi
fi
[[ "$missing" == 0 ]] && echo "man page documents: $(echo $commands)"
exit "$missing"
