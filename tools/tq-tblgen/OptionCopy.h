//===- OptionCopy.h - one option copied into an options struct ------------===//
//
// Shared by tile-quant's TableGen backends: the statement that copies the
// option `o` of the enclosing pass or pipeline into `result`, the generated
// options struct (a list option element by element).
//
//===----------------------------------------------------------------------===//

#ifndef TQ_TBLGEN_OPTIONCOPY_H
#define TQ_TBLGEN_OPTIONCOPY_H

#include "mlir/TableGen/Pass.h"
#include "llvm/Support/FormatVariadic.h"
#include "llvm/Support/raw_ostream.h"

namespace tq::tblgen {

inline void emitOptionCopy(const mlir::tblgen::PassOption &o,
                           llvm::StringRef indent, llvm::raw_ostream &os) {
  if (o.isListOption())
    os << llvm::formatv("{0}result.{1}.assign({1}.begin(), {1}.end());\n",
                        indent, o.getCppVariableName());
  else
    os << llvm::formatv("{0}result.{1} = {1};\n", indent,
                        o.getCppVariableName());
}

} // namespace tq::tblgen

#endif // TQ_TBLGEN_OPTIONCOPY_H
