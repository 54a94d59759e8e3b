/*
 * wsload: a WebSocket load client for benchmark/websocket (C, epoll, no
 * library). Built by the runner with `cc -O2` at run time (wsload.js).
 *
 *   wsload echo   HOST PORT PATH CONNS SIZE SECONDS [text]
 *       CONNS connections each send one SIZE-byte binary message (with
 *       `text`: a text message, the same ASCII letters) and wait for its
 *       echo before sending the next (a closed loop, as wrk's).
 *   wsload fanout HOST PORT PUBPATH SUBPATH SUBS SIZE SECONDS WINDOW [deflate]
 *       SUBS subscriber connections on SUBPATH, one publisher on PUBPATH
 *       that keeps WINDOW messages in flight: a message counts as done
 *       when every subscriber has it; deliveries are counted per subscriber.
 *       With `deflate`: the messages are compressible text (JSON-like
 *       lines), every connection offers permessage-deflate, and a
 *       subscriber knows a message by its order (the n-th message it gets
 *       is the n-th published: TCP keeps the order and nothing is dropped)
 *       instead of by the sequence number in its first bytes, which a
 *       compressed frame hides; compressed frames (RSV1) are counted, not
 *       inflated (the server's CPU is what is measured).
 *   wsload idle   HOST PORT PATH CONNS SECONDS
 *       opens CONNS WebSockets, completes every handshake and holds them
 *       open and silent for SECONDS (the runner reads the server's RSS).
 *
 * Prints one result line:
 *   RESULT mode=.. messages=N seconds=S bytes=B errors=E open=O compressed=C
 * messages: echoes received (echo), deliveries (fanout), or 0 (idle).
 * Messages are measured after every connection is open; the handshake and
 * connect phase is not timed. Frames the client sends are masked (RFC 6455
 * requires it); the payload is the same bytes each time with its mask
 * applied once, which the server must unmask anyway.
 */
#define _GNU_SOURCE
#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#define RBUF (256 * 1024)

enum { ST_CONNECTING, ST_HANDSHAKE, ST_OPEN, ST_DEAD };

struct conn {
  int fd;
  int state;
  int role;          /* 0 echo/idle/sub, 1 publisher */
  char *rbuf;
  size_t rlen;       /* bytes in rbuf not yet consumed */
  uint64_t skip;     /* payload bytes of the current frame still to read */
  int in_payload;    /* reading a data frame's payload */
  int fin;           /* the current frame ends a message */
  unsigned char seqbuf[4];
  int seqgot;        /* bytes of the fan-out sequence number read */
  const char *out;   /* pending output */
  size_t outlen, outoff;
  int inflight;      /* echo: a message is in flight */
  uint32_t nmsg;     /* fan-out with deflate: messages received (the next seq) */
};

static const char *g_host;
static int g_port;
static int g_ep;
static long long g_messages, g_bytes, g_errors;
static int g_open;
static int g_measuring;
static unsigned char *g_frame; /* the masked frame every echo connection sends */
static size_t g_framelen;
static size_t g_size;

/* fan-out */
static int g_subs;
static int g_window;
static uint32_t g_nextseq;
static int *g_seqcount;      /* per slot: subscribers that have the message */
static uint32_t *g_seqslot;  /* per slot: which seq it holds */
static struct conn *g_pub;
static int g_deflate;        /* fan-out: offer permessage-deflate, compressible text */
static long long g_compressed; /* data frames received with RSV1 */

static double now(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return ts.tv_sec + ts.tv_nsec / 1e9;
}

static void die(const char *m) {
  perror(m);
  exit(2);
}

/* First byte of the data frames sent: FIN + binary, or FIN + text (echo text). */
static unsigned char g_first = 0x82;

/* A client frame: FIN, g_first's opcode, masked with a fixed key, payload p[0..n). */
static unsigned char *make_frame(const unsigned char *p, size_t n, size_t *len) {
  unsigned char *f = malloc(n + 14);
  size_t h = 0;
  const unsigned char key[4] = {0x12, 0x34, 0x56, 0x78};
  f[h++] = g_first;
  if (n < 126) {
    f[h++] = 0x80 | (unsigned char)n;
  } else if (n < 65536) {
    f[h++] = 0x80 | 126;
    f[h++] = (unsigned char)(n >> 8);
    f[h++] = (unsigned char)n;
  } else {
    f[h++] = 0x80 | 127;
    for (int i = 7; i >= 0; i--) f[h++] = (unsigned char)((uint64_t)n >> (8 * i));
  }
  memcpy(f + h, key, 4);
  h += 4;
  for (size_t i = 0; i < n; i++) f[h + i] = p[i] ^ key[i & 3];
  *len = h + n;
  return f;
}

static void watch(struct conn *c, uint32_t events, int op) {
  struct epoll_event ev = {.events = events, .data = {.ptr = c}};
  if (epoll_ctl(g_ep, op, c->fd, &ev) < 0) die("epoll_ctl");
}

static void kill_conn(struct conn *c) {
  if (c->state == ST_DEAD) return;
  if (c->state == ST_OPEN) g_open--;
  c->state = ST_DEAD;
  g_errors++;
  close(c->fd);
}

/* Writes what is pending; 0 when all of it left, 1 when EAGAIN (EPOLLOUT armed), -1 on error. */
static int flush_out(struct conn *c) {
  while (c->outoff < c->outlen) {
    ssize_t w = send(c->fd, c->out + c->outoff, c->outlen - c->outoff, MSG_NOSIGNAL);
    if (w < 0) {
      if (errno == EAGAIN) {
        watch(c, EPOLLIN | EPOLLOUT, EPOLL_CTL_MOD);
        return 1;
      }
      return -1;
    }
    c->outoff += (size_t)w;
  }
  return 0;
}

static int send_buf(struct conn *c, const void *p, size_t n) {
  if (c->outoff < c->outlen) return 1; /* still writing the previous one */
  c->out = p;
  c->outlen = n;
  c->outoff = 0;
  int r = flush_out(c);
  if (r < 0) kill_conn(c);
  return r;
}

static char g_request[1024];
static size_t g_requestlen;

static void make_request(const char *path) {
  g_requestlen = (size_t)snprintf(g_request, sizeof g_request,
      "GET %s HTTP/1.1\r\nHost: %s:%d\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n"
      "Sec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==\r\nSec-WebSocket-Version: 13\r\n%s\r\n",
      path, g_host, g_port, g_deflate ? "Sec-WebSocket-Extensions: permessage-deflate\r\n" : "");
}

static struct conn *open_conn(const char *path, int role) {
  struct conn *c = calloc(1, sizeof *c);
  c->rbuf = malloc(RBUF);
  c->role = role;
  c->fd = socket(AF_INET, SOCK_STREAM | SOCK_NONBLOCK, 0);
  if (c->fd < 0) die("socket");
  int one = 1;
  setsockopt(c->fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
  struct sockaddr_in a = {.sin_family = AF_INET, .sin_port = htons((uint16_t)g_port)};
  inet_pton(AF_INET, g_host, &a.sin_addr);
  if (connect(c->fd, (struct sockaddr *)&a, sizeof a) < 0 && errno != EINPROGRESS) die("connect");
  c->state = ST_CONNECTING;
  (void)path;
  watch(c, EPOLLOUT, EPOLL_CTL_ADD);
  return c;
}

/* The request line differs per role (paths): each conn keeps its own copy. */
struct req { char buf[1024]; size_t len; };
static struct req g_reqs[2];

static void publish_next(void);

/* A whole data message arrived on c (its first 4 payload bytes in seqbuf for fan-out). */
static void on_message(struct conn *c) {
  if (g_measuring) g_messages++;
  if (g_subs) { /* fan-out subscriber */
    uint32_t seq = g_deflate ? c->nmsg++ :
                   ((uint32_t)c->seqbuf[0] << 24) | ((uint32_t)c->seqbuf[1] << 16) |
                   ((uint32_t)c->seqbuf[2] << 8) | c->seqbuf[3];
    int slot = (int)(seq % (uint32_t)g_window);
    if (g_seqslot[slot] == seq && ++g_seqcount[slot] == g_subs) {
      g_seqslot[slot] = UINT32_MAX;
      publish_next();
    }
    return;
  }
  /* echo: send the next one */
  c->inflight = 0;
  if (send_buf(c, g_frame, g_framelen) >= 0) c->inflight = 1;
}


static void publish_next(void) {
  if (!g_pub || g_pub->state != ST_OPEN) return;
  uint32_t seq = g_nextseq++;
  int slot = (int)(seq % (uint32_t)g_window);
  g_seqslot[slot] = seq;
  g_seqcount[slot] = 0;
  /* Build this seq's frame: the payload's first 4 bytes carry it (masked). */
  static unsigned char *payload;
  if (!payload) {
    payload = calloc(1, g_size < 4 ? 4 : g_size);
    if (g_deflate) {
      /* What a feed publishes: JSON-like lines, alike but not equal. */
      size_t at = 0;
      for (int i = 0; at < g_size; i++) {
        char line[160];
        int n = snprintf(line, sizeof line,
                         "{\"id\":%d,\"user\":\"user%03d\",\"type\":\"quote\",\"price\":%d.%02d,"
                         "\"text\":\"the quick brown fox jumps over the lazy dog\"}\n",
                         1000 + i, (i * 37) % 1000, 100 + (i * 13) % 900, (i * 7) % 100);
        size_t take = (size_t)n < g_size - at ? (size_t)n : g_size - at;
        memcpy(payload + at, line, take);
        at += take;
      }
    }
  }
  payload[0] = (unsigned char)(seq >> 24);
  payload[1] = (unsigned char)(seq >> 16);
  payload[2] = (unsigned char)(seq >> 8);
  payload[3] = (unsigned char)seq;
  size_t len;
  unsigned char *f = make_frame(payload, g_size < 4 ? 4 : g_size, &len);
  /* Frames queue up behind each other on the publisher (at most WINDOW). */
  static unsigned char *q;
  static size_t qlen, qcap;
  struct conn *c = g_pub;
  if (c->outoff < c->outlen) { /* still writing: append to the tail */
    size_t rest = c->outlen - c->outoff;
    if (qcap < rest + len) {
      qcap = (rest + len) * 2;
      unsigned char *nq = malloc(qcap);
      memcpy(nq, c->out + c->outoff, rest);
      free(q);
      q = nq;
    } else {
      memmove(q, c->out + c->outoff, rest);
    }
    memcpy(q + rest, f, len);
    qlen = rest + len;
    c->out = (const char *)q;
    c->outlen = qlen;
    c->outoff = 0;
  } else {
    if (qcap < len) {
      qcap = len * 2;
      free(q);
      q = malloc(qcap);
    }
    memcpy(q, f, len);
    c->out = (const char *)q;
    c->outlen = len;
    c->outoff = 0;
    if (flush_out(c) < 0) kill_conn(c);
  }
  free(f);
}

/* Consumes frames in c->rbuf[0..rlen). */
static void parse_frames(struct conn *c) {
  size_t off = 0;
  while (off < c->rlen) {
    if (c->in_payload) {
      size_t avail = c->rlen - off;
      size_t take = avail < c->skip ? avail : (size_t)c->skip;
      while (c->seqgot < 4 && take > 0) {
        c->seqbuf[c->seqgot++] = (unsigned char)c->rbuf[off++];
        take--;
        c->skip--;
        if (g_measuring) g_bytes++;
      }
      off += take;
      c->skip -= take;
      if (g_measuring) g_bytes += (long long)take;
      if (c->skip == 0) {
        c->in_payload = 0;
        if (c->fin) on_message(c);
        if (c->state == ST_DEAD) return;
      }
      continue;
    }
    size_t avail = c->rlen - off;
    if (avail < 2) break;
    const unsigned char *p = (const unsigned char *)c->rbuf + off;
    int opcode = p[0] & 0x0f;
    uint64_t len = p[1] & 0x7f;
    size_t h = 2;
    if (len == 126) {
      if (avail < 4) break;
      len = ((uint64_t)p[2] << 8) | p[3];
      h = 4;
    } else if (len == 127) {
      if (avail < 10) break;
      len = 0;
      for (int i = 0; i < 8; i++) len = (len << 8) | p[2 + i];
      h = 10;
    }
    if (opcode >= 8) { /* control: need it whole; a close ends the connection */
      if (avail < h + len) break;
      off += h + (size_t)len;
      if (opcode == 8) {
        kill_conn(c);
        return;
      }
      continue;
    }
    off += h;
    c->fin = (p[0] & 0x80) != 0;
    if ((p[0] & 0x40) && g_measuring) g_compressed++;
    if (opcode != 0) c->seqgot = 0;
    c->skip = len;
    c->in_payload = 1;
    if (len == 0) {
      c->in_payload = 0;
      if (c->fin) on_message(c);
      if (c->state == ST_DEAD) return;
    }
  }
  memmove(c->rbuf, c->rbuf + off, c->rlen - off);
  c->rlen -= off;
}

static int g_wanted;

static void on_event(struct conn *c, uint32_t ev) {
  if (c->state == ST_DEAD) return;
  if (ev & (EPOLLERR | EPOLLHUP)) {
    kill_conn(c);
    return;
  }
  if (c->state == ST_CONNECTING && (ev & EPOLLOUT)) {
    struct req *r = &g_reqs[c->role];
    c->state = ST_HANDSHAKE;
    watch(c, EPOLLIN, EPOLL_CTL_MOD);
    if (send(c->fd, r->buf, r->len, MSG_NOSIGNAL) != (ssize_t)r->len) kill_conn(c);
    return;
  }
  if ((ev & EPOLLOUT) && c->state == ST_OPEN) {
    int r = flush_out(c);
    if (r < 0) {
      kill_conn(c);
      return;
    }
    if (r == 0) watch(c, EPOLLIN, EPOLL_CTL_MOD);
  }
  if (!(ev & EPOLLIN)) return;
  for (;;) {
    ssize_t n = recv(c->fd, c->rbuf + c->rlen, RBUF - c->rlen, 0);
    if (n < 0) {
      if (errno == EAGAIN) return;
      kill_conn(c);
      return;
    }
    if (n == 0) {
      kill_conn(c);
      return;
    }
    c->rlen += (size_t)n;
    if (c->state == ST_HANDSHAKE) {
      char *end = memmem(c->rbuf, c->rlen, "\r\n\r\n", 4);
      if (!end) continue;
      if (strncmp(c->rbuf, "HTTP/1.1 101", 12) != 0) {
        fprintf(stderr, "handshake refused: %.60s\n", c->rbuf);
        kill_conn(c);
        return;
      }
      size_t used = (size_t)(end + 4 - c->rbuf);
      memmove(c->rbuf, c->rbuf + used, c->rlen - used);
      c->rlen -= used;
      c->state = ST_OPEN;
      g_open++;
    }
    if (c->state == ST_OPEN) parse_frames(c);
    if (c->state == ST_DEAD) return;
  }
}

static void loop_until(double deadline, int (*done)(void)) {
  struct epoll_event evs[256];
  while (now() < deadline && !(done && done())) {
    int n = epoll_wait(g_ep, evs, 256, 50);
    if (n < 0 && errno != EINTR) die("epoll_wait");
    for (int i = 0; i < n; i++) on_event(evs[i].data.ptr, evs[i].events);
  }
}

static int all_open(void) { return g_open >= g_wanted; }

int main(int argc, char **argv) {
  if (argc < 2) {
    fprintf(stderr, "usage: see the comment at the top of wsload.c\n");
    return 2;
  }
  const char *mode = argv[1];
  g_ep = epoll_create1(0);
  if (g_ep < 0) die("epoll_create1");
  int conns;
  double seconds;
  struct conn **cs;
  if (!strcmp(mode, "echo") && (argc == 8 || (argc == 9 && !strcmp(argv[8], "text")))) {
    if (argc == 9) g_first = 0x81;
    g_host = argv[2];
    g_port = atoi(argv[3]);
    conns = atoi(argv[5]);
    g_size = (size_t)atol(argv[6]);
    seconds = atof(argv[7]);
    make_request(argv[4]);
    memcpy(g_reqs[0].buf, g_request, g_requestlen);
    g_reqs[0].len = g_requestlen;
    unsigned char *payload = malloc(g_size ? g_size : 1);
    for (size_t i = 0; i < g_size; i++) payload[i] = (unsigned char)('a' + i % 26);
    g_frame = make_frame(payload, g_size, &g_framelen);
  } else if (!strcmp(mode, "fanout") && (argc == 10 || (argc == 11 && !strcmp(argv[10], "deflate")))) {
    g_deflate = argc == 11;
    g_host = argv[2];
    g_port = atoi(argv[3]);
    make_request(argv[4]);
    memcpy(g_reqs[1].buf, g_request, g_requestlen);
    g_reqs[1].len = g_requestlen;
    make_request(argv[5]);
    memcpy(g_reqs[0].buf, g_request, g_requestlen);
    g_reqs[0].len = g_requestlen;
    conns = atoi(argv[6]);
    g_size = (size_t)atol(argv[7]);
    seconds = atof(argv[8]);
    g_window = atoi(argv[9]);
    g_seqcount = calloc((size_t)g_window, sizeof *g_seqcount);
    g_seqslot = malloc((size_t)g_window * sizeof *g_seqslot);
    for (int i = 0; i < g_window; i++) g_seqslot[i] = UINT32_MAX;
  } else if (!strcmp(mode, "idle") && argc == 7) {
    g_host = argv[2];
    g_port = atoi(argv[3]);
    make_request(argv[4]);
    memcpy(g_reqs[0].buf, g_request, g_requestlen);
    g_reqs[0].len = g_requestlen;
    conns = atoi(argv[5]);
    seconds = atof(argv[6]);
  } else {
    fprintf(stderr, "bad arguments for %s\n", mode);
    return 2;
  }

  /* Open everything (in batches, so a listen backlog is not overrun). */
  cs = calloc((size_t)conns, sizeof *cs);
  double t0 = now();
  for (int i = 0; i < conns; i += 200) {
    int end = i + 200 < conns ? i + 200 : conns;
    for (int j = i; j < end; j++) cs[j] = open_conn(argv[4], 0);
    g_wanted = end;
    loop_until(t0 + 60, all_open);
  }
  if (!strcmp(mode, "fanout")) {
    g_pub = open_conn(argv[4], 1);
    g_wanted = conns + 1;
    loop_until(t0 + 60, all_open);
  }
  if (g_open < g_wanted) {
    fprintf(stderr, "only %d of %d connections open after 60 s\n", g_open, g_wanted);
    printf("RESULT mode=%s messages=0 seconds=0 bytes=0 errors=%lld open=%d compressed=0\n", mode, g_errors, g_open);
    return 1;
  }
  g_errors = 0;
  if (!strcmp(mode, "idle")) {
    printf("OPEN %d\n", g_open);
    fflush(stdout);
    loop_until(now() + seconds, NULL);
    printf("RESULT mode=idle messages=0 seconds=%.3f bytes=0 errors=%lld open=%d compressed=0\n", seconds, g_errors, g_open);
    return g_open == conns ? 0 : 1;
  }
  /* Start the load, then measure over `seconds` (a short ramp first). */
  if (!strcmp(mode, "echo")) {
    for (int i = 0; i < conns; i++)
      if (send_buf(cs[i], g_frame, g_framelen) >= 0) cs[i]->inflight = 1;
  } else {
    g_subs = conns;
    for (int i = 0; i < g_window; i++) publish_next();
  }
  loop_until(now() + 0.2, NULL);
  g_measuring = 1;
  double m0 = now();
  loop_until(m0 + seconds, NULL);
  double took = now() - m0;
  printf("RESULT mode=%s messages=%lld seconds=%.3f bytes=%lld errors=%lld open=%d compressed=%lld\n", mode,
         g_messages, took, g_bytes, g_errors, g_open, g_compressed);
  return g_errors ? 1 : 0;
}
