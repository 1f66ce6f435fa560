// cuboid::gemm on Kokkos views (<cuboid/kokkos.hpp>): LayoutLeft, LayoutRight and LayoutStride
// views, subviews of larger views (nothing outside them read or written), BLAS's rules for
// beta = 0 and k = 0, the errors that name the view at fault, on one processor ("host") and two
// ("host", "staged"), in float and double, against a long-double reference with the rounding
// bound of the product. Device-resident views are tested only in a build with a device backend.
#include <gtest/gtest.h>

#include <Kokkos_Core.hpp>

#include <cmath>
#include <cstring>
#include <cuboid/cuboid.hpp>
#include <cuboid/kokkos.hpp>
#include <functional>
#include <limits>
#include <memory>
#include <random>
#include <string>
#include <vector>

using cuboid::Op;

namespace {

template <class T, class Layout>
using HostView = Kokkos::View<T**, Layout, Kokkos::HostSpace>;
template <class T>
using StrideView = Kokkos::View<T**, Kokkos::LayoutStride, Kokkos::HostSpace,
                                Kokkos::MemoryTraits<Kokkos::Unmanaged>>;

// The context of each processor set, with fixed speeds (no calibration) and, for two, every
// product partitioned.
std::unique_ptr<cuboid::Context> make_context(bool two) {
  cuboid::ContextOptions o;
  o.speed_cache = "";
  if (two) {
    o.processors = {"host", "staged"};
    o.speeds = {1.0, 1.0};
    o.direct_below_flops = 0;
    o.tile = 32;
  } else {
    o.processors = {"host"};
    o.speeds = {1.0};
  }
  return std::make_unique<cuboid::Context>(o);
}

// What the last call did: one direct GEMM on "host", or a partition over both processors.
void expect_report(const cuboid::Context& ctx, bool two) {
  const auto& r = ctx.last_call();
  EXPECT_EQ(r.direct, !two);
  EXPECT_EQ(r.processor, two ? "" : "host");
  EXPECT_EQ(r.speeds.size(), two ? 2u : 0u);
  EXPECT_GT(r.seconds, 0.0);
}

template <class V>
void fill_random(const V& v, unsigned seed) {
  std::mt19937_64 rng(seed);
  std::uniform_real_distribution<double> u(-1, 1);
  for (std::size_t j = 0; j < v.extent(1); ++j)
    for (std::size_t i = 0; i < v.extent(0); ++i) v(i, j) = typename V::value_type(u(rng));
}

template <class V>
void fill_value(const V& v, typename V::value_type x) {
  for (std::size_t j = 0; j < v.extent(1); ++j)
    for (std::size_t i = 0; i < v.extent(0); ++i) v(i, j) = x;
}

// A host copy of a view's elements, (i, j) at i + j * rows, whatever its layout.
template <class V>
std::vector<typename V::non_const_value_type> elements(const V& v) {
  std::vector<typename V::non_const_value_type> out(v.extent(0) * v.extent(1));
  for (std::size_t j = 0; j < v.extent(1); ++j)
    for (std::size_t i = 0; i < v.extent(0); ++i) out[i + j * v.extent(0)] = v(i, j);
  return out;
}

using Element = std::function<long double(std::int64_t, std::int64_t)>;

// Every element of C within (2k + 4) eps (|alpha| sum |a b| + |beta c0|) of alpha op(A) op(B) +
// beta C0 computed in long double (beta = 0: C0 not read, so NaN there must not show).
template <class T>
void expect_product(std::int64_t m, std::int64_t n, std::int64_t k, T alpha, const Element& a,
                    const Element& b, T beta, const Element& c0, const Element& c,
                    const std::string& what) {
  const long double eps = std::numeric_limits<T>::epsilon();
  std::int64_t wrong = 0;
  std::string first;
  for (std::int64_t j = 0; j < n; ++j)
    for (std::int64_t i = 0; i < m; ++i) {
      long double acc = 0, magnitude = 0;
      for (std::int64_t l = 0; l < k; ++l) {
        const long double p = a(i, l) * b(l, j);
        acc += p;
        magnitude += std::fabs(p);
      }
      long double want = alpha * acc, bound = std::fabs(alpha) * magnitude;
      if (beta != T(0)) {
        want += beta * c0(i, j);
        bound += std::fabs(beta * c0(i, j));
      }
      bound = (2 * k + 4) * eps * bound + std::numeric_limits<T>::min();
      const long double got = c(i, j);
      if (!(std::fabs(got - want) <= bound) && wrong++ == 0)
        first = "C(" + std::to_string(i) + ", " + std::to_string(j) +
                ") = " + std::to_string(double(got)) + ", want " + std::to_string(double(want));
    }
  EXPECT_EQ(wrong, 0) << what << ": " << wrong << " elements beyond the rounding bound, first "
                      << first;
}

template <class V>
Element at(const V& v) {
  return [v](std::int64_t i, std::int64_t j) { return (long double)v(i, j); };
}
template <class T>
Element at(const std::vector<T>& x, std::int64_t rows) {
  return [&x, rows](std::int64_t i, std::int64_t j) {
    return (long double)x[std::size_t(i + j * rows)];
  };
}

// The key of the KeyedError (or Unsupported, when `unsupported`) a call throws.
template <class F>
std::string key_of(F&& call, bool unsupported = false) {
  try {
    call();
  } catch (const cuboid::Unsupported& e) {
    return unsupported ? e.key : "<Unsupported " + e.key + ">";
  } catch (const cuboid::KeyedError& e) {
    return unsupported ? "<KeyedError " + e.key + ">" : e.key;
  }
  return "<none>";
}

template <class T>
class Views : public ::testing::Test {};
using Scalars = ::testing::Types<float, double>;
TYPED_TEST_SUITE(Views, Scalars);

// The three layouts whole, through both forms of the call; A filled on the execution space
// passed (the call fences it before reading).
template <class T, class Layout>
void multiply_whole_views(cuboid::Context& ctx, bool two, const std::string& what) {
  const std::int64_t m = 150, n = 130, k = 170;
  HostView<T, Layout> A("A", m, k), C("C", m, n);
  HostView<const T, Layout> B = [&] {
    HostView<T, Layout> b("B", k, n);
    fill_random(b, 2);
    return b;
  }();
  const Kokkos::DefaultHostExecutionSpace space;
  Kokkos::parallel_for("fill A",
                       Kokkos::RangePolicy<Kokkos::DefaultHostExecutionSpace>(space, 0, m * k),
                       [=](std::int64_t x) { A(x % m, x / m) = T(std::sin(double(x))); });
  fill_random(C, 3);
  const auto C0 = elements(C);
  cuboid::gemm(ctx, space, Op::none, Op::none, T(1.5), A, B, T(-0.5), C);
  expect_product<T>(m, n, k, 1.5, at(A), at(B), -0.5, at(C0, m), at(C), what + ", with a space");
  expect_report(ctx, two);

  fill_random(C, 4);
  const auto C1 = elements(C);
  cuboid::gemm(ctx, Op::none, Op::none, T(-2), A, B, T(1), C);
  expect_product<T>(m, n, k, -2, at(A), at(B), 1, at(C1, m), at(C), what + ", no space");
  expect_report(ctx, two);
}

TYPED_TEST(Views, LayoutLeftAndLayoutRight) {
  using T = TypeParam;
  for (bool two : {false, true}) {
    auto ctx = make_context(two);
    const std::string on = two ? " on host,staged" : " on host";
    multiply_whole_views<T, Kokkos::LayoutLeft>(*ctx, two, "LayoutLeft" + on);
    multiply_whole_views<T, Kokkos::LayoutRight>(*ctx, two, "LayoutRight" + on);
  }
}

// Subviews at an offset in larger views: the product reads only the subviews (NaN around A and
// B would spread) and writes only C's (the sentinels around it stay bit for bit).
template <class T, class Layout>
void multiply_subviews(cuboid::Context& ctx, bool two, const std::string& what) {
  const std::int64_t m = 97, n = 83, k = 71;
  const T nan = std::numeric_limits<T>::quiet_NaN(), sentinel = T(777.25);
  HostView<T, Layout> bigA("bigA", m + 9, k + 4), bigB("bigB", k + 3, n + 8),
      bigC("bigC", m + 5, n + 6);
  fill_value(bigA, nan);
  fill_value(bigB, nan);
  fill_value(bigC, sentinel);
  using P = std::pair<std::int64_t, std::int64_t>;
  const auto A = Kokkos::subview(bigA, P(4, 4 + m), P(1, 1 + k));
  const auto B = Kokkos::subview(bigB, P(2, 2 + k), P(5, 5 + n));
  const auto C = Kokkos::subview(bigC, P(3, 3 + m), P(2, 2 + n));
  fill_random(A, 11);
  fill_random(B, 12);
  fill_random(C, 13);
  const auto C0 = elements(C);
  const auto whole_before = elements(bigC);
  cuboid::gemm(ctx, Kokkos::DefaultHostExecutionSpace(), Op::none, Op::none, T(0.75), A, B, T(2),
               C);
  expect_product<T>(m, n, k, 0.75, at(A), at(B), 2, at(C0, m), at(C), what);
  expect_report(ctx, two);
  const auto whole_after = elements(bigC);
  std::int64_t touched = 0;
  for (std::int64_t j = 0; j < n + 6; ++j)
    for (std::int64_t i = 0; i < m + 5; ++i) {
      const bool inside = i >= 3 && i < 3 + m && j >= 2 && j < 2 + n;
      const std::size_t x = std::size_t(i + j * (m + 5));
      if (!inside && std::memcmp(&whole_after[x], &whole_before[x], sizeof(T)) != 0) ++touched;
    }
  EXPECT_EQ(touched, 0) << what << ": elements of C outside the subview were written";
}

TYPED_TEST(Views, SubviewsOfLargerViewsAreMultipliedInPlace) {
  using T = TypeParam;
  for (bool two : {false, true}) {
    auto ctx = make_context(two);
    const std::string on = two ? " on host,staged" : " on host";
    multiply_subviews<T, Kokkos::LayoutLeft>(*ctx, two, "LayoutLeft subviews" + on);
    multiply_subviews<T, Kokkos::LayoutRight>(*ctx, two, "LayoutRight subviews" + on);
  }
}

// LayoutStride views over plain buffers, column-major (unit stride along the rows) and row-major
// (unit stride along the columns), with gaps between their columns or rows.
TYPED_TEST(Views, LayoutStrideViews) {
  using T = TypeParam;
  const std::int64_t m = 88, n = 66, k = 77, gap = 3;
  for (bool two : {false, true}) {
    auto ctx = make_context(two);
    for (bool row_major : {false, true}) {
      auto layout = [&](std::int64_t rows, std::int64_t cols) {
        return row_major ? Kokkos::LayoutStride(std::size_t(rows), std::size_t(cols + gap),
                                                std::size_t(cols), 1)
                         : Kokkos::LayoutStride(std::size_t(rows), 1, std::size_t(cols),
                                                std::size_t(rows + gap));
      };
      std::vector<T> a(std::size_t((m + gap) * (k + gap))), b(std::size_t((k + gap) * (n + gap))),
          c(std::size_t((m + gap) * (n + gap)));
      const StrideView<T> A(a.data(), layout(m, k)), B(b.data(), layout(k, n)),
          C(c.data(), layout(m, n));
      ASSERT_EQ(A.stride(row_major ? 1 : 0), 1u);
      fill_random(A, 21);
      fill_random(B, 22);
      fill_random(C, 23);
      const auto C0 = elements(C);
      cuboid::gemm(*ctx, Kokkos::DefaultHostExecutionSpace(), Op::none, Op::none, T(1), A, B, T(-1),
                   C);
      expect_product<T>(m, n, k, 1, at(A), at(B), -1, at(C0, m), at(C),
                        std::string(row_major ? "row-major" : "column-major") + " LayoutStride" +
                            (two ? " on host,staged" : " on host"));
      expect_report(*ctx, two);
    }
  }
}

// beta = 0 never reads C: NaN there must not reach the product, in either layout.
TYPED_TEST(Views, BetaZeroDoesNotReadC) {
  using T = TypeParam;
  const std::int64_t m = 64, n = 72, k = 80;
  for (bool two : {false, true}) {
    auto ctx = make_context(two);
    auto run = [&](auto layout, const char* name) {
      using Layout = decltype(layout);
      HostView<T, Layout> A("A", m, k), B("B", k, n), C("C", m, n);
      fill_random(A, 31);
      fill_random(B, 32);
      fill_value(C, std::numeric_limits<T>::quiet_NaN());
      cuboid::gemm(*ctx, Op::none, Op::none, T(2), A, B, T(0), C);
      expect_product<T>(m, n, k, 2, at(A), at(B), 0, at(C), at(C),
                        std::string(name) + (two ? " on host,staged" : " on host"));
    };
    run(Kokkos::LayoutLeft(), "LayoutLeft, beta = 0");
    run(Kokkos::LayoutRight(), "LayoutRight, beta = 0");
  }
}

// k = 0 scales C by beta without reading A or B; m = 0 does nothing.
TYPED_TEST(Views, EmptyDimensionsFollowBlas) {
  using T = TypeParam;
  auto ctx = make_context(false);
  HostView<T, Kokkos::LayoutRight> A("A", 5, 0), B("B", 0, 4), C("C", 5, 4);
  fill_random(C, 41);
  const auto C0 = elements(C);
  cuboid::gemm(*ctx, Op::none, Op::none, T(1), A, B, T(3), C);
  for (std::int64_t j = 0; j < 4; ++j)
    for (std::int64_t i = 0; i < 5; ++i) EXPECT_EQ(C(i, j), T(3) * C0[std::size_t(i + j * 5)]);
  HostView<T, Kokkos::LayoutLeft> E("E", 0, 3), F("F", 3, 2), G("G", 0, 2);
  EXPECT_NO_THROW(cuboid::gemm(*ctx, Op::none, Op::none, T(1), E, F, T(0), G));
}

// A LayoutRight A of k x m, asked for as op(A) = A^T with a LayoutLeft C, lies as a column-major
// m x k matrix: multiplied as it lies, no transpose computed.
TYPED_TEST(Views, TransposedRowMajorOperandIsReadAsItLies) {
  using T = TypeParam;
  const std::int64_t m = 60, n = 50, k = 40;
  for (bool two : {false, true}) {
    auto ctx = make_context(two);
    HostView<T, Kokkos::LayoutRight> A("A", k, m);
    HostView<T, Kokkos::LayoutLeft> B("B", k, n), C("C", m, n);
    fill_random(A, 51);
    fill_random(B, 52);
    fill_random(C, 53);
    const auto C0 = elements(C);
    cuboid::gemm(*ctx, Op::transpose, Op::none, T(1), A, B, T(0.5), C);
    const Element a_t = [A](std::int64_t i, std::int64_t l) { return (long double)A(l, i); };
    expect_product<T>(m, n, k, 1, a_t, at(B), 0.5, at(C0, m), at(C),
                      two ? "op(A) = T, LayoutRight A, on host,staged" : "op(A) = T on host");
  }
}

TYPED_TEST(Views, MismatchedExtentsNameTheView) {
  using T = TypeParam;
  auto ctx = make_context(false);
  using V = HostView<T, Kokkos::LayoutLeft>;
  V A("A", 10, 6), B("B", 6, 7), C("C", 10, 7), shortA("A", 9, 6), wideB("B", 6, 8),
      deepB("B", 5, 7);
  const auto call = [&ctx](const V& a, const V& b, const V& c, Op op_a = Op::none) {
    return [&ctx, a, b, c, op_a] { cuboid::gemm(*ctx, op_a, Op::none, T(1), a, b, T(0), c); };
  };
  EXPECT_EQ(key_of(call(A, B, C)), "<none>");
  EXPECT_EQ(key_of(call(shortA, B, C)), "A");
  EXPECT_EQ(key_of(call(A, deepB, C)), "B");
  EXPECT_EQ(key_of(call(A, wideB, C)), "B");
  EXPECT_EQ(key_of(call(A, B, C, Op::transpose)), "A");  // A^T is 6 x 10, C 10 x 7
  try {
    cuboid::gemm(*ctx, Op::none, Op::none, T(1), A, deepB, T(0), C);
    ADD_FAILURE() << "no error";
  } catch (const cuboid::KeyedError& e) {
    EXPECT_NE(std::string(e.what()).find("5 x 7"), std::string::npos) << e.what();
  }
}

// Layouts that differ from C's and ops asked for are both read as they lie: the library's op
// says how, and nothing is copied or transposed beforehand.
TYPED_TEST(Views, MixedLayoutsAndOpsAreMultipliedAsTheyLie) {
  using T = TypeParam;
  const std::int64_t m = 80, n = 60, k = 40;
  for (bool two : {false, true}) {
    auto ctx = make_context(two);
    HostView<T, Kokkos::LayoutLeft> AL("A", m, k), BL("B", k, n), CL("C", m, n), AtL("A", k, m),
        BtL("B", n, k);
    HostView<T, Kokkos::LayoutRight> AR("A", m, k), BR("B", k, n), CR("C", m, n), AtR("A", k, m);
    unsigned seed = 70;
    for (auto* v : {&AL, &BL, &AtL, &BtL}) fill_random(*v, ++seed);
    for (auto* v : {&AR, &BR, &AtR}) fill_random(*v, ++seed);
    const Element a_t = [AtL](std::int64_t i, std::int64_t l) { return (long double)AtL(l, i); };
    const Element ar_t = [AtR](std::int64_t i, std::int64_t l) { return (long double)AtR(l, i); };
    const Element b_t = [BtL](std::int64_t l, std::int64_t j) { return (long double)BtL(j, l); };
    auto check = [&](auto&& a, auto&& b, auto&& c, Op oa, Op ob, const Element& ea,
                     const Element& eb, const std::string& what) {
      fill_random(c, ++seed);
      const auto c0 = elements(c);
      cuboid::gemm(*ctx, oa, ob, T(1.25), a, b, T(-1), c);
      expect_product<T>(m, n, k, 1.25, ea, eb, -1, at(c0, m), at(c),
                        what + (two ? " on host,staged" : " on host"));
    };
    check(AR, BL, CL, Op::none, Op::none, at(AR), at(BL), "row-major A");
    check(AL, BR, CL, Op::none, Op::none, at(AL), at(BR), "row-major B");
    check(AL, BL, CR, Op::none, Op::none, at(AL), at(BL), "row-major C");
    check(AR, BR, CL, Op::none, Op::none, at(AR), at(BR), "row-major A and B");
    check(AtL, BL, CL, Op::transpose, Op::none, a_t, at(BL), "op(A) = T");
    check(AL, BtL, CL, Op::none, Op::conjugate_transpose, at(AL), b_t, "op(B) = C");
    check(AtR, BtL, CR, Op::transpose, Op::transpose, ar_t, b_t, "row-major A^T, B^T, C");
  }
}

// Strides BLAS cannot address are refused, naming the view, and C is left as it was.
TYPED_TEST(Views, StridesBlasCannotAddressAreRefused) {
  using T = TypeParam;
  auto ctx = make_context(true);
  const std::int64_t m = 8, n = 6, k = 4;
  HostView<T, Kokkos::LayoutLeft> AL("A", m, k), BL("B", k, n), CL("C", m, n);
  fill_value(CL, T(5));
  const auto refused = [&](auto&& a, auto&& b, auto&& c, Op op_a = Op::none, Op op_b = Op::none) {
    return key_of([&] { cuboid::gemm(*ctx, op_a, op_b, T(1), a, b, T(0), c); }, true);
  };
  // No unit stride: BLAS cannot address it.
  std::vector<T> buffer(200);
  const StrideView<T> strided(buffer.data(), Kokkos::LayoutStride(m, 2, k, 2 * m + 1));
  EXPECT_EQ(refused(strided, BL, CL), "A");
  // Columns closer than their length: the view overlaps itself.
  const StrideView<T> overlapping(buffer.data(), Kokkos::LayoutStride(m, 1, n, m - 1));
  EXPECT_EQ(
      key_of([&] { cuboid::gemm(*ctx, Op::none, Op::none, T(1), AL, BL, T(0), overlapping); }),
      "C");
  for (std::size_t j = 0; j < CL.extent(1); ++j)
    for (std::size_t i = 0; i < CL.extent(0); ++i) ASSERT_EQ(CL(i, j), T(5)) << "C was written";
}

#if defined(KOKKOS_ENABLE_CUDA) || defined(KOKKOS_ENABLE_HIP)
// Device-resident views: one GEMM on the context's device, on the views where they lie.
using DeviceSpace = Kokkos::DefaultExecutionSpace;
static_assert(!Kokkos::SpaceAccessibility<Kokkos::HostSpace, DeviceSpace::memory_space>::accessible,
              "the default execution space of a device build computes in device memory");
template <class T, class Layout>
using DeviceView = Kokkos::View<T**, Layout, DeviceSpace::memory_space>;

std::unique_ptr<cuboid::Context> device_context() {
  cuboid::ContextOptions o;  // the host and the device Kokkos drives
  o.speed_cache = "";
  return std::make_unique<cuboid::Context>(o);
}

template <class T, class Layout>
void multiply_on_device(cuboid::Context& ctx, T beta, const std::string& what) {
  const std::int64_t m = 300, n = 260, k = 280;
  DeviceView<T, Layout> bigA("bigA", m + 3, k), B("B", k, n), bigC("bigC", m + 4, n + 2);
  using P = std::pair<std::int64_t, std::int64_t>;
  const auto A = Kokkos::subview(bigA, P(3, 3 + m), Kokkos::ALL);
  const auto C = Kokkos::subview(bigC, P(1, 1 + m), P(2, 2 + n));
  auto hA = Kokkos::create_mirror_view(bigA);
  auto hB = Kokkos::create_mirror_view(B);
  auto hC = Kokkos::create_mirror_view(bigC);
  fill_value(hA, std::numeric_limits<T>::quiet_NaN());
  fill_random(Kokkos::subview(hA, P(3, 3 + m), Kokkos::ALL), 61);
  fill_random(hB, 62);
  fill_value(hC, T(777.25));
  if (beta != T(0)) fill_random(Kokkos::subview(hC, P(1, 1 + m), P(2, 2 + n)), 63);
  Kokkos::deep_copy(bigA, hA);
  Kokkos::deep_copy(B, hB);
  Kokkos::deep_copy(bigC, hC);
  const auto C0 = elements(Kokkos::subview(hC, P(1, 1 + m), P(2, 2 + n)));
  cuboid::gemm(ctx, DeviceSpace(), Op::none, Op::none, T(1.25), A, B, beta, C);
  const auto& r = ctx.last_call();
  EXPECT_TRUE(r.direct) << what;
  EXPECT_NE(r.processor.find(':'), std::string::npos) << what << ": ran on " << r.processor;
  auto after = Kokkos::create_mirror_view(bigC);
  Kokkos::deep_copy(after, bigC);
  const auto hCsub = Kokkos::subview(after, P(1, 1 + m), P(2, 2 + n));
  expect_product<T>(m, n, k, 1.25, at(Kokkos::subview(hA, P(3, 3 + m), Kokkos::ALL)), at(hB), beta,
                    at(C0, m), at(hCsub), what);
  std::int64_t touched = 0;
  for (std::int64_t j = 0; j < n + 2; ++j)
    for (std::int64_t i = 0; i < m + 4; ++i)
      if (!(i >= 1 && i < 1 + m && j >= 2 && j < 2 + n) && after(i, j) != T(777.25)) ++touched;
  EXPECT_EQ(touched, 0) << what << ": elements of C outside the subview were written";
}

TYPED_TEST(Views, DeviceViewsAreMultipliedWhereTheyLie) {
  using T = TypeParam;
  auto ctx = device_context();
  multiply_on_device<T, Kokkos::LayoutLeft>(*ctx, T(-0.5), "device LayoutLeft");
  multiply_on_device<T, Kokkos::LayoutRight>(*ctx, T(-0.5), "device LayoutRight");
  multiply_on_device<T, Kokkos::LayoutLeft>(*ctx, T(0), "device LayoutLeft, beta = 0");
}

TYPED_TEST(Views, DeviceViewsNeedTheDeviceAndOneMemory) {
  using T = TypeParam;
  auto host_only = make_context(false);
  DeviceView<T, Kokkos::LayoutLeft> A("A", 8, 4), B("B", 4, 6), C("C", 8, 6);
  HostView<T, Kokkos::LayoutLeft> hostA("A", 8, 4);
  EXPECT_EQ(key_of([&] { cuboid::gemm(*host_only, Op::none, Op::none, T(1), A, B, T(0), C); }),
            "processors");
  auto ctx = device_context();
  EXPECT_EQ(key_of([&] { cuboid::gemm(*ctx, Op::none, Op::none, T(1), hostA, B, T(0), C); }, true),
            "A");
  // k = 0 scales C on the device.
  DeviceView<T, Kokkos::LayoutLeft> E("E", 8, 0), F("F", 0, 6);
  Kokkos::deep_copy(C, T(2));
  cuboid::gemm(*ctx, Op::none, Op::none, T(1), E, F, T(3), C);
  auto hC = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace(), C);
  for (std::size_t j = 0; j < 6; ++j)
    for (std::size_t i = 0; i < 8; ++i) EXPECT_EQ(hC(i, j), T(6));
}
#endif

}  // namespace

// Complex views: row-major and column-major operands with every op, read as they lie, against a
// reference in long double; a complex operand laid out unlike C with op 'C' is refused, naming it,
// and C is left as it was.
TEST(ComplexViews, LayoutsAndOpsAreReadAsTheyLie) {
  using Z = Kokkos::complex<double>;
  using W = std::complex<long double>;
  const std::int64_t m = 50, n = 40, k = 30;
  auto ctx = make_context(true);
  std::mt19937_64 rng(3);
  std::uniform_real_distribution<double> u(-1, 1);
  auto fill = [&](auto& v) {
    for (std::size_t i = 0; i < v.extent(0); ++i)
      for (std::size_t j = 0; j < v.extent(1); ++j) v(i, j) = Z(u(rng), u(rng));
  };
  auto wide = [](Z x) { return W(x.real(), x.imag()); };
  const Z alpha(0.5, -0.25), beta(-1, 0.5);
  for (Op oa : {Op::none, Op::transpose, Op::conjugate_transpose})
    for (bool c_row : {false, true}) {
      const bool ta = oa != Op::none;
      HostView<Z, Kokkos::LayoutLeft> AL("A", ta ? k : m, ta ? m : k), CL("C", m, n);
      HostView<Z, Kokkos::LayoutRight> BR("B", k, n), CR("C", m, n);
      fill(AL), fill(BR), fill(CL), fill(CR);
      auto run = [&](auto& C) {
        // A is column-major: with a row-major C and op 'C' it is refused.
        HostView<Z, Kokkos::LayoutLeft> C0("C0", m, n);
        for (std::int64_t i = 0; i < m; ++i)
          for (std::int64_t j = 0; j < n; ++j) C0(i, j) = C(i, j);
        if (c_row && oa == Op::conjugate_transpose) {
          EXPECT_EQ(key_of([&] { cuboid::gemm(*ctx, oa, Op::none, alpha, AL, BR, beta, C); }, true),
                    "A");
          for (std::int64_t i = 0; i < m; ++i)
            for (std::int64_t j = 0; j < n; ++j) EXPECT_EQ(C(i, j), C0(i, j));
          return;
        }
        cuboid::gemm(*ctx, oa, Op::none, alpha, AL, BR, beta, C);
        double worst = 0;
        for (std::int64_t i = 0; i < m; ++i)
          for (std::int64_t j = 0; j < n; ++j) {
            W acc = 0;
            for (std::int64_t l = 0; l < k; ++l) {
              W a = wide(ta ? AL(l, i) : AL(i, l));
              if (oa == Op::conjugate_transpose) a = std::conj(a);
              acc += a * wide(BR(l, j));
            }
            const W want = wide(alpha) * acc + wide(beta) * wide(C0(i, j));
            worst = std::max(worst, double(std::abs(want - wide(C(i, j)))));
          }
        EXPECT_LT(worst, 1e-12 * k) << char(oa) << (c_row ? " row-major C" : " column-major C");
      };
      if (c_row)
        run(CR);
      else
        run(CL);
    }
}
