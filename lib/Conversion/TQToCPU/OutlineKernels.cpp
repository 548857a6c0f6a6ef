//===- OutlineKernels.cpp - one function per distinct loop nest -----------===//
//
// See the description of tq-cpu-outline-kernels in tq/Conversion/Passes.td.
//
//===----------------------------------------------------------------------===//
#include "Epilogue.h"
#include "tq/Conversion/Passes.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/IR/IRMapping.h"
#include "mlir/IR/Matchers.h"
#include "mlir/IR/SymbolTable.h"
#include "mlir/Interfaces/LoopLikeInterface.h"
#include "mlir/Transforms/RegionUtils.h"
#include "llvm/ADT/SetVector.h"
#include "llvm/ADT/StringMap.h"

namespace mlir::tq {
#define GEN_PASS_DEF_TQCPUOUTLINEKERNELS
#include "tq/Conversion/Passes.h.inc"
} // namespace mlir::tq

using namespace mlir;

namespace {

/// A loop whose body holds this many nests is program control flow.
constexpr int kMinNestsInProgramLoop = 4;

/// A constant with no operands and no regions: cloned into each kernel
/// instead of being passed.
bool isClonableConstant(Value v) {
  Operation *def = v.getDefiningOp();
  return def && def->getNumOperands() == 0 && def->getNumRegions() == 0 &&
         matchPattern(def, m_Constant());
}

/// What identifies a kernel regardless of its name: its generic form,
/// without locations.
std::string kernelKey(func::FuncOp f) {
  std::string text;
  llvm::raw_string_ostream os(text);
  // Explicitly without locations: the default flags follow the tool's
  // -mlir-print-debuginfo, which made every kernel distinct.
  OpPrintingFlags flags;
  flags.printGenericOpForm().enableDebugInfo(false);
  f.getFunctionType().print(os);
  for (Operation &op : f.getBody().front())
    op.print(os, flags);
  return text;
}

/// Adds LLVM function attributes (func-to-llvm keeps `passthrough`).
void addPassthrough(func::FuncOp f, ArrayRef<StringRef> names) {
  Builder b(f.getContext());
  SmallVector<Attribute> all;
  if (auto old = f->getAttrOfType<ArrayAttr>("passthrough"))
    all.assign(old.begin(), old.end());
  for (StringRef name : names)
    all.push_back(b.getStringAttr(name));
  f->setAttr("passthrough", b.getArrayAttr(all));
}

bool hasRegionsToOutline(Operation &op) {
  return op.getNumRegions() != 0 && !op.hasTrait<OpTrait::IsTerminator>();
}

/// Whether `op` is a nest of its own inside a loop's body: an op with
/// regions other than an `scf.if` (a kernel's row loop guards each row's
/// stores with one).
bool isNest(Operation &op) {
  return hasRegionsToOutline(op) && !isa<scf::IfOp>(op);
}

/// Control flow of the program rather than one loop nest: an op whose
/// every region is a single block that is not a loop body (scf.if,
/// scf.index_switch), or a loop whose body holds several nests of its own
/// (the time loop of a recurrent layer, a share of tq-cpu-split-batch; a
/// kernel's row loop, whose rows are stored under `scf.if`s, is one nest).
/// Its nests are outlined one by one instead of as one function.
bool isProgramLevel(Operation &op) {
  if (!isa<LoopLikeOpInterface>(op) && op.getNumRegions() != 0 &&
      llvm::all_of(op.getRegions(),
                   [](Region &r) { return r.empty() || r.hasOneBlock(); }) &&
      op.getDialect() && op.getDialect()->getNamespace() == "scf")
    return true;
  for (Region &r : op.getRegions())
    for (Block &block : r)
      if (llvm::count_if(block, isNest) >= kMinNestsInProgramLoop)
        return true;
  return false;
}

/// The ONNX node (the first name in `loc`) and the op kind (the first
/// metadata string, from tq-cpu-profile-kinds) of a kernel.
void describe(Location loc, std::string &name, std::string &kind) {
  if (auto n = dyn_cast<NameLoc>(loc)) {
    if (name.empty())
      name = n.getName().str();
    describe(n.getChildLoc(), name, kind);
  } else if (auto f = dyn_cast<FusedLoc>(loc);
             f &&
             f.getMetadata() == StringAttr::get(loc->getContext(),
                                                mlir::tq::kFusedLayersLoc)) {
    // A kernel and its epilogue: the first's kind, both names.
    describe(f.getLocations().front(), name, kind);
    for (Location inner : f.getLocations().drop_front()) {
      std::string more, ignored;
      describe(inner, more, ignored);
      if (!more.empty() && more != name)
        name += "+" + more;
    }
  } else if (auto f = dyn_cast<FusedLoc>(loc)) {
    if (auto s = dyn_cast_or_null<StringAttr>(f.getMetadata());
        s && kind.empty())
      kind = s.str();
    for (Location inner : f.getLocations())
      describe(inner, name, kind);
  } else if (auto c = dyn_cast<CallSiteLoc>(loc)) {
    describe(c.getCallee(), name, kind);
  } else if (auto file = dyn_cast<FileLineColLoc>(loc)) {
    if (name.empty())
      name = (file.getFilename().str() + ":" + std::to_string(file.getLine()));
  }
}

struct TQCPUOutlineKernelsPass
    : mlir::tq::impl::TQCPUOutlineKernelsBase<TQCPUOutlineKernelsPass> {
  using Base::Base;

  /// Profiled kernel calls: [name, kind] by id.
  SmallVector<Attribute> profiled;
  func::FuncOp profileBegin, profileEnd;

  void runOnOperation() override {
    ModuleOp module = getOperation();
    SymbolTable symbols(module);
    if (profile) {
      OpBuilder b(module.getBodyRegion());
      auto type = b.getFunctionType({b.getI64Type()}, {});
      for (auto [f, name] : {std::pair{&profileBegin, "tq_profile_begin"},
                             std::pair{&profileEnd, "tq_profile_end"}}) {
        *f = func::FuncOp::create(b, module.getLoc(), name, type);
        f->setPrivate();
      }
    }
    llvm::StringMap<func::FuncOp> kernels;
    for (func::FuncOp f : llvm::to_vector(module.getOps<func::FuncOp>())) {
      if (f.isExternal() || !f.isPublic())
        continue;
      bool outlined = false;
      for (Block &block : f.getBody())
        outlined |= outlineIn(block, f, symbols, kernels);
      // What is left is glue run once per layer (allocations, calls,
      // reshapes): optimizing it gains nothing and costs the most.
      if (outlined)
        addPassthrough(f, {"noinline", "optnone"});
    }
    if (profile)
      module->setAttr("tq.profile", ArrayAttr::get(&getContext(), profiled));
  }

  /// Outlines the nests of `block`, looking inside program-level control
  /// flow; true if anything was outlined.
  bool outlineIn(Block &block, func::FuncOp parent, SymbolTable &symbols,
                 llvm::StringMap<func::FuncOp> &kernels) {
    bool outlined = false;
    for (Operation &op : llvm::make_early_inc_range(block)) {
      if (!hasRegionsToOutline(op))
        continue;
      if (isProgramLevel(op)) {
        for (Region &r : op.getRegions())
          for (Block &inner : r)
            outlined |= outlineIn(inner, parent, symbols, kernels);
        continue;
      }
      outline(op, parent, symbols, kernels);
      outlined = true;
    }
    return outlined;
  }

  void outline(Operation &op, func::FuncOp parent, SymbolTable &symbols,
               llvm::StringMap<func::FuncOp> &kernels) {
    // The values from outside: the op's operands, then what its regions
    // use from above, in order of first use.
    llvm::SetVector<Value> used(op.operand_begin(), op.operand_end());
    getUsedValuesDefinedAbove(op.getRegions(), used);
    SmallVector<Value> arguments, constants;
    for (Value v : used)
      (isClonableConstant(v) ? constants : arguments).push_back(v);

    // Built unlinked; it joins the module only if it is new.
    OpBuilder b(&getContext());
    auto type = b.getFunctionType(ValueRange(arguments).getTypes(),
                                  op.getResultTypes());
    auto kernel = func::FuncOp::create(
        b, op.getLoc(), (parent.getName() + "_kernel").str(), type);
    kernel.setPrivate();
    addPassthrough(kernel, {"noinline"});
    Block *body = kernel.addEntryBlock();
    IRMapping map;
    map.map(arguments, body->getArguments());
    b.setInsertionPointToStart(body);
    for (Value c : constants)
      b.clone(*c.getDefiningOp(), map);
    Operation *copy = b.clone(op, map);
    func::ReturnOp::create(b, op.getLoc(), copy->getResults());

    std::string key = kernelKey(kernel);
    auto [it, added] = kernels.try_emplace(key, kernel);
    if (added)
      symbols.insert(kernel, parent->getIterator()); // renamed if taken
    else
      kernel.erase();
    func::FuncOp callee = it->second;

    OpBuilder at(&op);
    Value id;
    if (profile) {
      std::string name, kind;
      describe(op.getLoc(), name, kind);
      id = arith::ConstantIntOp::create(at, op.getLoc(), profiled.size(), 64);
      profiled.push_back(at.getStrArrayAttr(
          {name.empty() ? "?" : name, kind.empty() ? "?" : kind}));
      func::CallOp::create(at, op.getLoc(), profileBegin, id);
    }
    auto call = func::CallOp::create(at, op.getLoc(), callee, arguments);
    if (profile)
      func::CallOp::create(at, op.getLoc(), profileEnd, id);
    op.replaceAllUsesWith(call.getResults());
    op.erase();
  }
};

} // namespace
