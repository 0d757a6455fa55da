#!/usr/bin/env bash
# Tracked files speak of the project, not of how it was made: no numbered
# work steps or issues, no document numbers, no "§" into documents outside
# the repository, no machine-specific paths or lock files. A line may stay
# when it contains one of the allowed phrases below (code that must keep a
# word, e.g. an accepted former parameter value).
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."
# Also: the names the project's source documents had while it was written
# (a "seed" layout, document, example), a document the repository does not
# ship ("RflySim wire protocol", "RflySim3D API document"; the vision
# protocol is cited with its public address), and the development machine ("these
# machines", "measured here").
pattern='\b(stops?|issues?|seeds?) ?[0-9]+\b|seed[0-9]{3}|§|\bsessions?\b|/work/|\bflock /|build\.lock'
pattern+='|seed_header|Seed(Frame|Layout|Example)|seeds?[ _](float|layout|document|example|frame|struct|object|value|defaults|style|dgrams|telemetry|thruster)'
pattern+='|RflySim3D API document|RflySim vision protocol, section|RflySim wire protocol|\btargets? (hold|holds|met|not met)\b|these machines|\b(measured|seen|tried|tested|cannot run|installable|untested) here\b'
allowed=(
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
