#pragma once
// An execution trace in Chrome's trace-event format (opens in Perfetto or chrome://tracing):
// what each processor's queues did and when (GEMMs, copies in and out, packing, unpacking,
// reductions), and, under MPI, each rank's sends, receives and waits. One track per queue
// ("thread" in the format's terms) within one process per rank ("pid" = rank).
//
// Off unless a caller enables it (`cuboid run --trace FILE`, CUBOID_TRACE=FILE for the library);
// off, recording costs one relaxed atomic load. Timestamps are microseconds of the steady clock
// since an origin: the clock's epoch, common to the processes of a node, unless the caller sets
// another (a barrier's exit, to line up ranks on several nodes).
#include <chrono>
#include <cstdint>
#include <string>
#include <vector>

namespace cuboid::trace {

using Clock = std::chrono::steady_clock;

bool on();
// Starts recording (events kept in memory until taken).
void enable();
void disable();
// The process's number and name in the trace (a rank: its number, "rank N"); `own_file`: a
// trace written at exit goes to a file of this process's own (record_until_exit).
void set_process(int id, const std::string& name, bool own_file = false);
// The instant all timestamps count from.
void set_origin(Clock::time_point t);

// A complete event: `name` on track `track` from `begin` to `end`, with optional arguments as
// a JSON object's members (e.g. "\"bytes\": 4096").
void complete(const std::string& track, const std::string& name, Clock::time_point begin,
              Clock::time_point end, const std::string& args = {});
// An instant event.
void instant(const std::string& track, const std::string& name, Clock::time_point at,
             const std::string& args = {});

// Records [construction, destruction) as one complete event when tracing is on.
class Span {
 public:
  Span(std::string track, std::string name, std::string args = {});
  // On the track "`owner` `queue`" (e.g. "staged host"), joined only when tracing is on.
  struct Queue {
    const std::string& owner;
    const char* queue;
  };
  Span(Queue track, const char* name);
  ~Span();
  Span(const Span&) = delete;
  Span& operator=(const Span&) = delete;

 private:
  bool on_;
  std::string track_, name_, args_;
  Clock::time_point begin_;
};

// This process's events so far, as the members of a JSON array (comma-separated objects,
// metadata naming the process and its tracks first), and forgets them.
std::string take_events();
// A whole trace file's text from the event lists of one or more processes.
std::string document(const std::vector<std::string>& event_lists);
// From a library: records from now on and writes this process's events when it exits, to
// `path`, or to `path`.N where set_process gave it a number of its own (a rank N of a job, so
// that ranks never write the same file). The path is checked first (Error naming `flag`); a
// failure at exit is printed to stderr. Repeated calls with the same path do nothing.
void record_until_exit(const std::string& flag, const std::string& path);

// Writes document(event_lists) to `path` whole or not at all; throws Error naming `flag` (what
// gave the path: "--trace", "CUBOID_TRACE") and the path.
void write(const std::string& flag, const std::string& path,
           const std::vector<std::string>& event_lists);

}  // namespace cuboid::trace
