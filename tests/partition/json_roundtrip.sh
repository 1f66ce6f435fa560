#!/bin/sh
# Runs `cuboid partition --json` for every algorithm and both discretisations on a few shapes and
# checks each file with the independent Python checker. Usage: json_roundtrip.sh CUBOID PYTHON DIR
set -e
cuboid="$1"; python="$2"; dir="$3"
out="$(mktemp -d)"
trap 'rm -rf "$out"' EXIT
files=""
for alg in nrrp3d nrrp3d-2mode nrrp2d column slab grid; do
  for disc in precise rounded; do
    for dims in 12,12,12 6,6,40 20,20,3; do
      f="$out/$alg-$disc-$dims.json"
      "$cuboid" partition --dims "$dims" --speeds 100,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,3.5,7,0.5 \
        --algorithm "$alg" --discretize "$disc" --json "$f" > /dev/null
      files="$files $f"
    done
  done
done
"$python" "$dir/check_partition_json.py" $files
