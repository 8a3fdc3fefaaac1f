//===- Decode.cpp - The helix-decode driver -------------------------------===//

#include "helix/Runtime/Decode.h"
#include "helix/Runtime/Backend.h"
#include "helix/Runtime/DecodeIO.h"
#include "helix/Runtime/Error.h"
#include "helix/Runtime/Speculative.h"

#include "MpiGroup.h"
#include "MpiWait.h"
#include "SpeculativeDecode.h"

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <limits>
#include <map>
#include <memory>
#include <thread>

namespace helix {
namespace rt {

namespace {

struct DecodeArgs {
  std::string weights, prompts, dumpLogits, dumpTokens;
  // Speculative programs only.
  std::string draftOracle, dumpDraftLogits, dumpAcceptance;
  int64_t steps = -1;
  ContextOptions context;
  bool help = false;
  bool reportMemory = false;
  bool reportTraffic = false;
  bool reportTiming = false;
};

/// `v` as an integer in [min, max] (stoll reports overflow: no clamp).
int64_t parseInt(const std::string &flag, const std::string &v,
                 int64_t min = std::numeric_limits<int64_t>::min(),
                 int64_t max = std::numeric_limits<int64_t>::max()) {
  size_t used = 0;
  long long x = 0;
  try {
    x = std::stoll(v, &used, 10);
  } catch (const std::exception &) {
    used = 0;
  }
  if (used != v.size() || v.empty() || x < min || x > max) {
    bool any = min == std::numeric_limits<int64_t>::min() &&
               max == std::numeric_limits<int64_t>::max();
    throw Error(
        flag + ": expected an integer" +
        (any ? ""
             : " from " + std::to_string(min) + " to " + std::to_string(max)) +
        ", got \"" + v + "\"");
  }
  return x;
}

/// Seconds in [0, 10^6] (0: no timeout), finite.
double parseSeconds(const std::string &flag, const std::string &v) {
  size_t used = 0;
  double x = -1;
  try {
    x = std::stod(v, &used);
  } catch (const std::exception &) {
    used = 0;
  }
  if (used != v.size() || v.empty() || !(x >= 0 && x <= 1e6))
    throw Error(flag +
                ": expected seconds from 0 (no timeout) to 1000000, "
                "got \"" +
                v + "\"");
  return x;
}

DecodeArgs parseArgs(int argc, char **argv, DecodeProgram &prog) {
  DecodeArgs a;
  a.context.backend = prog.defaultBackend;
  for (int i = 1; i < argc; ++i) {
    std::string flag = argv[i], value;
    if (flag == "-h" || flag == "--help") {
      a.help = true;
      continue;
    }
    if (flag == "--report-memory") {
      a.reportMemory = true;
      continue;
    }
    if (flag == "--report-traffic") {
      a.reportTraffic = true;
      continue;
    }
    if (flag == "--report-timing") {
      if (prog.draftTokens > 0)
        throw Error("--report-timing: greedy programs only (a speculative "
                    "step is a verify step and its draft passes)");
      a.reportTiming = true;
      continue;
    }
    if (flag.rfind("--", 0) != 0)
      throw Error("unexpected argument \"" + flag + "\" (see --help)");
    size_t eq = flag.find('=');
    if (eq != std::string::npos) {
      value = flag.substr(eq + 1);
      flag = flag.substr(0, eq);
    } else {
      if (i + 1 >= argc)
        throw Error(flag + ": missing value");
      value = argv[++i];
    }
    if (flag == "--weights")
      a.weights = value;
    else if (flag == "--prompts")
      a.prompts = value;
    else if (flag == "--steps")
      a.steps = parseInt(flag, value);
    else if (flag == "--dump-logits")
      a.dumpLogits = value;
    else if (flag == "--dump-tokens")
      a.dumpTokens = value;
    else if (flag == "--draft-oracle" || flag == "--dump-draft-logits" ||
             flag == "--dump-acceptance") {
      if (prog.draftTokens <= 0)
        throw Error(flag + ": this program decodes greedily, one token per "
                           "step (compile it with helix compile --mtp K for "
                           "speculative decoding)");
      (flag == "--draft-oracle"        ? a.draftOracle
       : flag == "--dump-draft-logits" ? a.dumpDraftLogits
                                       : a.dumpAcceptance) = value;
    } else if (flag == "--backend")
      a.context.backend = value;
    else if (flag == "--collectives")
      a.context.collectives = value;
    else if (flag == "--cuda-graphs")
      a.context.cudaGraphs = value;
    else if (flag == "--step-timeout")
      a.context.stepTimeoutS = parseSeconds(flag, value);
    else if (flag == "--device")
      a.context.device = static_cast<int>(
          parseInt(flag, value, 0, std::numeric_limits<int>::max()));
    else if (!prog.option || !prog.option(flag, value))
      throw Error("unknown option " + flag + " (see --help)");
  }
  if (a.help)
    return a;
  if (a.weights.empty())
    throw Error("--weights PATH is required (a .safetensors file, an "
                "index.json or a checkpoint directory)");
  if (a.prompts.empty())
    throw Error("--prompts FILE is required (one line of comma-separated "
                "token ids per batch row)");
  if (a.steps < 0)
    throw Error("--steps K is required (tokens to generate per row)");
  if (a.steps < 1)
    throw Error("--steps: expected at least 1, got " + std::to_string(a.steps));
  if (a.context.collectives != "auto" && a.context.collectives != "nccl" &&
      a.context.collectives != "mpi")
    throw Error("--collectives: expected auto, nccl or mpi, got \"" +
                a.context.collectives + "\"");
  if (a.context.cudaGraphs != "auto" && a.context.cudaGraphs != "on" &&
      a.context.cudaGraphs != "off")
    throw Error("--cuda-graphs: expected auto, on or off, got \"" +
                a.context.cudaGraphs + "\"");
  if (a.context.cudaGraphs == "on" && a.context.backend != "cuda")
    throw Error("--cuda-graphs on: CUDA graphs need --backend cuda (the " +
                a.context.backend + " backend has none)");
  return a;
}

/// --report-memory: rank 0 prints each rank's bytes by kind, in rank
/// order: weights, scales and KV cache as allocated (live), workspace as
/// its peak.
void reportMemory(Context &ctx) {
  const MemoryUse &m = ctx.memoryUse();
  std::vector<long long> mine = {
      m.live[static_cast<int>(MemoryKind::Weights)],
      m.live[static_cast<int>(MemoryKind::Scales)],
      m.live[static_cast<int>(MemoryKind::KVCache)],
      m.peak[static_cast<int>(MemoryKind::Workspace)]};
  std::vector<long long> all(mine.size() * ctx.worldSize());
  if (ctx.hasMPI())
    MPI_Gather(mine.data(), 4, MPI_LONG_LONG, all.data(), 4, MPI_LONG_LONG, 0,
               MPI_COMM_WORLD);
  else
    all = mine;
  if (ctx.rank() != 0)
    return;
  for (int r = 0; r < ctx.worldSize(); ++r) {
    const long long *v = &all[4 * r];
    std::printf("memory rank %d: weights %lld B, scales %lld B, kv cache "
                "%lld B, workspace peak %lld B, total %lld B\n",
                r, v[0], v[1], v[2], v[3], v[0] + v[1] + v[2] + v[3]);
  }
  std::fflush(stdout);
}

/// --report-traffic: rank 0 prints, for each rank, what the backend's ops
/// of the last step must move by kind (Backend::traffic: counted from the
/// ops' arguments and shapes), then rank 0's ops one by one.
void reportTraffic(Context &ctx, int64_t step) {
  std::map<std::string, OpTraffic> ops = ctx.backend().traffic();
  OpTraffic sum;
  for (const auto &[name, t] : ops)
    sum += t;
  std::vector<double> mine = {sum.weightBytes,       sum.kvBytes,
                              sum.actBytes,          sum.flops,
                              double(sum.calls),     double(sum.launches),
                              double(sum.blasCalls), double(sum.collectives)};
  const int n = static_cast<int>(mine.size());
  std::vector<double> all(mine.size() * ctx.worldSize());
  if (ctx.hasMPI())
    MPI_Gather(mine.data(), n, MPI_DOUBLE, all.data(), n, MPI_DOUBLE, 0,
               MPI_COMM_WORLD);
  else
    all = mine;
  if (ctx.rank() != 0)
    return;
  if (ops.empty()) {
    std::printf("traffic: the %s backend does not count it\n",
                ctx.backend().name().c_str());
    std::fflush(stdout);
    return;
  }
  for (int r = 0; r < ctx.worldSize(); ++r) {
    const double *v = &all[n * r];
    std::printf("traffic rank %d step %lld: weights %.0f B, kv %.0f B, "
                "activations %.0f B, flops %.0f, ops %.0f, launches %.0f, "
                "cublas %.0f, collectives %.0f\n",
                r, static_cast<long long>(step), v[0], v[1], v[2], v[3], v[4],
                v[5], v[6], v[7]);
  }
  for (const auto &[name, t] : ops)
    std::printf(
        "traffic rank 0 op %s: calls %lld, weights %.0f B, kv %.0f "
        "B, activations %.0f B, flops %.0f, launches %lld, cublas "
        "%lld, collectives %lld%s\n",
        name.c_str(), static_cast<long long>(t.calls), t.weightBytes, t.kvBytes,
        t.actBytes, t.flops, static_cast<long long>(t.launches),
        static_cast<long long>(t.blasCalls),
        static_cast<long long>(t.collectives),
        t.experts ? (", experts " + std::to_string(t.experts)).c_str() : "");
  // The same launches by kind (helix/Common/KernelTable.h), as plan.json's
  // kernels_by_kind counts them.
  std::array<int64_t, kNumKernelKinds> kinds = launchesByKind(ops);
  for (int k = 0; k < kNumKernelKinds; ++k)
    if (kinds[k])
      std::printf("traffic rank 0 kind %s: launches %lld\n",
                  kernelKindName(static_cast<KernelKind>(k)),
                  static_cast<long long>(kinds[k]));
  std::fflush(stdout);
}

/// The text of file `path` on every rank: rank 0 reads it and broadcasts
/// it. Returns the error every rank agrees on ("" when read).
std::string shareTextFile(const std::string &path, std::string &text) {
  int rank = 0;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  std::string err;
  if (rank == 0) {
    try {
      text = readTextFile(path);
    } catch (const std::exception &e) {
      err = e.what();
    }
  }
  if (!(err = agreeOnError(err)).empty())
    return err;
  long long len = static_cast<long long>(text.size());
  MPI_Bcast(&len, 1, MPI_LONG_LONG, 0, MPI_COMM_WORLD);
  text.resize(static_cast<size_t>(len));
  if (len > 0)
    MPI_Bcast(&text[0], static_cast<int>(len), MPI_CHAR, 0, MPI_COMM_WORLD);
  return "";
}

std::string usage(const DecodeProgram &prog) {
  std::string s = "usage: mpirun -np " + std::to_string(prog.worldSize) + " " +
                  prog.name +
                  " --weights PATH --prompts FILE --steps K\n"
                  "         [--dump-logits FILE] [--dump-tokens FILE] "
                  "[--report-memory] [--report-traffic] "
                  "[--report-timing]\n"
                  "         [--backend cpu|cuda] [--collectives auto|nccl|mpi] "
                  "[--device D]\n"
                  "         [--cuda-graphs auto|on|off (auto: on with NCCL)]\n"
                  "         [--step-timeout SECONDS (default 60; 0: none)]\n";
  if (prog.draftTokens > 0)
    s += "         speculative (" + std::to_string(prog.draftTokens) +
         " drafts per step): [--draft-oracle FILE]\n"
         "         [--dump-draft-logits FILE] [--dump-acceptance FILE]\n";
  if (!prog.optionsHelp.empty())
    s += prog.optionsHelp;
  return s;
}

/// --report-timing: rank 0's wall time per step (from the step's inputs to
/// every rank holding the next tokens: the launches, the GPU's work, the
/// logits' download, the host's argmax and the broadcast) and the part of it
/// after the logits were on the host (argmax and broadcast). The first
/// `warmup` steps (allocation, a CUDA graph's capture) are left out.
std::string timingLine(const std::vector<double> &step,
                       const std::vector<double> &host, int64_t warmup) {
  auto median = [](std::vector<double> v) {
    std::sort(v.begin(), v.end());
    size_t n = v.size();
    return n % 2 ? v[n / 2] : 0.5 * (v[n / 2 - 1] + v[n / 2]);
  };
  auto ms = [](double s) {
    char b[32];
    std::snprintf(b, sizeof(b), "%.4f", s * 1e3);
    return std::string(b);
  };
  int64_t n = static_cast<int64_t>(step.size());
  if (n <= warmup)
    return "timing: " + std::to_string(n) + " steps, too few to time after " +
           std::to_string(warmup) + " warm-up steps";
  std::vector<double> s(step.begin() + warmup, step.end());
  std::vector<double> h(host.begin() + warmup, host.end());
  double lo = *std::min_element(s.begin(), s.end());
  double hi = *std::max_element(s.begin(), s.end());
  return "timing: " + std::to_string(s.size()) + " steps after " +
         std::to_string(warmup) + " warm-up: step ms median " + ms(median(s)) +
         " min " + ms(lo) + " max " + ms(hi) +
         "; host argmax and broadcast ms median " + ms(median(h)) +
         "; first step ms " + ms(step[0]);
}

} // namespace

int runDecode(int argc, char **argv, DecodeProgram &prog) {
  bool ownMpi = !mpiActive();
  if (ownMpi)
    MPI_Init(&argc, &argv);
  int rank = 0, world = 1;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &world);
  std::unique_ptr<Context> ctx;
  auto finish = [&](int rc) {
    ctx.reset();
    if (ownMpi)
      MPI_Finalize();
    return rc;
  };
  auto fail = [&](const std::string &msg) {
    std::fprintf(stderr, "%s [rank %d/%d]: error: %s\n", prog.name.c_str(),
                 rank, world, msg.c_str());
    std::fflush(stderr);
    return finish(1);
  };

  // Arguments: every rank parses the same command line.
  DecodeArgs args;
  std::string err;
  try {
    args = parseArgs(argc, argv, prog);
  } catch (const std::exception &e) {
    err = e.what();
  }
  if (!(err = agreeOnError(err)).empty())
    return fail(err);
  if (args.help) {
    if (rank == 0)
      std::printf("%s", usage(prog).c_str());
    return finish(0);
  }
  try {
    if (prog.validate)
      prog.validate(world);
  } catch (const std::exception &e) {
    err = e.what();
  }
  if (!(err = agreeOnError(err)).empty())
    return fail(err);
  if (world != prog.worldSize)
    return fail("this program was planned for " +
                std::to_string(prog.worldSize) + " ranks but runs on " +
                std::to_string(world) + " (use mpirun -np " +
                std::to_string(prog.worldSize) + ")");

  // Prompts: rank 0 reads the file, every rank parses and checks the text.
  std::string text;
  if (!(err = shareTextFile(args.prompts, text)).empty())
    return fail(err);
  Prompts prompts;
  try {
    prompts = parsePrompts(text, args.prompts);
    validatePrompts(prompts, prog.vocabSize, args.steps, prog.maxContext,
                    args.prompts);
    if (prog.batch > 0 && static_cast<int64_t>(prompts.size()) != prog.batch)
      throw Error(args.prompts + ": " + std::to_string(prompts.size()) +
                  " prompt rows, but the program was planned for a batch "
                  "of " +
                  std::to_string(prog.batch));
  } catch (const std::exception &e) {
    err = e.what();
  }
  if (!(err = agreeOnError(err)).empty())
    return fail(err);
  int64_t batch = static_cast<int64_t>(prompts.size());

  // Speculative programs: the draft oracle, read like the prompts.
  SpeculativeRun spec;
  if (!args.draftOracle.empty()) {
    std::string oracleText;
    if (!(err = shareTextFile(args.draftOracle, oracleText)).empty())
      return fail(err);
    try {
      spec.oracle =
          readDraftOracle(oracleText, args.draftOracle, batch,
                          scheduleSteps(prompts, args.steps), prog.vocabSize);
    } catch (const std::exception &e) {
      err = e.what();
    }
    if (!(err = agreeOnError(err)).empty())
      return fail(err);
  }

  // Output files (rank 0), so a bad path fails before the work.
  LogitsWriter logits;
  if (rank == 0) {
    try {
      if (!args.dumpLogits.empty())
        logits.open(args.dumpLogits);
      if (!args.dumpDraftLogits.empty())
        spec.draftLogits.open(args.dumpDraftLogits);
      for (const std::string &f : {args.dumpTokens, args.dumpAcceptance})
        if (!f.empty())
          writeTokens(f, {}); // probe: created, rewritten at end
    } catch (const std::exception &e) {
      err = e.what();
    }
  }
  if (!(err = agreeOnError(err)).empty())
    return fail(err);

  // Context, checkpoint and this rank's slices.
  try {
    if (!prog.capturable) {
      if (args.context.cudaGraphs == "on")
        throw Error("--cuda-graphs on: this program's steps read device "
                    "results on the host (DeepSeek sparse attention's top-k "
                    "merge), so they cannot be captured as CUDA graphs; use "
                    "--cuda-graphs off or auto");
      args.context.cudaGraphs = "off";
    }
    ctx = Context::create(args.context);
    SafetensorsCheckpoint ckpt = SafetensorsCheckpoint::open(args.weights);
    if (prog.load)
      prog.load(*ctx, ckpt, batch);
  } catch (const std::exception &e) {
    err = e.what();
  }
  if (!(err = agreeOnError(err)).empty())
    return fail(err);

  // The greedy loop.
  try {
    if (prog.prepare)
      prog.prepare(*ctx);
    if (prog.draftTokens > 0) {
      spec.prompts = prompts;
      spec.steps = args.steps;
      spec.stepTimeoutS = args.context.stepTimeoutS;
      spec.logits = &logits;
      spec.dumpLogits = args.dumpLogits;
      spec.dumpDraftLogits = args.dumpDraftLogits;
      spec.dumpTokens = args.dumpTokens;
      spec.dumpAcceptance = args.dumpAcceptance;
      spec.countTraffic = args.reportTraffic;
      int64_t rounds = runSpeculative(*ctx, prog, spec);
      if (args.reportMemory)
        reportMemory(*ctx);
      if (args.reportTraffic) // the last verify step and its draft passes
        reportTraffic(*ctx, rounds - 1);
      return finish(0);
    }
    GreedySchedule schedule(prompts, args.steps);
    int64_t V = prog.vocabSize;
    if (rank == 0 && logits.isOpen()) {
      std::printf(
          "%s\n",
          logitsShapeLine(schedule.steps(), batch, V, args.dumpLogits).c_str());
      std::fflush(stdout);
    }
    StepInputs in;
    std::vector<int64_t> next(batch);
    std::vector<int> everyone(world);
    for (int r = 0; r < world; ++r)
      everyone[r] = r;
    using Clock = std::chrono::steady_clock;
    std::vector<double> stepSeconds, hostSeconds;
    for (int64_t t = 0; t < schedule.steps(); ++t) {
      Clock::time_point begin = Clock::now(), onHost = begin;
      in.step = t;
      in.tokens = schedule.tokensAt(t);
      in.positions.assign(batch, t);
      in.contextLengths.assign(batch, t + 1);
      if (args.reportTraffic && t + 1 == schedule.steps())
        ctx->backend().resetTraffic(); // count the last step alone
      Tensor out = ctx->backend().runStep([&] { return prog.step(*ctx, in); });
      if (rank == 0) {
        check(out.defined() && out.rank() == 2 && out.dim(0) == batch &&
                  out.dim(1) == V,
              "step " + std::to_string(t) + " returned logits " + out.str() +
                  ", expected [" + std::to_string(batch) + ", " +
                  std::to_string(V) + "]");
        std::vector<float> host = ctx->download(out);
        onHost = Clock::now();
        if (logits.isOpen())
          logits.write(host.data(), host.size());
        for (int64_t b = 0; b < batch; ++b) {
          const float *row = host.data() + b * V;
          int64_t best = 0;
          for (int64_t v = 1; v < V; ++v)
            if (row[v] > row[best])
              best = v;
          next[b] = best;
        }
      }
      // The next tokens from rank 0, with the watchdog's deadline.
      MPI_Request req;
      MPI_Ibcast(next.data(), static_cast<int>(batch), MPI_INT64_T, 0,
                 MPI_COMM_WORLD, &req);
      waitWithDeadline(req, args.context.stepTimeoutS,
                       "step " + std::to_string(t) +
                           ": broadcast of the next tokens from rank 0",
                       everyone);
      schedule.record(t, next);
      if (args.reportTiming) {
        Clock::time_point end = Clock::now();
        stepSeconds.push_back(
            std::chrono::duration<double>(end - begin).count());
        hostSeconds.push_back(
            std::chrono::duration<double>(end - onHost).count());
      }
    }
    if (rank == 0) {
      logits.commit();
      if (args.reportTiming)
        std::printf("%s\n", timingLine(stepSeconds, hostSeconds, 3).c_str());
      for (int64_t b = 0; b < batch; ++b)
        std::printf("row %lld: %s\n", static_cast<long long>(b),
                    joinIds(schedule.generated()[b]).c_str());
      std::fflush(stdout);
      if (!args.dumpTokens.empty())
        writeTokens(args.dumpTokens, schedule.sequences());
    }
    if (args.reportMemory)
      reportMemory(*ctx);
    if (args.reportTraffic)
      reportTraffic(*ctx, schedule.steps() - 1);
  } catch (const std::exception &e) {
    std::fprintf(stderr, "%s [rank %d/%d]: error during decoding: %s\n",
                 prog.name.c_str(), rank, world, e.what());
    std::fflush(stderr);
    // The other ranks waiting on the same stalled peer reach their own
    // deadline within about one step timeout: give them that (up to 5 s)
    // to report before the job is aborted.
    double grace = std::min(5.0, std::max(1.0, args.context.stepTimeoutS));
    std::this_thread::sleep_for(std::chrono::duration<double>(grace));
    MPI_Abort(MPI_COMM_WORLD, 1);
    return 1;
  }
  return finish(0);
}

} // namespace rt
} // namespace helix
