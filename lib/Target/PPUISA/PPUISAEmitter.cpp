//===- PPUISAEmitter.cpp - ppu programs to instruction streams ------------===//
#include "tq/Target/PPUISA/PPUISAEmitter.h"
#include "tq/Dialect/PPU/IR/PPU.h"
#include "tq/Dialect/TQ/IR/TQ.h"
#include "tq/Target/PPUISA/Stream.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"

#include "mlir/IR/Builders.h"
#include "mlir/IR/BuiltinOps.h"
#include "mlir/Tools/mlir-translate/Translation.h"
#include "llvm/Support/SourceMgr.h"

using namespace mlir;
using namespace mlir::ppu;

LogicalResult mlir::ppu::emitStream(Operation *root, raw_ostream &os,
                                    bool listing) {
  SmallVector<ProgramOp> programs;
  root->walk([&](ProgramOp p) { programs.push_back(p); });
  if (programs.empty())
    return emitError(root->getLoc(),
                     "no ppu.program to translate: lower the program first "
                     "(tq-opt -tq-to-ppu)");
  if (programs.size() != 1)
    return emitError(root->getLoc(), "expected exactly one ppu.program, found ")
           << programs.size();
  ::tq::ppu::Stream stream = toStream(programs.front());
  std::string error;
  if (!::tq::ppu::validate(stream, error))
    return programs.front().emitOpError(error);
  if (listing) {
    os << ::tq::ppu::print(stream);
    return success();
  }
  std::vector<uint8_t> bytes = ::tq::ppu::encode(stream);
  os.write(reinterpret_cast<const char *>(bytes.data()), bytes.size());
  return success();
}

void mlir::ppu::registerPPUTranslations() {
  // The dialects of a program before -tq-to-ppu too, so that one gets
  // told what to run rather than a parse error.
  auto dialects = [](DialectRegistry &registry) {
    registry.insert<PPUDialect, mlir::tq::TQDialect, arith::ArithDialect,
                    func::FuncDialect, linalg::LinalgDialect,
                    tensor::TensorDialect>();
  };
  TranslateFromMLIRRegistration toBinary(
      "ppu-to-binary", "Write a ppu.program as a binary instruction stream",
      [](Operation *op, raw_ostream &os) {
        return emitStream(op, os, /*listing=*/false);
      },
      dialects);
  TranslateFromMLIRRegistration toListing(
      "ppu-to-listing", "Write a ppu.program as a text listing",
      [](Operation *op, raw_ostream &os) {
        return emitStream(op, os, /*listing=*/true);
      },
      dialects);
  TranslateToMLIRRegistration fromListing(
      "listing-to-ppu", "Assemble a text listing back into a ppu.program",
      [](llvm::SourceMgr &sourceMgr,
         MLIRContext *ctx) -> OwningOpRef<Operation *> {
        ctx->loadDialect<PPUDialect>();
        const llvm::MemoryBuffer *buf =
            sourceMgr.getMemoryBuffer(sourceMgr.getMainFileID());
        ::tq::ppu::Stream stream;
        std::string error;
        Location loc = FileLineColLoc::get(ctx, buf->getBufferIdentifier(),
                                           /*line=*/1, /*column=*/1);
        if (!::tq::ppu::parse(buf->getBuffer().str(), stream, error)) {
          emitError(loc) << "malformed PPU listing: " << error;
          return nullptr;
        }
        OwningOpRef<ModuleOp> module = ModuleOp::create(loc);
        OpBuilder b(module->getBodyRegion());
        fromStream(b, loc, "program", stream);
        return OwningOpRef<Operation *>(module.release());
      },
      dialects);
}
