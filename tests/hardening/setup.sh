#!/usr/bin/env bash
# Prepares the scratch directory (the current one) of a hardening test: setup.sh NAME.
# $CUBOID is the program, $DECKS the decks folder, $CUBOID_CACHE_DIR the test's speed cache.
set -euo pipefail
poison() {  # poison VALUE_FOR_HOST VALUE_FOR_OTHERS: a measured cache, then edited
  "$CUBOID" calibrate "$DECKS/measured.toml" >/dev/null 2>&1
  python3 - "$CUBOID_CACHE_DIR/speeds.json" "$1" "$2" <<'PY'
import json, sys
path, host, other = sys.argv[1], float(sys.argv[2]), float(sys.argv[3])
with open(path) as f:
    j = json.load(f)
for key in j["speeds"]:
    j["speeds"][key] = host if "|host|" in key else other
with open(path, "w") as f:
    json.dump(j, f)
PY
}
case "$1" in
  fifo) mkfifo fifo.toml ;;
  big-deck) { echo '[problem]'; head -c 2000000 /dev/zero | tr '\0' '#'; echo; } > big.toml ;;
  binary-deck) head -c 4096 /dev/urandom > binary.toml ;;
  nul-deck) printf '[problem]\nm = 64\0\n' > nul.toml ;;
  subdir) mkdir sub ;;
  non-ascii-deck) printf '\n\xc7\x9c\x00' > uni.toml ;;
  non-ascii-string) printf '[problem]\nc_init = \"\"\"\\\n\xc2\xa7\"\"\"\n' > ml.toml ;;
  non-ascii-comment) printf '# \xc2\xa7 comments may hold any character\n[problem] # \xc2\xa7\nm = 64 # \xc2\xa7\nn = "a#b" # \xc2\xa7\n' > comment.toml ;;
  speeds-fifo) mkfifo speeds.txt ;;
  many-speeds) python3 -c 'print(",".join(["1"] * 20001))' > speeds.txt ;;
  existing-record) echo '{"old": true}' > old.json ;;
  cache-negative) poison -5 -5 ;;
  cache-zero) poison 0 1 ;;
  cache-huge) poison 1e300 1 ;;
  cache-spread) poison 1e-300 1 ;;
  *) echo "setup.sh: unknown setup '$1'" >&2; exit 2 ;;
esac
