#pragma once
// What C holds before the product (C0): values from the seed, zeros, or NaN (with beta = 0, to
// show that C is never read). Plain C++, so that the deck can name it without Kokkos.
namespace cuboid::exec {

enum class InitialC { random, zero, nan };

}  // namespace cuboid::exec
