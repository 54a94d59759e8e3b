// Small ASCII string helpers shared by the header, coding and path parsers
// (HTTP field syntax is ASCII: bytes >= 0x80 pass through unchanged). Pure
// functions of their arguments, no allocation except AsciiLowerCopy.
#pragma once

#include <string>
#include <string_view>
#include <type_traits>
#include <utility>

namespace sluice {

inline char AsciiLower(char c) {
  return (c >= 'A' && c <= 'Z') ? static_cast<char>(c - 'A' + 'a') : c;
}

inline std::string AsciiLowerCopy(std::string_view s) {
  std::string out(s);
  for (char& c : out) c = AsciiLower(c);
  return out;
}

inline bool AsciiIEquals(std::string_view a, std::string_view b) {
  if (a.size() != b.size()) return false;
  for (size_t i = 0; i < a.size(); i++) {
    if (AsciiLower(a[i]) != AsciiLower(b[i])) return false;
  }
  return true;
}

// Without leading and trailing optional whitespace (space, tab: RFC 9110 OWS).
inline std::string_view TrimOws(std::string_view s) {
  while (!s.empty() && (s.front() == ' ' || s.front() == '\t')) s.remove_prefix(1);
  while (!s.empty() && (s.back() == ' ' || s.back() == '\t')) s.remove_suffix(1);
  return s;
}

// Calls fn(part) for each part of `s` between `delim`s, in order, as
// JavaScript's s.split(delim) yields them: empty parts included ("a,,b"
// gives "a", "", "b"; "" gives one empty part). fn may return bool: false
// stops the walk (ForEachPart then returns false; true otherwise).
template <typename Fn>
bool ForEachPart(std::string_view s, char delim, Fn&& fn) {
  size_t i = 0;
  for (;;) {
    size_t j = s.find(delim, i);
    const bool last = j == std::string_view::npos;
    if (last) j = s.size();
    std::string_view part = s.substr(i, j - i);
    if constexpr (std::is_same_v<std::invoke_result_t<Fn&, std::string_view>, bool>) {
      if (!fn(part)) return false;
    } else {
      fn(part);
    }
    if (last) return true;
    i = j + 1;
  }
}

}  // namespace sluice
