/* plat_file_check -- see plat_file_check.h. */
#include "plat_file_check.h"

#include "cluster.h"
#include "rail_zone.h" /* plat_gpu_name */
extern "C" {
#include "plat_file_xml.h"
#include "common/lsim_input.h"
}

#include <simgrid/s4u.hpp>
#include <csignal>
#include <cstdio>
#include <cstring>
#include <fcntl.h>
#include <string>
#include <sys/wait.h>
#include <unistd.h>
#include <vector>

namespace sg4 = simgrid::s4u;

/* The child's pipe and the pair it is looking at: SimGrid dies on a missing route (a null route read, or
 * an assertion), and the handler then names the pair. */
static int report_fd = -1;
static char current_pair[256];

static void on_abort(int)
{
  if (current_pair[0]) {
    ssize_t ignored = write(report_fd, current_pair, strlen(current_pair));
    (void)ignored;
    _exit(5);
  }
  _exit(6);
}

/* In the child: load the file, look for every rank's host and every pair's route; the first missing
 * one is reported on fd. */
static void check_in_child(const char *path, int gpus_per_node, int world_size, const int *pairs, int n_pairs, int fd)
{
  char name[] = "layoutsim", quiet[] = "--log=root.thres:critical", cfg[] = "--log=xbt_cfg.thres:critical";
  char *argv[] = {name, quiet, cfg, nullptr};
  int argc = 3;
  dup2(fd, 2); /* SimGrid's complaint, if it dies, comes through the pipe */
  sg4::Engine e(&argc, argv);
  try {
    e.load_platform(path);
  } catch (const std::exception &x) { /* SimGrid's parse errors are exceptions: their message is the reason */
    dprintf(fd, "%s\n", x.what());
    _exit(4);
  }
  std::vector<sg4::Host *> hosts((size_t)world_size);
  for (int r = 0; r < world_size; r++) {
    std::string h = plat_gpu_name(r / gpus_per_node, r % gpus_per_node);
    hosts[(size_t)r] = sg4::Host::by_name_or_null(h);
    if (!hosts[(size_t)r]) {
      dprintf(fd, "no host '%s' for rank %d\n", h.c_str(), r);
      _exit(3);
    }
  }
  /* routes: SimGrid's own assertion text (and backtrace) on a missing one would be its first line; ours instead */
  report_fd = fd;
  int null = open("/dev/null", O_WRONLY);
  if (null >= 0) dup2(null, 2);
  /* SimGrid 3.32 dereferences a null route in a full zone (SIGSEGV) or asserts (SIGABRT) */
  for (int sig : {SIGABRT, SIGSEGV, SIGBUS}) signal(sig, on_abort);
  for (int i = 0; i < n_pairs; i++) {
    int a = pairs[2 * i], b = pairs[2 * i + 1];
    if (a < 0 || b < 0 || a >= world_size || b >= world_size || a == b) continue;
    snprintf(current_pair, sizeof current_pair, "no route from '%s' (rank %d) to '%s' (rank %d)\n",
             hosts[(size_t)a]->get_cname(), a, hosts[(size_t)b]->get_cname(), b);
    std::vector<sg4::Link *> links;
    double latency = 0;
    try {
      hosts[(size_t)a]->route_to(hosts[(size_t)b], links, &latency);
    } catch (const std::exception &) {
      dprintf(fd, "%s", current_pair);
      _exit(5);
    }
  }
  _exit(0);
}

extern "C" int plat_file_check_routes(const char *path, int gpus_per_node, int world_size, const int *pairs,
                                      int n_pairs, char *msg, int msg_size)
{
  /* never a file plat_file_xml has not passed (SimGrid's parser corrupts its heap on some) */
  char *text = nullptr;
  gsize len = 0;
  GError *err = nullptr;
  if (!lsim_input_read(path, LSIM_INPUT_PLATFORM, &text, &len, &err) ||
      !plat_file_xml_validate(path, text, len, G_MAXDOUBLE, nullptr, &err)) {
    snprintf(msg, (size_t)msg_size, "%s", err->message);
    g_error_free(err);
    g_free(text);
    return 0;
  }
  g_free(text);
  int fds[2];
  if (pipe(fds) != 0) return snprintf(msg, (size_t)msg_size, "cannot check it (no pipe)"), 0;
  fflush(nullptr);
  pid_t pid = fork();
  if (pid < 0) return close(fds[0]), close(fds[1]), snprintf(msg, (size_t)msg_size, "cannot check it (no process)"), 0;
  if (pid == 0) {
    close(fds[0]);
    check_in_child(path, gpus_per_node, world_size, pairs, n_pairs, fds[1]);
  }
  close(fds[1]);
  std::string out;
  char buf[512];
  for (ssize_t n; (n = read(fds[0], buf, sizeof buf)) > 0;) out.append(buf, (size_t)n);
  close(fds[0]);
  int status = 0;
  waitpid(pid, &status, 0);
  if (WIFEXITED(status) && WEXITSTATUS(status) == 0) return 1;
  /* the first line that says something: ours, or SimGrid's own */
  std::string line;
  size_t at = 0;
  while (at < out.size() && line.empty()) {
    size_t end = out.find('\n', at);
    line = out.substr(at, end == std::string::npos ? std::string::npos : end - at);
    at = end == std::string::npos ? out.size() : end + 1;
    while (!line.empty() && (line.back() == '\r' || line.back() == ' ')) line.pop_back();
  }
  if (line.empty()) line = "SimGrid could not load it";
  snprintf(msg, (size_t)msg_size, "%s", line.c_str());
  return 0;
}

extern "C" int plat_file_check(const char *path, int gpus_per_node, int world_size, char *msg, int msg_size)
{
  return plat_file_check_routes(path, gpus_per_node, world_size, nullptr, 0, msg, msg_size);
}
