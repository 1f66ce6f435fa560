#pragma once
// Text from the user echoed back in messages: a huge value is cut, and control characters are
// escaped, so one bad line cannot flood the terminal or hide the message.
#include <string>
#include <string_view>

namespace cuboid {

// `s` with control characters written as \n, \t or \xHH; when longer than `max` characters, its
// start and "... (N bytes)".
inline std::string clip(std::string_view s, std::size_t max = 80) {
  std::string out;
  const std::size_t keep = s.size() > max ? max : s.size();
  for (std::size_t i = 0; i < keep; ++i) {
    const unsigned char c = static_cast<unsigned char>(s[i]);
    if (c == '\n') {
      out += "\\n";
    } else if (c == '\t') {
      out += "\\t";
    } else if (c < 0x20 || c == 0x7f) {
      static const char hex[] = "0123456789abcdef";
      out += "\\x";
      out += hex[c >> 4];
      out += hex[c & 15];
    } else {
      out += char(c);
    }
  }
  if (s.size() > max) out += "... (" + std::to_string(s.size()) + " bytes)";
  return out;
}

}  // namespace cuboid
