#pragma once
// An enumeration's names in one table that reads both ways: the name of a value (records,
// messages) and the value of a name (decks, command lines, the environment).
#include <cstddef>
#include <optional>
#include <string_view>

namespace cuboid {

template <class E>
struct Named {
  E value;
  std::string_view name;
};

template <class E, std::size_t N>
constexpr std::string_view name_of(E value, const Named<E> (&table)[N],
                                   std::string_view otherwise = "?") {
  for (const auto& entry : table)
    if (entry.value == value) return entry.name;
  return otherwise;
}

template <class E, std::size_t N>
constexpr std::optional<E> value_of(std::string_view name, const Named<E> (&table)[N]) {
  for (const auto& entry : table)
    if (entry.name == name) return entry.value;
  return std::nullopt;
}

}  // namespace cuboid
