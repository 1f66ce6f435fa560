#pragma once
// expect_same(got, want, &T::a, &T::b, ...): each listed member of `got` equals the same member
// of `want`; a failure names the member by its place in the list. Tests that set every field to
// a value of its own use it to see a field lost (left at its default) on the way.
#include <gtest/gtest.h>

template <class T, class... Members>
void expect_same(const T& got, const T& want, Members... members) {
  int place = 0;
  auto one = [&](auto member) {
    ++place;
    EXPECT_EQ(got.*member, want.*member) << "member " << place << " of the list";
  };
  (one(members), ...);
}
