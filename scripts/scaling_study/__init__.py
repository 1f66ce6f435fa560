"""scripts/scaling-study: scaling studies of cuboid's MPI layer (plan, collect, simulate)."""
