// Socket address formatting shared by listeners and connections.
#pragma once

#include <uv.h>

#include <string>

namespace sluice {

// Fills ip ("127.0.0.1", "::1"), port and family (4 or 6) from `ss`.
void FormatAddress(const struct sockaddr_storage& ss, std::string* ip,
                   int* port, int* family);

enum class AddressKind { kPeer, kLocal };
// getpeername/getsockname of a TCP handle; 0 or a libuv error.
int GetTcpAddress(const uv_tcp_t* tcp, AddressKind kind, std::string* ip,
                  int* port, int* family);

}  // namespace sluice
