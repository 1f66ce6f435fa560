#pragma once
// What the C interface's sources share: the context behind the opaque handle and the rule that
// turns every exception into a status and a message. Internal: not installed.
#include <cuboid/cuboid.h>

#include <cuboid/cuboid.hpp>

#include <cstdint>
#include <new>
#include <stdexcept>
#include <string>

struct cuboid_context {
  explicit cuboid_context(const cuboid::ContextOptions& o);
  cuboid::Context context;
  // Never reused (an address may be): names the context in each thread's messages.
  const std::uint64_t id;
};

namespace cuboid::capi {

// The calling thread's message of its last call on `ctx` ("" after a success): threads that
// share a context each read their own calls' outcome.
std::string& error_of(const cuboid_context* ctx);
// Forgets the calling thread's message of a context being destroyed.
void forget_errors_of(const cuboid_context* ctx);

// Runs `f`, turning what it throws into a status and `message`.
template <class F>
cuboid_status guarded(std::string& message, F&& f) {
  try {
    f();
    message.clear();
    return CUBOID_SUCCESS;
  } catch (const cuboid::Unsupported& e) {
    message = e.what();
    return CUBOID_UNSUPPORTED;
  } catch (const std::invalid_argument& e) {
    message = e.what();
    return CUBOID_INVALID_ARGUMENT;
  } catch (const std::bad_alloc&) {
    message = "out of memory";
    return CUBOID_OUT_OF_MEMORY;
  } catch (const std::exception& e) {
    message = e.what();
    return CUBOID_RUNTIME_ERROR;
  } catch (...) {
    message = "an unknown error";
    return CUBOID_RUNTIME_ERROR;
  }
}

// 'N', 'T', 'C' (either case) as an Op, or KeyedError naming the argument.
inline Op op_argument(char c, const char* name) {
  const auto op = parse_op(c);
  if (!op) throw KeyedError(name, std::string(name) + " '" + c + "' is not N, T or C");
  return *op;
}

}  // namespace cuboid::capi
