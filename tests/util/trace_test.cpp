// src/util/trace: nothing recorded while off; events come back as Chrome trace-event JSON, on
// named tracks, in the time they took, relative to the origin.
#include <gtest/gtest.h>

#include <chrono>
#include <map>
#include <string>
#include <thread>

#include <nlohmann/json.hpp>

#include "util/trace.hpp"

namespace cuboid {
namespace {

nlohmann::json parsed(const std::string& events) {
  return nlohmann::json::parse(trace::document({events}));
}

TEST(Trace, RecordsNothingWhileOff) {
  trace::disable();
  trace::take_events();
  { trace::Span s("host gemm", "gemm"); }
  trace::instant("rank", "posted", trace::Clock::now());
  const auto j = parsed(trace::take_events());
  for (const auto& e : j["traceEvents"]) EXPECT_EQ(e["ph"], "M") << e.dump();
}

TEST(Trace, SpansAndInstantsComeBackOnTheirTracks) {
  trace::enable();
  trace::set_process(3, "rank 3");
  const auto origin = trace::Clock::now();
  trace::set_origin(origin);
  {
    trace::Span s("host gemm", "gemm", "\"step\": 7");
    std::this_thread::sleep_for(std::chrono::milliseconds(2));
  }
  trace::complete("staged copy in", "copy \"A\"", origin + std::chrono::microseconds(10),
                  origin + std::chrono::microseconds(30));
  trace::instant("rank 3 messages", "receive posted", origin + std::chrono::microseconds(5));
  trace::disable();
  const auto j = parsed(trace::take_events());
  std::map<int, std::string> tracks;
  int complete = 0, instants = 0;
  for (const auto& e : j["traceEvents"]) {
    EXPECT_EQ(e["pid"], 3);
    if (e["ph"] == "M" && e["name"] == "thread_name") tracks[e["tid"]] = e["args"]["name"];
    if (e["ph"] == "M" && e["name"] == "process_name") EXPECT_EQ(e["args"]["name"], "rank 3");
  }
  for (const auto& e : j["traceEvents"]) {
    if (e["ph"] == "X") {
      ++complete;
      const std::string track = tracks.at(e["tid"]);
      if (e["name"] == "gemm") {
        EXPECT_EQ(track, "host gemm");
        EXPECT_GE(e["dur"].get<double>(), 2000.0);
        EXPECT_GE(e["ts"].get<double>(), 0.0);
        EXPECT_EQ(e["args"]["step"], 7);
      } else {
        EXPECT_EQ(e["name"], "copy \"A\"");
        EXPECT_EQ(track, "staged copy in");
        EXPECT_NEAR(e["ts"].get<double>(), 10.0, 1e-6);
        EXPECT_NEAR(e["dur"].get<double>(), 20.0, 1e-6);
      }
    } else if (e["ph"] == "i") {
      ++instants;
      EXPECT_EQ(tracks.at(e["tid"]), "rank 3 messages");
      EXPECT_NEAR(e["ts"].get<double>(), 5.0, 1e-6);
    }
  }
  EXPECT_EQ(complete, 2);
  EXPECT_EQ(instants, 1);
  // Taken events are gone.
  const auto again = parsed(trace::take_events());
  for (const auto& e : again["traceEvents"]) EXPECT_EQ(e["ph"], "M");
}

TEST(Trace, ADocumentJoinsProcesses) {
  const auto j = nlohmann::json::parse(
      trace::document({R"({"ph": "i", "name": "a", "pid": 0, "tid": 1, "ts": 1, "s": "t"})", "",
                       R"({"ph": "i", "name": "b", "pid": 1, "tid": 1, "ts": 2, "s": "t"})"}));
  ASSERT_EQ(j["traceEvents"].size(), 2u);
  EXPECT_EQ(j["traceEvents"][1]["pid"], 1);
}

}  // namespace
}  // namespace cuboid
