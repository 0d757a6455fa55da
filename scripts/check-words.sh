#!/usr/bin/env bash
# Tracked files speak of the project, not of how it was made: no numbered
# work steps or issues, no document numbers, no "§" into documents outside
# the repository, no machine-specific paths or lock files. A line may stay
# when it contains one of the allowed phrases below (code that must keep a
# word, e.g. an accepted former parameter value).
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."
pattern='\b(stops?|issues?|seeds?) ?[0-9]+\b|seed[0-9]{3}|§|\bsessions?\b|/work/|\bflock /|build\.lock'
allowed=(
  'FORMER_PROTOCOL_NAME: &str = "seed000"'   # the former gimbal_bits value, still accepted
  'the protocol table'"'"'s former name'
  'is not one of protocol, seed000, sdk'
  'gimbal_bits:=seed000'
  '`seed000` is accepted as its former name'
  '@pytest.fixture(scope="session")'
  'check-words.sh'
)
found=$(git grep -n -I -i -E "$pattern" -- . ':!scripts/check-words.sh' ':!Cargo.lock' || true)
for phrase in "${allowed[@]}"; do
  found=$(printf '%s\n' "$found" | grep -v -F -- "$phrase" || true)
done
found=$(printf '%s\n' "$found" | sed '/^$/d')
if [ -n "$found" ]; then
  echo "words about how the project was made, not about the project:"
  printf '%s\n' "$found"
  exit 1
fi
echo "[words] no work steps, issue or document numbers, or machine paths in tracked files"
