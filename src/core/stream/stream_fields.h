// StreamFields: a request or trailer section as the HTTP/2 and HTTP/3
// sessions hand it to their delegates — (name, value) views in received
// order, pseudo-headers first, names lower-case. The views point into the
// session's memory and are valid only during the call that passes them.
#pragma once

#include <string_view>
#include <utility>
#include <vector>

namespace sluice {

using StreamFields = std::vector<std::pair<std::string_view, std::string_view>>;

}  // namespace sluice
