#include "util/trace.hpp"

#include <atomic>
#include <cstdio>
#include <cstdlib>
#include <map>
#include <mutex>
#include <sstream>

#include "util/atomic_output.hpp"
#include "util/error.hpp"

namespace cuboid::trace {
namespace {

std::atomic<bool> recording{false};

struct Event {
  int track;
  std::string name, args;
  char phase;  // 'X' complete, 'i' instant
  Clock::time_point begin, end;
};

struct Recorder {
  std::mutex mutex;
  std::vector<Event> events;
  std::map<std::string, int> tracks;
  int process = 0;
  std::string process_name = "cuboid";
  bool own_file = false;
  std::string exit_flag, exit_path;  // record_until_exit
  // The steady clock's own epoch (boot, on Linux): the same for every process of a node, so
  // that ranks on one node line up without agreeing on anything.
  Clock::time_point origin{};
};
Recorder& recorder() {
  static Recorder r;
  return r;
}

// Names and arguments are cuboid's own (processor names, fixed words): quotes, backslashes and
// control characters are escaped all the same.
std::string quoted(const std::string& s) {
  std::string out = "\"";
  for (const char c : s) {
    if (c == '"' || c == '\\') {
      out += '\\';
      out += c;
    } else if (static_cast<unsigned char>(c) < 0x20) {
      char buf[8];
      std::snprintf(buf, sizeof buf, "\\u%04x", static_cast<unsigned>(c));
      out += buf;
    } else {
      out += c;
    }
  }
  return out + "\"";
}

void record(const std::string& track, const std::string& name, char phase, Clock::time_point begin,
            Clock::time_point end, const std::string& args) {
  auto& r = recorder();
  std::lock_guard<std::mutex> lock(r.mutex);
  const auto found = r.tracks.emplace(track, int(r.tracks.size()) + 1);
  r.events.push_back(Event{found.first->second, name, args, phase, begin, end});
}

double micros(Clock::duration d) { return std::chrono::duration<double, std::micro>(d).count(); }

}  // namespace

bool on() { return recording.load(std::memory_order_relaxed); }

void enable() { recording.store(true); }

void disable() { recording.store(false); }

void set_process(int id, const std::string& name, bool own_file) {
  auto& r = recorder();
  std::lock_guard<std::mutex> lock(r.mutex);
  r.process = id, r.process_name = name, r.own_file = own_file;
}

void record_until_exit(const std::string& flag, const std::string& path) {
  auto& r = recorder();
  {
    std::lock_guard<std::mutex> lock(r.mutex);
    if (r.exit_path == path) return;
    if (!r.exit_path.empty())
      throw Error(flag + " '" + path + "': this process already traces to '" + r.exit_path + "'");
  }
  check_output_path(flag, path);
  {
    std::lock_guard<std::mutex> lock(r.mutex);
    r.exit_flag = flag, r.exit_path = path;
  }
  // Registered after the recorder exists, so it runs before the recorder is destroyed.
  std::atexit([] {
    auto& rec = recorder();
    std::string flag, path;
    {
      std::lock_guard<std::mutex> lock(rec.mutex);
      flag = rec.exit_flag, path = rec.exit_path;
      if (rec.own_file) path += "." + std::to_string(rec.process);
    }
    recording.store(false);
    try {
      write(flag, path, {take_events()});
    } catch (const std::exception& e) {
      std::fprintf(stderr, "cuboid: error: %s\n", e.what());
    }
  });
  enable();
}

void set_origin(Clock::time_point t) {
  auto& r = recorder();
  std::lock_guard<std::mutex> lock(r.mutex);
  r.origin = t;
}

void complete(const std::string& track, const std::string& name, Clock::time_point begin,
              Clock::time_point end, const std::string& args) {
  if (on()) record(track, name, 'X', begin, end, args);
}

void instant(const std::string& track, const std::string& name, Clock::time_point at,
             const std::string& args) {
  if (on()) record(track, name, 'i', at, at, args);
}

Span::Span(std::string track, std::string name, std::string args) : on_(on()) {
  if (!on_) return;
  track_ = std::move(track), name_ = std::move(name), args_ = std::move(args);
  begin_ = Clock::now();
}

Span::Span(Queue track, const char* name) : on_(on()) {
  if (!on_) return;
  track_ = track.owner + " " + track.queue, name_ = name;
  begin_ = Clock::now();
}

Span::~Span() {
  if (on_) record(track_, name_, 'X', begin_, Clock::now(), args_);
}

std::string take_events() {
  auto& r = recorder();
  std::lock_guard<std::mutex> lock(r.mutex);
  std::ostringstream out;
  out.precision(3);
  out << std::fixed;
  const std::string pid = std::to_string(r.process);
  out << "{\"ph\": \"M\", \"name\": \"process_name\", \"pid\": " << pid
      << ", \"args\": {\"name\": " << quoted(r.process_name) << "}}";
  // Each track's name, for the viewer's labels.
  for (const auto& [name, id] : r.tracks)
    out << ",\n{\"ph\": \"M\", \"name\": \"thread_name\", \"pid\": " << pid << ", \"tid\": " << id
        << ", \"args\": {\"name\": " << quoted(name) << "}}";
  for (const Event& e : r.events) {
    out << ",\n{\"ph\": \"" << e.phase << "\", \"name\": " << quoted(e.name) << ", \"pid\": " << pid
        << ", \"tid\": " << e.track << ", \"ts\": " << micros(e.begin - r.origin);
    if (e.phase == 'X') out << ", \"dur\": " << micros(e.end - e.begin);
    if (e.phase == 'i') out << ", \"s\": \"t\"";
    if (!e.args.empty()) out << ", \"args\": {" << e.args << "}";
    out << "}";
  }
  r.events.clear();
  return out.str();
}

std::string document(const std::vector<std::string>& event_lists) {
  std::string text = "{\"displayTimeUnit\": \"ms\", \"traceEvents\": [\n";
  bool first = true;
  for (const auto& list : event_lists) {
    if (list.empty()) continue;
    if (!first) text += ",\n";
    text += list;
    first = false;
  }
  return text + "\n]}\n";
}

void write(const std::string& flag, const std::string& path,
           const std::vector<std::string>& event_lists) {
  write_outputs({OutputFile{flag, path, document(event_lists)}});
}

}  // namespace cuboid::trace
