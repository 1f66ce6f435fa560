// GoogleTest main for tests that need Kokkos: one initialisation for the whole program.
#include <gtest/gtest.h>

#include "kokkos_ext/compat.hpp"

int main(int argc, char** argv) {
  ::testing::InitGoogleTest(&argc, argv);
  cuboid::kokkos_ext::initialize();
  const int rc = RUN_ALL_TESTS();
  Kokkos::finalize();
  return rc;
}
