// The C interface's error paths, entry point by entry point: every null pointer the interface can
// be handed where it would read or write through it gives a status (or -1) and a message naming
// the argument, never a crash; so do empty processor names.
#include <gtest/gtest.h>
#include <pthread.h>

#include <cuboid/cuboid.h>

#include <string>
#include <thread>
#include <vector>

namespace {

struct Context {
  cuboid_context* ctx = nullptr;
  Context() {
    cuboid_options o;
    cuboid_options_init(&o);
    o.processors = "host";
    const double speeds[] = {1.0};
    o.speeds = speeds;
    o.speed_count = 1;
    char error[256] = "";
    EXPECT_EQ(cuboid_create(&o, &ctx, error, sizeof error), CUBOID_SUCCESS) << error;
  }
  ~Context() { cuboid_destroy(ctx); }
  std::string error() const { return cuboid_last_error(ctx); }
};

bool names(const std::string& message, const char* what) {
  return message.find(what) != std::string::npos;
}

TEST(CApi, CreateAndDestroy) {
  cuboid_options_init(nullptr);  // nothing to fill: no effect
  char error[256] = "";
  EXPECT_EQ(cuboid_create(nullptr, nullptr, error, sizeof error), CUBOID_INVALID_ARGUMENT);
  EXPECT_TRUE(names(error, "context")) << error;
  // Null options: the defaults.
  cuboid_context* ctx = nullptr;
  EXPECT_EQ(cuboid_create(nullptr, &ctx, nullptr, 0), CUBOID_SUCCESS);
  cuboid_destroy(ctx);
  cuboid_destroy(nullptr);
  EXPECT_STREQ(cuboid_last_error(nullptr), "no context");
}

TEST(CApi, EmptyProcessorNamesAreRefused) {
  for (const char* list : {"", "host,", ",host", "host,,staged"}) {
    cuboid_options o;
    cuboid_options_init(&o);
    o.processors = list;
    cuboid_context* ctx = reinterpret_cast<cuboid_context*>(1);
    char error[256] = "";
    EXPECT_EQ(cuboid_create(&o, &ctx, error, sizeof error), CUBOID_INVALID_ARGUMENT) << list;
    EXPECT_EQ(ctx, nullptr) << list;
    EXPECT_TRUE(names(error, "processors")) << list << ": " << error;
  }
}

TEST(CApi, RealGemmsRefuseNullArguments) {
  Context c;
  std::vector<double> d(4, 1.0);
  std::vector<float> s(4, 1.0f);
  EXPECT_EQ(
      cuboid_dgemm(nullptr, 'N', 'N', 2, 2, 2, 1.0, d.data(), 2, d.data(), 2, 0.0, d.data(), 2),
      CUBOID_INVALID_ARGUMENT);
  EXPECT_EQ(
      cuboid_sgemm(nullptr, 'N', 'N', 2, 2, 2, 1.f, s.data(), 2, s.data(), 2, 0.f, s.data(), 2),
      CUBOID_INVALID_ARGUMENT);
  struct Case {
    const char* name;
    bool a, b, c;
  };
  for (const Case& x :
       {Case{"A", false, true, true}, Case{"B", true, false, true}, Case{"C", true, true, false}}) {
    EXPECT_EQ(cuboid_dgemm(c.ctx, 'N', 'N', 2, 2, 2, 1.0, x.a ? d.data() : nullptr, 2,
                           x.b ? d.data() : nullptr, 2, 0.0, x.c ? d.data() : nullptr, 2),
              CUBOID_INVALID_ARGUMENT)
        << x.name;
    EXPECT_TRUE(names(c.error(), x.name)) << c.error();
    EXPECT_EQ(cuboid_sgemm(c.ctx, 'N', 'N', 2, 2, 2, 1.f, x.a ? s.data() : nullptr, 2,
                           x.b ? s.data() : nullptr, 2, 0.f, x.c ? s.data() : nullptr, 2),
              CUBOID_INVALID_ARGUMENT)
        << x.name;
  }
  // What BLAS never reads may be null: A and B with alpha = 0, everything with m = 0.
  EXPECT_EQ(cuboid_dgemm(c.ctx, 'N', 'N', 2, 2, 2, 0.0, nullptr, 2, nullptr, 2, 0.0, d.data(), 2),
            CUBOID_SUCCESS)
      << c.error();
  EXPECT_EQ(cuboid_dgemm(c.ctx, 'N', 'N', 0, 2, 2, 1.0, nullptr, 1, nullptr, 2, 0.0, nullptr, 1),
            CUBOID_SUCCESS)
      << c.error();
}

TEST(CApi, ComplexGemmsRefuseNullArguments) {
  Context c;
  std::vector<double> z(8, 1.0);
  std::vector<float> w(8, 1.0f);
  const double one[2] = {1, 0};
  const float onef[2] = {1, 0};
  EXPECT_EQ(
      cuboid_zgemm(nullptr, 'N', 'N', 2, 2, 2, one, z.data(), 2, z.data(), 2, one, z.data(), 2),
      CUBOID_INVALID_ARGUMENT);
  EXPECT_EQ(
      cuboid_cgemm(nullptr, 'N', 'N', 2, 2, 2, onef, w.data(), 2, w.data(), 2, onef, w.data(), 2),
      CUBOID_INVALID_ARGUMENT);
  EXPECT_EQ(
      cuboid_zgemm(c.ctx, 'N', 'N', 2, 2, 2, nullptr, z.data(), 2, z.data(), 2, one, z.data(), 2),
      CUBOID_INVALID_ARGUMENT);
  EXPECT_TRUE(names(c.error(), "alpha")) << c.error();
  EXPECT_EQ(
      cuboid_cgemm(c.ctx, 'N', 'N', 2, 2, 2, onef, w.data(), 2, w.data(), 2, nullptr, w.data(), 2),
      CUBOID_INVALID_ARGUMENT);
  EXPECT_TRUE(names(c.error(), "beta")) << c.error();
  EXPECT_EQ(cuboid_zgemm(c.ctx, 'N', 'N', 2, 2, 2, one, nullptr, 2, z.data(), 2, one, z.data(), 2),
            CUBOID_INVALID_ARGUMENT);
  EXPECT_TRUE(names(c.error(), "A")) << c.error();
  EXPECT_EQ(
      cuboid_cgemm(c.ctx, 'N', 'N', 2, 2, 2, onef, w.data(), 2, w.data(), 2, onef, nullptr, 2),
      CUBOID_INVALID_ARGUMENT);
  EXPECT_TRUE(names(c.error(), "C")) << c.error();
}

TEST(CApi, SpeedsRefuseNullArguments) {
  Context c;
  double sp[4] = {};
  EXPECT_EQ(cuboid_speeds(nullptr, 'd', sp, 4), -1);
  EXPECT_EQ(cuboid_speeds(c.ctx, 'd', nullptr, 4), -1);
  EXPECT_TRUE(names(c.error(), "speeds")) << c.error();
  EXPECT_EQ(cuboid_speeds(c.ctx, 'd', sp, -1), -1);
  EXPECT_TRUE(names(c.error(), "capacity")) << c.error();
  // A count query, then the speeds.
  EXPECT_EQ(cuboid_speeds(c.ctx, 'd', nullptr, 0), 1) << c.error();
  EXPECT_EQ(cuboid_speeds(c.ctx, 'd', sp, 4), 1) << c.error();
  EXPECT_DOUBLE_EQ(sp[0], 1.0);
  EXPECT_EQ(cuboid_speeds(c.ctx, 'x', sp, 4), -1);
  EXPECT_TRUE(names(c.error(), "type")) << c.error();
}

// lda = 2^31 with k = 1 is a valid call on a small A (its one column): the 32-bit BLAS cannot
// take it, so it is refused and C is left alone, on the host alone and beside a staged processor.
TEST(CApi, SizesBeyondTheBlasAreRefusedNotWrapped) {
  for (const char* processors : {"host", "host,staged"}) {
    cuboid_options o;
    cuboid_options_init(&o);
    o.processors = processors;
    const double speeds[] = {1.0, 1.0};
    o.speeds = speeds;
    o.speed_count = std::string(processors) == "host" ? 1 : 2;
    cuboid_context* ctx = nullptr;
    char error[256] = "";
    ASSERT_EQ(cuboid_create(&o, &ctx, error, sizeof error), CUBOID_SUCCESS) << error;
    const std::int64_t m = 64, n = 64, k = 1, lda = std::int64_t(1) << 31;
    std::vector<double> a(m, 1.0), b(n, 1.0), c(std::size_t(m * n), 5.0);
    EXPECT_EQ(
        cuboid_dgemm(ctx, 'N', 'N', m, n, k, 1.0, a.data(), lda, b.data(), 1, 0.0, c.data(), m),
        CUBOID_UNSUPPORTED)
        << processors;
    EXPECT_TRUE(names(cuboid_last_error(ctx), "lda")) << cuboid_last_error(ctx);
    EXPECT_EQ(c[0], 5.0) << processors;
    // The same call within 32 bits computes.
    EXPECT_EQ(cuboid_dgemm(ctx, 'N', 'N', m, n, k, 1.0, a.data(), m, b.data(), 1, 0.0, c.data(), m),
              CUBOID_SUCCESS)
        << cuboid_last_error(ctx);
    EXPECT_EQ(c[0], 1.0) << processors;
    cuboid_destroy(ctx);
  }
}

TEST(CApi, LastCallSaysWhatTheCallDid) {
  Context c;
  std::vector<double> a(64 * 64, 1.0), out(64 * 64, 0.0);
  ASSERT_EQ(cuboid_dgemm(c.ctx, 'N', 'N', 64, 64, 64, 1.0, a.data(), 64, a.data(), 64, 0.0,
                         out.data(), 64),
            CUBOID_SUCCESS)
      << c.error();
  cuboid_call_report r;
  ASSERT_EQ(cuboid_last_call(c.ctx, &r), CUBOID_SUCCESS) << c.error();
  EXPECT_GT(r.seconds, 0.0);
  EXPECT_EQ(r.ranks, 1);
  EXPECT_EQ(r.rank_partition[0], '\0');
  // One host processor: a direct GEMM there, or a partition of one processor.
  EXPECT_TRUE(r.direct ? std::string(r.processor) == "host" : std::string(r.algorithm) != "")
      << r.direct << " '" << r.processor << "' '" << r.algorithm << "'";
  EXPECT_DOUBLE_EQ(out[0], 64.0);
  EXPECT_EQ(cuboid_last_call(c.ctx, nullptr), CUBOID_INVALID_ARGUMENT);
  EXPECT_TRUE(names(c.error(), "report")) << c.error();
  EXPECT_EQ(cuboid_last_call(nullptr, &r), CUBOID_INVALID_ARGUMENT);
}

TEST(CApi, EachThreadReadsItsOwnLastError) {
  Context c;
  std::string failed, before, succeeded;
  std::thread bad([&] {
    double x = 0;
    EXPECT_EQ(cuboid_dgemm(c.ctx, 'Q', 'N', 1, 1, 1, 1.0, &x, 1, &x, 1, 0.0, &x, 1),
              CUBOID_INVALID_ARGUMENT);
    failed = cuboid_last_error(c.ctx);
  });
  bad.join();
  std::thread good([&] {
    // Another thread's failure is not this thread's.
    before = cuboid_last_error(c.ctx);
    double x = 1, y = 0;
    EXPECT_EQ(cuboid_dgemm(c.ctx, 'N', 'N', 1, 1, 1, 1.0, &x, 1, &x, 1, 0.0, &y, 1),
              CUBOID_SUCCESS);
    succeeded = cuboid_last_error(c.ctx);
  });
  good.join();
  EXPECT_TRUE(names(failed, "transa")) << failed;
  EXPECT_EQ(before, "");
  EXPECT_EQ(succeeded, "");
  // This thread made no call on the context: nothing failed here.
  EXPECT_EQ(c.error(), "");
}

// A C caller's first call from a pthread of its own, with speeds to measure there: a 96^3
// product of small integers, exact in double.
constexpr int kEdge = 96;
struct PthreadCall {
  int create = -1, call = -1;
  std::vector<double> a, b, c;
  std::string error;
  PthreadCall() : a(kEdge * kEdge), b(kEdge * kEdge), c(kEdge * kEdge, 0.0) {
    for (int i = 0; i < kEdge * kEdge; ++i)
      a[std::size_t(i)] = i % 7 - 3, b[std::size_t(i)] = i % 5 - 2;
  }
};

void* first_call_measuring(void* arg) {
  auto* r = static_cast<PthreadCall*>(arg);
  cuboid_options o;
  cuboid_options_init(&o);
  o.processors = "host,staged";
  o.speed_cache = "";  // measured, not found
  o.direct_below_flops = 0;
  o.tile = 32;
  char error[256] = "";
  cuboid_context* ctx = nullptr;
  r->create = cuboid_create(&o, &ctx, error, sizeof error);
  if (r->create != CUBOID_SUCCESS) {
    r->error = error;
    return nullptr;
  }
  r->call = cuboid_dgemm(ctx, 'N', 'N', kEdge, kEdge, kEdge, 1.0, r->a.data(), kEdge, r->b.data(),
                         kEdge, 0.0, r->c.data(), kEdge);
  r->error = cuboid_last_error(ctx);
  cuboid_destroy(ctx);
  return nullptr;
}

TEST(CApi, FirstCallOnAPthreadMeasuresSpeeds) {
  Context main_thread;  // Kokkos starts on this thread
  PthreadCall r;
  pthread_t t;
  ASSERT_EQ(pthread_create(&t, nullptr, first_call_measuring, &r), 0);
  ASSERT_EQ(pthread_join(t, nullptr), 0);
  ASSERT_EQ(r.create, CUBOID_SUCCESS) << r.error;
  ASSERT_EQ(r.call, CUBOID_SUCCESS) << r.error;
  int wrong = 0;
  for (int j = 0; j < kEdge; ++j)
    for (int i = 0; i < kEdge; ++i) {
      double want = 0;
      for (int l = 0; l < kEdge; ++l)
        want += r.a[std::size_t(i + l * kEdge)] * r.b[std::size_t(l + j * kEdge)];
      wrong += r.c[std::size_t(i + j * kEdge)] != want;
    }
  EXPECT_EQ(wrong, 0);
}

TEST(CApi, ANewContextStartsWithoutAMessage) {
  for (int round = 0; round < 2; ++round) {
    Context c;
    EXPECT_EQ(c.error(), "") << "round " << round;
    double x = 0;
    EXPECT_EQ(cuboid_dgemm(c.ctx, 'N', 'Q', 1, 1, 1, 1.0, &x, 1, &x, 1, 0.0, &x, 1),
              CUBOID_INVALID_ARGUMENT);
    EXPECT_TRUE(names(c.error(), "transb")) << c.error();
  }
}

}  // namespace
