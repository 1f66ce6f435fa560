// GoogleTest main for collective tests under mpirun: MPI and Kokkos initialised once, every rank
// runs every test, only rank 0 prints, and a failure on any rank fails the program.
#include <gtest/gtest.h>

#include <Kokkos_Core.hpp>

#include "mpi/communicator.hpp"

int main(int argc, char** argv) {
  cuboid::mpi::MpiSession mpi;
  Kokkos::ScopeGuard kokkos(argc, argv);
  ::testing::InitGoogleTest(&argc, argv);
  const cuboid::mpi::Communicator world;
  if (world.rank() != 0) {
    auto& listeners = ::testing::UnitTest::GetInstance()->listeners();
    delete listeners.Release(listeners.default_result_printer());
  }
  const int rc = RUN_ALL_TESTS();
  return world.allreduce_max(double(rc)) > 0 ? 1 : 0;
}
