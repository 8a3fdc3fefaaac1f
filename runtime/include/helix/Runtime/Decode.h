//===- Decode.h - The helix-decode driver -----------------------*- C++ -*-===//
//
// Everything of a sharded decode executable except the model step:
//
//   mpirun -np N ./helix-decode --weights PATH --prompts FILE --steps K
//          [--dump-logits FILE] [--dump-tokens FILE]
//          [--backend cpu|cuda] [--collectives auto|nccl|mpi]
//          (speculative programs: [--draft-oracle FILE]
//          [--dump-draft-logits FILE] [--dump-acceptance FILE])
//
// runDecode initializes MPI, parses and checks the arguments and the prompt
// file, checks the rank count against the plan, creates the Context, opens
// the checkpoint, lets the program load its slices, then runs the greedy
// schedule of DecodeIO.h calling `step` once per decode step. Rank 0 picks
// the next tokens (argmax of the logits the step returns) and broadcasts
// them; rank 0 prints the generated ids and writes the dumps. A program
// compiled with --mtp runs the speculative schedule of Speculative.h
// instead (verify step, then the MTP layer's draft passes), with the same
// outputs, per position, and its acceptance.
//
// Errors (bad arguments, a bad prompt file, a token id out of range, a
// prompt longer than the planned context, a wrong rank count, a checkpoint
// missing a tensor or with a wrong shape, any Error thrown while loading)
// are agreed on by all ranks: every rank prints the same message and
// runDecode returns 1 everywhere, without hanging. An error thrown inside a
// step (after the checks) aborts all ranks with MPI_Abort.
//
//===----------------------------------------------------------------------===//

#ifndef HELIX_RUNTIME_DECODE_H
#define HELIX_RUNTIME_DECODE_H

#include "helix/Runtime/Context.h"
#include "helix/Runtime/Safetensors.h"
#include "helix/Runtime/Tensor.h"

#include <functional>
#include <string>
#include <vector>

namespace helix {
namespace rt {

/// Inputs of one decode step: one entry per batch row.
struct StepInputs {
  int64_t step = 0;
  std::vector<int64_t> tokens;
  std::vector<int64_t> positions;      // position of the token fed
  std::vector<int64_t> contextLengths; // positions + 1 (current included)
  /// A draft pass of speculative decoding: the hidden states [rows,
  /// hidden] the MTP layer reads with the tokens (Speculative.h).
  Tensor hidden;
};

/// What a pass of speculative decoding returns: its logits [rows, vocab]
/// (needed on rank 0) and its hidden states [rows, hidden] (every rank's
/// copy): the verify step's feed the extend pass, a draft pass's the next.
struct PassOutputs {
  Tensor logits, hidden;
};

struct DecodeProgram {
  /// Name used in messages ("helix-decode").
  std::string name = "helix-decode";
  /// Ranks the plan was made for; runDecode refuses other world sizes.
  int worldSize = 1;
  /// Planned context: positions per row (0: no limit).
  int64_t maxContext = 0;
  int64_t vocabSize = 0;
  /// Batch the plan was made for (0: any number of prompt rows).
  int64_t batch = 0;
  /// Default backend when --backend is not given.
  std::string defaultBackend = "cpu";
  /// Whether a step can be captured as a CUDA graph (false: it reads
  /// device results on the host; --cuda-graphs auto runs it uncaptured).
  bool capturable = true;

  /// Load this rank's weight slices and allocate KV caches for `batch` rows.
  /// Throw Error on bad checkpoints.
  std::function<void(Context &, const SafetensorsCheckpoint &, int64_t batch)>
      load;
  /// Optional: collective setup once every rank has loaded (create the
  /// communicators here, not in `load`: a rank whose load failed never
  /// joins). Runs after the load errors are agreed on.
  std::function<void(Context &)> prepare;
  /// One decode step; returns the logits [B, vocab] (needed on rank 0 only).
  std::function<Tensor(Context &, const StepInputs &)> step;
  /// Optional: program-specific "--flag value" options. Return false for an
  /// unknown flag; throw Error for a bad value.
  std::function<bool(const std::string &flag, const std::string &value)> option;
  /// Optional: usage lines for the program-specific options.
  std::string optionsHelp;
  /// Optional: checks after the options, before the rank count is checked
  /// against worldSize (e.g. the layout); throw Error. Runs on every rank.
  std::function<void(int worldSize)> validate;

  /// Speculative decoding with the model's MTP layer (Speculative.h): the
  /// drafts per step K, or 0 for the greedy schedule of `step`. With
  /// K > 0, `verify` runs the verify step (K + 1 rows per request) and
  /// `draft` one pass of the MTP layer (K + 1 rows per request, with
  /// StepInputs::hidden), both over the prompt rows; `step` is unused.
  int64_t draftTokens = 0;
  std::function<PassOutputs(Context &, const StepInputs &)> verify, draft;
};

/// The whole driver; returns the process exit status. Calls MPI_Init and
/// MPI_Finalize unless MPI is already initialized.
int runDecode(int argc, char **argv, DecodeProgram &program);

} // namespace rt
} // namespace helix

#endif // HELIX_RUNTIME_DECODE_H
