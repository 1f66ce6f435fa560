// Attribute-cached lifetimes (mpi/attribute.hpp): a value lives as long as its communicator, and
// what outlives MPI goes when MPI finalises, once, after the at_finalize functions registered
// later than it. The last checks run after MPI_Finalize, in main.
#include <gtest/gtest.h>
#include <mpi.h>

#include <cstdio>
#include <memory>
#include <string>
#include <vector>

#include "mpi/attribute.hpp"

namespace {

int destroyed = 0;
std::vector<std::string> finalize_order;

struct Counted {
  explicit Counted(int v) : value(v) {}
  ~Counted() { ++destroyed; }
  int value;
};

cuboid::mpi::Attached<Counted>& counted() {
  static cuboid::mpi::Attached<Counted> a;
  return a;
}

TEST(Attribute, AValueGoesWithItsCommunicator) {
  MPI_Comm dup = MPI_COMM_NULL;
  MPI_Comm_dup(MPI_COMM_SELF, &dup);
  const int before = destroyed;
  counted().attach(dup, std::make_unique<Counted>(7));
  ASSERT_NE(counted().find(dup), nullptr);
  EXPECT_EQ(counted().find(dup)->value, 7);
  EXPECT_EQ(counted().find(MPI_COMM_SELF), nullptr);
  MPI_Comm_free(&dup);
  EXPECT_EQ(destroyed, before + 1);
}

TEST(Attribute, AttachingAgainReplacesAndDestroysTheOldValue) {
  MPI_Comm dup = MPI_COMM_NULL;
  MPI_Comm_dup(MPI_COMM_SELF, &dup);
  const int before = destroyed;
  counted().attach(dup, std::make_unique<Counted>(1));
  counted().attach(dup, std::make_unique<Counted>(2));
  EXPECT_EQ(destroyed, before + 1);
  EXPECT_EQ(counted().find(dup)->value, 2);
  MPI_Comm_free(&dup);
  EXPECT_EQ(destroyed, before + 2);
}

TEST(Attribute, ValuesOnTheWorldWaitForFinalisation) {
  const int before = destroyed;
  counted().attach(MPI_COMM_WORLD, std::make_unique<Counted>(3));
  cuboid::mpi::at_finalize([] { finalize_order.push_back("first registered"); });
  cuboid::mpi::at_finalize([] { finalize_order.push_back("second registered"); });
  EXPECT_EQ(destroyed, before);
  EXPECT_EQ(counted().find(MPI_COMM_WORLD)->value, 3);
}

}  // namespace

int main(int argc, char** argv) {
  MPI_Init(&argc, &argv);
  ::testing::InitGoogleTest(&argc, argv);
  int rc = RUN_ALL_TESTS();
  const int before = destroyed;
  MPI_Finalize();
  // The world's value destroyed once; the later registration ran first.
  if (destroyed != before + 1) {
    std::fprintf(stderr, "attribute: %d values destroyed at finalisation, expected 1\n",
                 destroyed - before);
    rc = 1;
  }
  const std::vector<std::string> expected{"second registered", "first registered"};
  if (finalize_order != expected) {
    std::fprintf(stderr, "attribute: at_finalize functions ran %zu times, or out of order\n",
                 finalize_order.size());
    rc = 1;
  }
  if (rc == 0)
    std::printf("attribute: finalisation destroyed the world's value and ran in order\n");
  return rc;
}
