#!/bin/sh
# Draws docs/img/discretise-<d>.svg: the same instance (one processor x100 and twenty equal ones,
# nrrp3d on 16^3 tiles) under every discretisation, for docs/partition.md.
# Usage: bench/partition/discretisation_figures.sh [path to cuboid] (default build/bin/cuboid)
set -eu
cuboid=${1:-build/bin/cuboid}
speeds=100$(printf ',1%.0s' $(seq 20))
for d in none rounded precise stepped; do
  "$cuboid" partition --dims 16,16,16 --speeds "$speeds" --algorithm nrrp3d --discretize "$d" \
    --svg "docs/img/discretise-$d.svg" --rows 0 | tail -n 1
done
