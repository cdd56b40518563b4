// pxq-noise: a controlled background load, for showing how a measurement's distribution
// changes under interference. One thread per listed core, pinned to it:
//
//   memory    a triad over 64 MiB per thread (memory bandwidth)
//   compute   dependent multiply-adds in registers (a busy core)
//   network   64 KiB messages both ways over a loopback TCP connection (the network stack)
//
// --intensity is the duty cycle: each 10 ms period the thread works that fraction of the
// time and sleeps the rest. It stops on SIGTERM or SIGINT, and by itself after --seconds, so
// a load whose driver died never runs on for long.
#include <arpa/inet.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <pthread.h>
#include <sched.h>
#include <sys/socket.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <csignal>
#include <cstdio>
#include <stdexcept>
#include <string>
#include <thread>
#include <vector>

#include "pxq/common/cli.hpp"

namespace {

std::atomic<bool> g_stop{false};

extern "C" void on_signal(int) { g_stop.store(true); }

using Clock = std::chrono::steady_clock;
constexpr auto kPeriod = std::chrono::milliseconds(10);

void pin(int core) {
  cpu_set_t set;
  CPU_ZERO(&set);
  CPU_SET(core, &set);
  if (pthread_setaffinity_np(pthread_self(), sizeof(set), &set) != 0)
    std::fprintf(stderr, "pxq-noise: could not pin a thread to core %d; it runs unpinned\n", core);
}

// Works for intensity x 10 ms, sleeps the rest, until stopped; `work` does one small slice.
template <class Work>
void duty_cycle(double intensity, Work&& work) {
  while (!g_stop.load(std::memory_order_relaxed)) {
    const auto start = Clock::now();
    const auto busy_until = start + std::chrono::duration_cast<Clock::duration>(kPeriod * intensity);
    while (Clock::now() < busy_until && !g_stop.load(std::memory_order_relaxed)) work();
    std::this_thread::sleep_until(start + kPeriod);
  }
}

void memory_load(int core, double intensity) {
  pin(core);
  const std::size_t n = std::size_t{64} * 1024 * 1024 / sizeof(double) / 3;
  std::vector<double> a(n, 1.0), b(n, 2.0), c(n, 3.0);
  std::size_t pos = 0;
  const std::size_t slice = std::size_t{64} * 1024;
  duty_cycle(intensity, [&] {
    const std::size_t end = std::min(n, pos + slice);
    for (std::size_t i = pos; i < end; ++i) a[i] = b[i] + 0.5 * c[i];
    pos = end == n ? 0 : end;
  });
  volatile double sink = a[n / 2];
  (void)sink;
}

void compute_load(int core, double intensity) {
  pin(core);
  double x[8] = {1, 2, 3, 4, 5, 6, 7, 8};
  duty_cycle(intensity, [&] {
    for (int i = 0; i < 4096; ++i)
      for (double& v : x) v = v * 0.999999 + 1e-7;
  });
  volatile double sink = x[0];
  (void)sink;
}

// Both ends of a loopback TCP connection in this thread: write a message, read it back.
void network_load(int core, double intensity) {
  pin(core);
  const int server = socket(AF_INET, SOCK_STREAM, 0);
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  addr.sin_port = 0;
  socklen_t len = sizeof(addr);
  if (server < 0 || bind(server, reinterpret_cast<sockaddr*>(&addr), sizeof(addr)) != 0 || listen(server, 1) != 0 ||
      getsockname(server, reinterpret_cast<sockaddr*>(&addr), &len) != 0)
    throw std::runtime_error("network noise: cannot open a loopback TCP socket");
  const int client = socket(AF_INET, SOCK_STREAM, 0);
  if (client < 0 || connect(client, reinterpret_cast<sockaddr*>(&addr), sizeof(addr)) != 0)
    throw std::runtime_error("network noise: cannot connect over loopback TCP");
  const int peer = accept(server, nullptr, nullptr);
  if (peer < 0) throw std::runtime_error("network noise: cannot accept the loopback connection");
  std::vector<char> msg(std::size_t{64} * 1024, 'x'), in(msg.size());
  duty_cycle(intensity, [&] {
    for (int fd_pair = 0; fd_pair < 2; ++fd_pair) {
      const int from = fd_pair == 0 ? client : peer, to = fd_pair == 0 ? peer : client;
      std::size_t sent = 0, got = 0;
      while (sent < msg.size()) {
        const ssize_t s = send(from, msg.data() + sent, msg.size() - sent, 0);
        if (s <= 0) return;
        sent += static_cast<std::size_t>(s);
        while (got < sent) {
          const ssize_t r = recv(to, in.data() + got, sent - got, 0);
          if (r <= 0) return;
          got += static_cast<std::size_t>(r);
        }
      }
    }
  });
  close(peer);
  close(client);
  close(server);
}

std::vector<int> parse_cores(const std::string& text) {
  std::vector<int> cores;
  std::size_t pos = 0;
  while (pos <= text.size()) {
    const std::size_t comma = text.find(',', pos);
    const std::string item = text.substr(pos, comma == std::string::npos ? std::string::npos : comma - pos);
    try {
      std::size_t used = 0;
      const int c = std::stoi(item, &used);
      if (used != item.size() || c < 0) throw std::invalid_argument(item);
      cores.push_back(c);
    } catch (const std::exception&) {
      throw std::invalid_argument("--cores: '" + item + "' is not a core number; use a list such as 0 or 0,1");
    }
    if (comma == std::string::npos) break;
    pos = comma + 1;
  }
  return cores;
}

}  // namespace

int main(int argc, char** argv) {
  pxq::cli::App app{"pxq noise: a controlled background load (memory, compute or network)", "pxq-noise"};
  std::string mode = "memory", cores_text = "0";
  double intensity = 1.0, seconds = 600.0;
  app.add_option("--mode", mode, "memory, compute or network")->required();
  app.add_option("--cores", cores_text, "cores to load, one pinned thread each (default 0)");
  app.add_option("--intensity", intensity, "share of each 10 ms period spent working, (0, 1] (default 1)");
  app.add_option("--seconds", seconds, "stop by itself after this long (default 600)");
  app.add_ignored("--tag", "a label for finding this process (ignored)");
  PXQ_CLI_PARSE(app, argc, argv);
  std::vector<int> cores;
  try {
    if (mode != "memory" && mode != "compute" && mode != "network")
      throw std::invalid_argument("unknown --mode '" + mode + "': use memory, compute or network");
    if (!(intensity > 0.0 && intensity <= 1.0))
      throw std::invalid_argument("--intensity must be within (0, 1] (a duty cycle)");
    if (!(seconds > 0.0)) throw std::invalid_argument("--seconds must be > 0");
    cores = parse_cores(cores_text);
    const long online = sysconf(_SC_NPROCESSORS_ONLN);
    for (int c : cores)
      if (c >= online)
        throw std::invalid_argument("--cores: core " + std::to_string(c) + " does not exist (this machine has " +
                                    std::to_string(online) + ")");
  } catch (const std::invalid_argument& e) {
    std::fprintf(stderr, "pxq-noise: error: %s\n", e.what());
    return 2;
  }
  std::signal(SIGTERM, on_signal);
  std::signal(SIGINT, on_signal);
  std::vector<std::thread> threads;
  threads.reserve(cores.size());
  for (int c : cores)
    threads.emplace_back([=] {
      try {
        if (mode == "memory")
          memory_load(c, intensity);
        else if (mode == "compute")
          compute_load(c, intensity);
        else
          network_load(c, intensity);
      } catch (const std::exception& e) {
        std::fprintf(stderr, "pxq-noise: %s\n", e.what());
        g_stop.store(true);
      }
    });
  // The settings are good and the load runs: whoever started it may go on (pxq's driver waits
  // for this line, not for a guessed moment, so a loaded machine cannot hide a refusal).
  std::printf("pxq-noise: ready\n");
  std::fflush(stdout);
  const auto deadline =
      Clock::now() + std::chrono::duration_cast<Clock::duration>(std::chrono::duration<double>(seconds));
  while (!g_stop.load() && Clock::now() < deadline) std::this_thread::sleep_for(std::chrono::milliseconds(20));
  g_stop.store(true);
  for (auto& t : threads) t.join();
  return 0;
}
