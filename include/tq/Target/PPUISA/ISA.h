//===- ISA.h - the PPU instruction set and its stream ----------*- C++ -*-===//
//
// What the compiler, the ppu dialect and the simulator share, in plain C++
// (no MLIR): the machine a stream is compiled for, the instructions, the
// host bindings and constant tiles, and the stream's binary and text forms
// with their validation. The simulator (tq/Runtime/PPUSim.h) executes a
// Stream; the dialect (tq/Dialect/PPU/IR/PPU.h) has one op per Instr.
//
// Memories (all addressed in V x V tiles):
//   fmem  host-visible f32 memory: inputs and outputs, bound by name.
//   ub    unified buffer: quantized tiles, each slot holding V*V integers
//         and the tile's step (scale) and bit width side by side, so one
//         read of a tile row returns data and scale together (P1, P2).
//   a, b  the two data buffers feeding the MAC units (P2), `dataRows`
//         tile slots each.
//   acc   accumulation unit: f32 tiles (P4).
//
// Instructions (16 bytes each, see Instr):
//   QUANT ub[d] <- fmem[s], bits     quantize a tile, its step computed (T3)
//   LOAD  a|b[d] <- ub[s] (T)        fetch a tile into a data buffer; with T
//                                    its columns instead of its rows, the
//                                    scale reused (T4); what that costs
//                                    depends on the banks (PPUCost.h)
//   MAC   acc[d] (=|+=) a[x] * b[y]  V MAC units, V lanes each: int32
//                                    partial sums times sA*sB (T5, P3)
//   POST  ub[d] <- acc[s], bits (R)  post-processing: division by the layer
//                                    scale (if given), ReLU if R, then
//                                    quantization with fresh steps (T6, P5)
//   STORE fmem[d] <- acc[s]          f32 results to the host
//   WUPD  ub[d] <- ub[d] - lr*acc[s] weight update in the datapath unit (T7)
//   REQ   ub[d] <- ub[s], bits       requantization: dequantize and quantize
//                                    again with the flags' scale layout
//   DEQ   fmem[d] <- ub[s]           a quantized tile back to the host, as
//                                    f32 (e.g. updated weights)
//   HALT
//
// Run-time bit widths (A4): QUANT, REQ and POST name a width register
// instead of a width when `bits` is kBitsRegister | r (`bits=wR` in the
// listing). The host writes the registers before the program runs, through
// width inputs: rank-0 bindings whose `baseTile` is the register. This is
// how a width chosen at run time from the measured quantization error
// reaches a kernel compiled once.
//
// Scale layouts (T4): a tile has one scale (square V x V, the default), or
// one per row (ROWS: 1 x V vectors) or per column (COLS: V x 1), the
// per-vector scaling of the prior art. A transposing LOAD turns ROWS into
// COLS and back, scales travelling with their vectors. MAC needs scales
// that are constant along the reduction: a square or ROWS tile in a, a
// square or COLS tile in b; anything else is a fault, so a transposed
// per-vector operand must first be requantized (REQ), which the statistics
// count.
//
//===----------------------------------------------------------------------===//
#ifndef TQ_TARGET_PPUISA_ISA_H
#define TQ_TARGET_PPUISA_ISA_H

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

namespace tq::ppu {

/// The machine a stream is compiled for; recorded in the stream header.
struct MachineConfig {
  uint16_t V = 16;         // tile size, vector length
  uint16_t macUnits = 16;  // vector MAC units (V lanes each)
  uint32_t ubTiles = 1024; // unified buffer slots
  uint16_t dataRows = 8;   // tile slots per data buffer (a and b)
  uint16_t accTiles = 64;  // accumulator tiles
  uint32_t fmemTiles = 4096;
  bool operator==(const MachineConfig &o) const;
  bool operator!=(const MachineConfig &o) const { return !(*this == o); }
  std::string str() const;
};

enum class Op : uint8_t {
  Halt = 0,
  Quant = 1,
  Load = 2,
  Mac = 3,
  Post = 4,
  Store = 5,
  WUpd = 6,
  Req = 7,
  Deq = 8,
};

/// Flags of an instruction.
enum : uint8_t {
  kLoadB = 1,        // LOAD: into buffer b (else a)
  kTranspose = 2,    // LOAD: transpose in the datapath unit
  kAccumulate = 4,   // MAC: add to acc (else overwrite)
  kRelu = 8,         // POST: ReLU before quantizing
  kPow2 = 16,        // QUANT, POST, WUPD: power-of-two steps (else f32)
  kBF16Product = 32, // MAC: round sA*sB to bf16
  kRowVectors = 64,  // QUANT, REQ: one scale per tile row (1 x V)
  kColVectors = 128, // QUANT, REQ: one scale per tile column (V x 1)
  // POST: divide by the per-layer scale in `imm` first (T6). Flags are per
  // op, so this shares its bit with LOAD's kLoadB.
  kLayerScale = 1
};

/// QUANT, REQ and POST: `bits` names width register `bits & 0xff`.
constexpr uint16_t kBitsRegister = 0x100;
constexpr unsigned kWidthRegisters = 16;
inline bool isWidthRegister(uint16_t bits) { return bits & kBitsRegister; }

/// Whether instruction `i` keeps an f32 immediate in its third operand.
inline bool hasImmediate(Op op, uint8_t flags) {
  return op == Op::WUpd || (op == Op::Post && (flags & kLayerScale));
}

/// One 16-byte instruction: op, flags, bits, and three operands whose
/// meaning depends on the op (dst, src, src2). WUPD keeps lr in `imm`, POST
/// with kLayerScale the layer scale (both in the third operand's bits).
struct Instr {
  Op op = Op::Halt;
  uint8_t flags = 0;
  uint16_t bits = 0;
  uint32_t dst = 0, src = 0, src2 = 0;
  float imm = 0.0f;
};

/// A named host tensor mapped onto consecutive fmem tiles, V x V each:
/// 2-D [R, C] split on (R, C), or 4-D NHWC / KRSC [N, H, W, C] split on
/// (N, C) with a row of tiles per (h, w). Tiles in row-major grid order.
/// A rank-0 input is a width input: the host's bit width for width
/// register `baseTile`.
struct Binding {
  bool output = false;
  std::string name;
  std::vector<uint32_t> shape; // rank 2 or 4
  uint32_t baseTile = 0;
  /// The tile grid: [ceil(R/V), ceil(C/V)] or [ceil(N/V), H, W, ceil(C/V)].
  std::vector<uint64_t> grid(uint16_t V) const;
  uint64_t tiles(uint16_t V) const;
  uint64_t numElements() const;
  bool isWidth() const { return shape.empty(); }
  /// The fmem tile (from baseTile) and the position in it of element
  /// `linear` (row-major over shape).
  void locate(uint64_t linear, uint16_t V, uint64_t &tile, uint32_t &pos) const;
};

/// A tile quantized at compile time (a constant weight), placed in the
/// unified buffer before the program runs: V*V values and one step, or one
/// step per row (`vectors` = kRowVectors: 1 x V vectors) or per column
/// (kColVectors: V x 1), as QUANT's flags lay a tile out (version 3).
struct ConstTile {
  uint32_t slot = 0;
  uint16_t bits = 8;
  uint8_t vectors = 0;         // 0, kRowVectors or kColVectors
  float step = 0.0f;           // vectors == 0
  std::vector<float> steps;    // V of them, when vectors != 0
  std::vector<int32_t> values; // V*V, row-major
};

struct Stream {
  /// Version 2 added width registers, version 3 constant tiles with a step
  /// per row or column; older streams are read as well.
  static constexpr uint16_t kVersion = 3;
  MachineConfig machine;
  std::vector<Binding> bindings;
  std::vector<ConstTile> constants;
  std::vector<Instr> code;
};

/// Binary form: "TQPPU\0", version, machine, bindings, constant tiles,
/// instructions (all little-endian). decode() validates everything (version,
/// machine sanity, sizes, opcodes, flags, bit widths, every address against the
/// machine and bindings against fmem) and fails with a message instead of
/// crashing.
std::vector<uint8_t> encode(const Stream &s);
bool decode(const uint8_t *data, size_t size, Stream &out, std::string &error);

/// Checks a stream against its machine (as decode() does): machine sanity,
/// bindings inside fmem, every instruction's operands, flags and widths.
bool validate(const Stream &s, std::string &error);
/// Checks one instruction against a machine; "" when valid, else why not.
std::string verifyInstr(const Instr &i, const MachineConfig &m);
/// Checks a machine configuration; "" when valid.
std::string verifyMachine(const MachineConfig &m);

/// Readable listing, one instruction a line, which parse() reads back:
///
///   ppu v1 V=16 mac=16 ub=1024 rows=8 acc=64 fmem=4096
///   input x 40x48 @0
///   input f 32x3x3x16 @24
///   width n @w0
///   output y 40x32 @9
///   const ub[7] bits=4 step=0.25 : 1 -2 0 ... (V*V values)
///   quant ub[0] <- fmem[0] bits=8 rows
///   load b[1] <- ub[3] transpose
///   mac acc[0] += a[0] * b[1] bf16
///   post ub[5] <- acc[0] bits=8 relu pow2
///   store fmem[9] <- acc[0]
///   wupd ub[1] -= 0.125 * acc[0]
///   req ub[1] <- ub[1] bits=8 cols
///   quant ub[8] <- fmem[1] bits=w0
///   halt
///
/// `#` starts a comment. Errors name the line.
std::string print(const Stream &s);
bool parse(const std::string &text, Stream &out, std::string &error);

} // namespace tq::ppu

#endif // TQ_TARGET_PPUISA_ISA_H
