#include "core/net/address.h"

namespace sluice {

void FormatAddress(const struct sockaddr_storage& ss, std::string* ip,
                   int* port, int* family) {
  char buf[64] = {0};
  if (ss.ss_family == AF_INET6) {
    auto* a = reinterpret_cast<const struct sockaddr_in6*>(&ss);
    uv_ip6_name(a, buf, sizeof(buf));
    *port = ntohs(a->sin6_port);
    *family = 6;
  } else {
    auto* a = reinterpret_cast<const struct sockaddr_in*>(&ss);
    uv_ip4_name(a, buf, sizeof(buf));
    *port = ntohs(a->sin_port);
    *family = 4;
  }
  *ip = buf;
}

int GetTcpAddress(const uv_tcp_t* tcp, AddressKind kind, std::string* ip,
                  int* port, int* family) {
  struct sockaddr_storage ss;
  int len = sizeof(ss);
  auto* sa = reinterpret_cast<struct sockaddr*>(&ss);
  int r = kind == AddressKind::kPeer ? uv_tcp_getpeername(tcp, sa, &len)
                                     : uv_tcp_getsockname(tcp, sa, &len);
  if (r != 0) return r;
  FormatAddress(ss, ip, port, family);
  return 0;
}

}  // namespace sluice
