// libFuzzer target for loading serialized programs (Program::Load, behind shp_program_load).
// Any input must give a program or a clean shp::Error (kInvalidProgram, kVersionMismatch,
// kInvalidArgument) — never a crash, hang, leak or unbounded allocation. Invariant checked
// for every input that loads: serializing the program, loading those bytes and serializing
// again gives the same bytes (what we write is canonical), and the listing is reproduced.
// Seeds: tests/fuzz/corpus/program (copies of tests/golden/*.shpoly).
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <memory>
#include <string>

#include "cc/base/error.h"
#include "cc/program/program.h"

namespace program = shp::program;

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  if (size > (1 << 16)) return 0;
  std::unique_ptr<program::Program> p;
  try {
    p = program::Program::Load(data, size);
  } catch (const shp::Error& e) {
    if (e.code() != shp::Code::kInvalidProgram && e.code() != shp::Code::kVersionMismatch &&
        e.code() != shp::Code::kInvalidArgument) {
      std::abort();  // an unexpected error class escaped the loader
    }
    return 0;
  }
  std::string once = p->Serialize();
  std::unique_ptr<program::Program> q = program::Program::Load(once.data(), once.size());
  if (q->Serialize() != once || q->text() != p->text()) std::abort();
  return 0;
}
