#include "codegens/llvm/ir_emitter.h"

#include <algorithm>
#include <cmath>
#include <map>
#include <optional>
#include <set>

#include <llvm/IR/Constants.h>
#include <llvm/IR/DerivedTypes.h>
#include <llvm/IR/IRBuilder.h>
#include <llvm/IR/Intrinsics.h>
#include <llvm/IR/MDBuilder.h>

#include "codegen/c/c_generator.h"
#include "support/error.h"
#include "tir/arith.h"
#include "tir/functor.h"
#include "tir/loop_partition.h"
#include "tir/printer.h"
#include "tir/simplify.h"
#include "tir/vectorize.h"

namespace sy::codegen::llvmgen {

namespace {

using namespace sy::tir;
using llvm::BasicBlock;
using llvm::Function;
using llvm::Type;
using llvm::Value;

// glibc's math functions the kernels call by name (f32 adds the f suffix).
const std::set<std::string>& libm_functions() {
  static const std::set<std::string> fns = {"exp",  "log",   "tanh",  "erf",   "pow",   "sin",   "cos",
                                            "expm1", "log1p", "atan",  "tan",   "asin",  "acos",  "sinh",
                                            "cosh", "atan2", "fmod",  "exp2",  "log2",  "log10", "erfc",
                                            "asinh", "acosh", "atanh", "cbrt"};
  return fns;
}

// Floating functions with an LLVM intrinsic of the same meaning (C's, as -fno-math-errno has it).
llvm::Intrinsic::ID float_intrinsic(const std::string& n) {
  if (n == "sqrt") return llvm::Intrinsic::sqrt;
  if (n == "fabs") return llvm::Intrinsic::fabs;
  if (n == "floor") return llvm::Intrinsic::floor;
  if (n == "ceil") return llvm::Intrinsic::ceil;
  if (n == "trunc") return llvm::Intrinsic::trunc;
  if (n == "round") return llvm::Intrinsic::round;
  if (n == "rint") return llvm::Intrinsic::rint;
  if (n == "nearbyint") return llvm::Intrinsic::nearbyint;
  if (n == "fmin") return llvm::Intrinsic::minnum;
  if (n == "fmax") return llvm::Intrinsic::maxnum;
  return llvm::Intrinsic::not_intrinsic;
}

}  // namespace

const std::set<std::string>& libmvec_functions() {
  static const std::set<std::string> fns = {"exp",   "log",   "sin",   "cos",  "tan",   "tanh",  "erf",  "erfc",
                                            "expm1", "log1p", "log2",  "log10", "exp2", "asin",  "acos", "atan",
                                            "sinh",  "cosh",  "asinh", "acosh", "atanh", "cbrt"};
  return fns;
}

namespace {

bool is_unsigned(DType t) { return t == DType::u8 || t == DType::boolean; }

// Whether evaluating e may fault or read memory: then C's short-circuit && || and ?: evaluate
// it only when its guard holds (a pad's clamped read, a gather's checked index), and so does this.
bool needs_guard(const Expr& e) {
  bool g = false;
  visit_expr(e, [&](const Expr& x) {
    if (x->kind == ExprKind::Load || (x->kind == ExprKind::Call && x->name == "sy_checked_index")) g = true;
    if ((x->kind == ExprKind::Div || x->kind == ExprKind::Mod) && !is_float(x->dtype)) g = true;
  });
  return g;
}

class Emitter {
 public:
  Emitter(llvm::LLVMContext& ctx, llvm::Module& mod, const EmitOptions& opts)
      : ctx_(ctx), mod_(mod), b_(ctx), opts_(opts) {
    // a * b + c may become one FMA, as GCC's default -ffp-contract=fast has it on the C path.
    llvm::FastMathFlags fmf;
    fmf.setAllowContract(true);
    b_.setFastMathFlags(fmf);
  }

  // Assigns every extern function its slot in sy_extern_ptrs, in the order the C generator does.
  void prepare(const std::vector<PrimFunc>& funcs) {
    for (const auto& f : funcs)
      visit_stmt(f.body, [&](const Stmt& s) {
        if (s->kind == StmtKind::ExternCall && !extern_slot_.count(s->func)) {
          extern_slot_[s->func] = extern_names_.size();
          extern_names_.push_back(s->func);
        }
      });
    const size_t n = std::max<size_t>(extern_names_.size(), 1);
    extern_ptrs_ = new llvm::GlobalVariable(mod_, llvm::ArrayType::get(i8p(), n), false, llvm::GlobalValue::ExternalLinkage,
                                            llvm::ConstantAggregateZero::get(llvm::ArrayType::get(i8p(), n)),
                                            "sy_extern_ptrs");
  }

  void kernel(const PrimFunc& f) {
    sites_.clear();
    num_sites_ = 0;
    bool has_sites = false;
    visit_stmt(f.body, [&](const Stmt& s) { has_sites |= s->kind == StmtKind::ExternCall && s->stateful; });
    // The body: fault pointer, one noalias pointer per buffer (they never alias, as C's restrict
    // says), the states of the stateful sites.
    std::vector<Type*> params{i32()->getPointerTo()};
    for (const auto& p : f.params) params.push_back(ptr_to(p->dtype));
    params.push_back(i8p()->getPointerTo());
    Function* body = Function::Create(llvm::FunctionType::get(b_.getVoidTy(), params, false),
                                      llvm::GlobalValue::InternalLinkage, f.name + "_body", mod_);
    attributes(body);
    params_may_alias_ = f.params_may_alias;
    if (!params_may_alias_)
      for (size_t i = 0; i < f.params.size(); ++i) body->addParamAttr(static_cast<unsigned>(i + 1), llvm::Attribute::NoAlias);
    Scope scope;
    scope.fn = body;
    scope.entry = BasicBlock::Create(ctx_, "entry", body);
    scope.fault = body->getArg(0);
    for (size_t i = 0; i < f.params.size(); ++i) bind(scope.bufs, f.params[i].get(), body->getArg(static_cast<unsigned>(i + 1)));
    scope.states = body->getArg(static_cast<unsigned>(f.params.size() + 1));
    scope_ = &scope;
    func_ = &f;
    BasicBlock* start = BasicBlock::Create(ctx_, "start", body);
    b_.SetInsertPoint(start);
    stmt(f.body);
    b_.CreateRetVoid();
    b_.SetInsertPoint(scope.entry);
    b_.CreateBr(start);
    scope_ = nullptr;

    // int32_t name(void* const* args): unpacks, runs the body, returns the fault.
    Function* entry = Function::Create(llvm::FunctionType::get(i32(), {i8p()->getPointerTo()}, false),
                                       llvm::GlobalValue::ExternalLinkage, f.name, mod_);
    attributes(entry);
    b_.SetInsertPoint(BasicBlock::Create(ctx_, "entry", entry));
    Value* fault = b_.CreateAlloca(i32());
    b_.CreateStore(b_.getInt32(0), fault);
    std::vector<Value*> args{fault};
    for (size_t i = 0; i < f.params.size(); ++i) {
      Value* slot = b_.CreateConstGEP1_64(i8p(), entry->getArg(0), i);
      args.push_back(b_.CreateBitCast(b_.CreateLoad(i8p(), slot), ptr_to(f.params[i]->dtype)));
    }
    args.push_back(has_sites ? b_.CreateConstGEP1_64(i8p(), entry->getArg(0), f.params.size())
                             : llvm::ConstantPointerNull::get(i8p()->getPointerTo()));
    b_.CreateCall(body, args);
    b_.CreateRet(b_.CreateLoad(i32(), fault));
    kernel_names_.push_back(f.name);
    kernel_num_args_.push_back(static_cast<int32_t>(f.params.size()));
    kernel_sites_.push_back(sites_);
  }

  // The tables module.h reads (the same symbols and layout as the C generator's).
  void tables() {
    std::vector<llvm::Constant*> en, kn, ks, ka;
    for (const auto& n : extern_names_) en.push_back(cstring(n));
    for (size_t i = 0; i < kernel_names_.size(); ++i) {
      kn.push_back(cstring(kernel_names_[i]));
      ks.push_back(cstring(kernel_sites_[i]));
      ka.push_back(b_.getInt32(static_cast<uint32_t>(kernel_num_args_[i])));
    }
    auto pad = [&](std::vector<llvm::Constant*>& v, llvm::Constant* z) {
      if (v.empty()) v.push_back(z);
    };
    pad(en, llvm::ConstantPointerNull::get(i8p()));
    pad(kn, llvm::ConstantPointerNull::get(i8p()));
    pad(ks, llvm::ConstantPointerNull::get(i8p()));
    pad(ka, b_.getInt32(0));
    array("sy_extern_names", i8p(), en);
    scalar("sy_extern_count", static_cast<int32_t>(extern_names_.size()));
    array("sy_kernel_names", i8p(), kn);
    array("sy_kernel_num_args", i32(), ka);
    array("sy_kernel_sites", i8p(), ks);
    scalar("sy_kernel_count", static_cast<int32_t>(kernel_names_.size()));
  }

 private:
  // One LLVM function being emitted: the kernel's body, or a parallel loop's outlined body.
  struct Scope {
    Function* fn = nullptr;
    BasicBlock* entry = nullptr;  // allocas go here (once per call, not per iteration)
    std::map<const ExprNode*, Value*> vars;
    std::map<const BufferNode*, Value*> bufs;
    Value* fault = nullptr;
    Value* states = nullptr;
  };

  llvm::PointerType* i8p() { return b_.getInt8PtrTy(); }
  llvm::IntegerType* i32() { return b_.getInt32Ty(); }
  llvm::IntegerType* i64() { return b_.getInt64Ty(); }

  // How a dtype is kept in memory (bool: a byte, as C's) and as a value (bool: i1).
  Type* mem_type(DType t) {
    switch (t) {
      case DType::f32: return b_.getFloatTy();
      case DType::f64: return b_.getDoubleTy();
      case DType::i8:
      case DType::u8:
      case DType::boolean: return b_.getInt8Ty();
      case DType::i16: return b_.getInt16Ty();
      case DType::i32: return b_.getInt32Ty();
      case DType::i64: return b_.getInt64Ty();
    }
    return b_.getFloatTy();
  }
  Type* value_type(DType t) { return t == DType::boolean ? b_.getInt1Ty() : mem_type(t); }
  Type* ptr_to(DType t) { return mem_type(t)->getPointerTo(); }

  void attributes(Function* f) {
    f->addFnAttr(llvm::Attribute::NoUnwind);
    f->addFnAttr("prefer-vector-width", std::to_string(opts_.vector_bits));
    f->addFnAttr("min-legal-vector-width", "0");
    f->addFnAttr("frame-pointer", "none");
  }

  llvm::Constant* cstring(const std::string& s) {
    return b_.CreateGlobalStringPtr(s, "", 0, &mod_);
  }
  void array(const std::string& name, Type* elem, const std::vector<llvm::Constant*>& v) {
    auto* t = llvm::ArrayType::get(elem, v.size());
    new llvm::GlobalVariable(mod_, t, true, llvm::GlobalValue::ExternalLinkage, llvm::ConstantArray::get(t, v), name);
  }
  void scalar(const std::string& name, int32_t v) {
    new llvm::GlobalVariable(mod_, i32(), true, llvm::GlobalValue::ExternalLinkage, b_.getInt32(static_cast<uint32_t>(v)),
                             name);
  }

  llvm::FunctionCallee runtime(const std::string& name, Type* ret, std::vector<Type*> args) {
    return mod_.getOrInsertFunction(name, llvm::FunctionType::get(ret, args, false));
  }

  // A math function of glibc: no side effect (the kernels are built with -fno-math-errno's
  // meaning), so that loops calling it may vectorize (llvm_build.cpp maps it to libmvec).
  Value* libm(const std::string& name, DType t, const std::vector<Value*>& args) {
    const std::string sym = t == DType::f32 ? name + "f" : name;
    Type* ft = value_type(t);
    std::vector<Type*> ats(args.size(), ft);
    llvm::FunctionCallee fc = runtime(sym, ft, ats);
    if (auto* fn = llvm::dyn_cast<Function>(fc.getCallee())) {
      fn->setDoesNotAccessMemory();
      fn->setDoesNotThrow();
      fn->addFnAttr(llvm::Attribute::WillReturn);
    }
    llvm::CallInst* c = b_.CreateCall(fc, args);
    c->setDoesNotAccessMemory();
    return c;
  }

  // ---- faults ----
  void set_fault(int code) {
    auto* st = b_.CreateAlignedStore(b_.getInt32(static_cast<uint32_t>(code)), scope_->fault, llvm::Align(4));
    st->setAtomic(llvm::AtomicOrdering::Monotonic);
  }
  void note_fault(Value* rc) {  // rc != 0: the extern's fault
    BasicBlock* bad = BasicBlock::Create(ctx_, "extern_fault", scope_->fn);
    BasicBlock* cont = BasicBlock::Create(ctx_, "extern_ok", scope_->fn);
    b_.CreateCondBr(b_.CreateICmpNE(rc, b_.getInt32(0)), bad, cont);
    b_.SetInsertPoint(bad);
    auto* st = b_.CreateAlignedStore(rc, scope_->fault, llvm::Align(4));
    st->setAtomic(llvm::AtomicOrdering::Monotonic);
    b_.CreateBr(cont);
    b_.SetInsertPoint(cont);
  }

  // ---- memory ----
  Value* buffer(const Buffer& b) {
    auto it = scope_->bufs.find(b.get());
    SY_CHECK(it != scope_->bufs.end()) << "llvm codegen: buffer " << b->name << " is not in scope";
    return it->second;
  }
  // The row-major element index of idx in b, simplified under the loops' ranges.
  Expr flat(const Buffer& b, const std::vector<Expr>& idx) {
    Expr f;
    int64_t stride = 1;
    for (size_t d = idx.size(); d-- > 0;) {
      Expr term = idx[d] * int_imm(stride);
      f = f ? term + f : term;
      stride *= b->shape[d];
    }
    return f ? simplify(f, ranges_) : int_imm(0);
  }
  Value* element(const Buffer& b, const std::vector<Expr>& idx) {
    return b_.CreateInBoundsGEP(mem_type(b->dtype), buffer(b), expr(flat(b, idx)));
  }
  void tag(llvm::Instruction* inst) {
    if (groups_.empty()) return;
    inst->setMetadata(llvm::LLVMContext::MD_access_group,
                      groups_.size() == 1 ? groups_[0] : llvm::MDNode::get(ctx_, std::vector<llvm::Metadata*>(groups_.begin(), groups_.end())));
  }
  Value* load(const Buffer& b, const std::vector<Expr>& idx) {
    Value* p = element(b, idx);
    auto* l = b_.CreateAlignedLoad(mem_type(b->dtype), p, llvm::Align(dtype_size(b->dtype)));
    tag(l);
    return b->dtype == DType::boolean ? b_.CreateICmpNE(l, b_.getInt8(0)) : static_cast<Value*>(l);
  }
  void store(const Buffer& b, const std::vector<Expr>& idx, Value* v) {
    if (b->dtype == DType::boolean) v = b_.CreateZExt(v, b_.getInt8Ty());
    Value* p = element(b, idx);
    tag(b_.CreateAlignedStore(v, p, llvm::Align(dtype_size(b->dtype))));
  }

  // ---- expressions ----
  bool nonneg(const Expr& e) {
    auto bnd = const_bounds(e, ranges_);
    return bnd && bnd->first >= 0;
  }

  Value* cast(Value* v, DType from, DType to) {
    if (from == to) return v;
    Type* t = value_type(to);
    Type* i32t = i32();
    if (auto* vt = llvm::dyn_cast<llvm::FixedVectorType>(v->getType())) {  // lane by lane
      t = llvm::FixedVectorType::get(t, vt->getNumElements());
      i32t = llvm::FixedVectorType::get(i32t, vt->getNumElements());
    }
    if (to == DType::boolean)
      return is_float(from) ? b_.CreateFCmpUNE(v, llvm::ConstantFP::get(v->getType(), 0.0))
                            : b_.CreateICmpNE(v, llvm::ConstantInt::get(v->getType(), 0));
    if (is_float(from) && is_float(to)) return b_.CreateFPCast(v, t);
    if (is_float(from)) {
      // C converts to a narrow integer through int (GCC: cvttss2si to 32 bits, then truncates).
      if (to == DType::i64) return b_.CreateFPToSI(v, t);
      Value* w = b_.CreateFPToSI(v, i32t);
      return to == DType::i32 ? w : b_.CreateTrunc(w, t);
    }
    if (is_float(to)) return is_unsigned(from) ? b_.CreateUIToFP(v, t) : b_.CreateSIToFP(v, t);
    const unsigned fb = v->getType()->getScalarSizeInBits(), tb = t->getScalarSizeInBits();
    if (tb < fb) return b_.CreateTrunc(v, t);
    if (tb > fb) return is_unsigned(from) ? b_.CreateZExt(v, t) : b_.CreateSExt(v, t);
    return v;
  }

  Value* to_i64(Value* v, DType t) { return t == DType::i64 ? v : cast(v, t, DType::i64); }

  // ?: with its arms evaluated only when chosen, where evaluating one may fault or read memory.
  template <typename A, typename B>
  Value* choose(Value* cond, A&& then_value, B&& else_value, bool guarded) {
    if (!guarded) {
      Value* a = then_value();
      Value* b = else_value();
      return b_.CreateSelect(cond, a, b);
    }
    BasicBlock* tb = BasicBlock::Create(ctx_, "then", scope_->fn);
    BasicBlock* eb = BasicBlock::Create(ctx_, "else", scope_->fn);
    BasicBlock* mb = BasicBlock::Create(ctx_, "merge", scope_->fn);
    b_.CreateCondBr(cond, tb, eb);
    b_.SetInsertPoint(tb);
    Value* a = then_value();
    BasicBlock* ta = b_.GetInsertBlock();
    b_.CreateBr(mb);
    b_.SetInsertPoint(eb);
    Value* b = else_value();
    BasicBlock* ea = b_.GetInsertBlock();
    b_.CreateBr(mb);
    b_.SetInsertPoint(mb);
    llvm::PHINode* phi = b_.CreatePHI(a->getType(), 2);
    phi->addIncoming(a, ta);
    phi->addIncoming(b, ea);
    return phi;
  }

  // Floor division and modulo of 64-bit integers; a zero divisor sets the fault and gives 0.
  Value* floor_divmod(Value* a, Value* b, bool div) {
    BasicBlock* zero = BasicBlock::Create(ctx_, "div_zero", scope_->fn);
    BasicBlock* ok = BasicBlock::Create(ctx_, "div", scope_->fn);
    BasicBlock* done = BasicBlock::Create(ctx_, "div_done", scope_->fn);
    b_.CreateCondBr(b_.CreateICmpEQ(b, b_.getInt64(0)), zero, ok);
    b_.SetInsertPoint(zero);
    set_fault(kFaultIntDivZero);
    b_.CreateBr(done);
    b_.SetInsertPoint(ok);
    Value* q = b_.CreateSDiv(a, b);
    Value* r = b_.CreateSRem(a, b);
    Value* adjust = b_.CreateAnd(b_.CreateICmpNE(r, b_.getInt64(0)),
                                 b_.CreateICmpNE(b_.CreateICmpSLT(r, b_.getInt64(0)), b_.CreateICmpSLT(b, b_.getInt64(0))));
    Value* res = div ? b_.CreateSub(q, b_.CreateZExt(adjust, i64())) : b_.CreateSelect(adjust, b_.CreateAdd(r, b), r);
    BasicBlock* ok_end = b_.GetInsertBlock();
    b_.CreateBr(done);
    b_.SetInsertPoint(done);
    llvm::PHINode* phi = b_.CreatePHI(i64(), 2);
    phi->addIncoming(b_.getInt64(0), zero);
    phi->addIncoming(res, ok_end);
    return phi;
  }

  Value* minmax(Value* a, Value* b, DType t, bool is_min) {
    // C's sy_min/sy_max: the second operand unless the first is strictly smaller (larger), so
    // an unordered comparison picks the second.
    Value* c;
    if (is_float(t)) c = is_min ? b_.CreateFCmpOLT(a, b) : b_.CreateFCmpOGT(a, b);
    else if (is_unsigned(t)) c = is_min ? b_.CreateICmpULT(a, b) : b_.CreateICmpUGT(a, b);
    else c = is_min ? b_.CreateICmpSLT(a, b) : b_.CreateICmpSGT(a, b);
    return b_.CreateSelect(c, a, b);
  }

  Value* compare(ExprKind k, Value* a, Value* b, DType t) {
    if (is_float(t)) {
      switch (k) {
        case ExprKind::EQ: return b_.CreateFCmpOEQ(a, b);
        case ExprKind::NE: return b_.CreateFCmpUNE(a, b);
        case ExprKind::LT: return b_.CreateFCmpOLT(a, b);
        case ExprKind::LE: return b_.CreateFCmpOLE(a, b);
        case ExprKind::GT: return b_.CreateFCmpOGT(a, b);
        default: return b_.CreateFCmpOGE(a, b);
      }
    }
    const bool u = is_unsigned(t);
    switch (k) {
      case ExprKind::EQ: return b_.CreateICmpEQ(a, b);
      case ExprKind::NE: return b_.CreateICmpNE(a, b);
      case ExprKind::LT: return u ? b_.CreateICmpULT(a, b) : b_.CreateICmpSLT(a, b);
      case ExprKind::LE: return u ? b_.CreateICmpULE(a, b) : b_.CreateICmpSLE(a, b);
      case ExprKind::GT: return u ? b_.CreateICmpUGT(a, b) : b_.CreateICmpSGT(a, b);
      default: return u ? b_.CreateICmpUGE(a, b) : b_.CreateICmpSGE(a, b);
    }
  }

  Value* call(const Expr& e) {
    const auto& o = e->operands;
    const std::string& n = e->name;
    const DType t = e->dtype;
    if (n == "abs") {
      Value* v = expr(o[0]);
      if (is_float(t)) return b_.CreateUnaryIntrinsic(llvm::Intrinsic::fabs, v);
      if (is_unsigned(t)) return v;
      return b_.CreateSelect(b_.CreateICmpSLT(v, llvm::ConstantInt::get(v->getType(), 0)), b_.CreateNeg(v), v);
    }
    if (n == "isnan") {
      Value* v = expr(o[0]);
      return b_.CreateFCmpUNO(v, v);
    }
    if (n == "isinf") {
      Value* v = expr(o[0]);
      return b_.CreateFCmpOEQ(b_.CreateUnaryIntrinsic(llvm::Intrinsic::fabs, v), llvm::ConstantFP::getInfinity(v->getType()));
    }
    if (n == "sy_checked_index") {  // i if 0 <= i < n, else 0 and the fault
      Value* i = to_i64(expr(o[0]), o[0]->dtype);
      Value* bound = to_i64(expr(o[1]), o[1]->dtype);
      Value* ok = b_.CreateICmpULT(i, bound);
      BasicBlock* bad = BasicBlock::Create(ctx_, "index_fault", scope_->fn);
      BasicBlock* cont = BasicBlock::Create(ctx_, "index_ok", scope_->fn);
      Value* r = b_.CreateSelect(ok, i, b_.getInt64(0));
      b_.CreateCondBr(ok, cont, bad);
      b_.SetInsertPoint(bad);
      set_fault(kFaultIndexOutOfRange);
      b_.CreateBr(cont);
      b_.SetInsertPoint(cont);
      return r;
    }
    if (n.rfind("sy_nanmax_", 0) == 0 || n.rfind("sy_nanmin_", 0) == 0) {
      // ONNX Max/Min: NaN if either is NaN (the second's first), else the larger (smaller).
      const bool is_max = n.rfind("sy_nanmax_", 0) == 0;
      Value* a = expr(o[0]);
      Value* b = expr(o[1]);
      Value* pick = is_max ? b_.CreateSelect(b_.CreateFCmpOLT(a, b), b, a) : b_.CreateSelect(b_.CreateFCmpOLT(b, a), b, a);
      return b_.CreateSelect(b_.CreateFCmpUNO(b, b), b, b_.CreateSelect(b_.CreateFCmpUNO(a, a), a, pick));
    }
    if (!is_float(t)) throw Error("llvm codegen: no lowering for the call " + n + " of " + std::string(dtype_name(t)));
    std::vector<Value*> args;
    for (const auto& x : o) args.push_back(expr(x));
    if (llvm::Intrinsic::ID id = float_intrinsic(n); id != llvm::Intrinsic::not_intrinsic) {
      if (args.size() == 1) return b_.CreateUnaryIntrinsic(id, args[0]);
      return b_.CreateBinaryIntrinsic(id, args[0], args[1]);
    }
    if (libm_functions().count(n)) return libm(n, t, args);
    throw Error("llvm codegen: no lowering for the call " + n);
  }

  Value* expr(const Expr& e) {
    const auto& o = e->operands;
    const DType t = e->dtype;
    switch (e->kind) {
      case ExprKind::IntImm:
        if (t == DType::boolean) return b_.getInt1(e->int_value != 0);
        return llvm::ConstantInt::get(value_type(t), static_cast<uint64_t>(e->int_value), !is_unsigned(t));
      case ExprKind::FloatImm: return llvm::ConstantFP::get(value_type(t), e->float_value);
      case ExprKind::Var: {
        auto it = scope_->vars.find(e.get());
        SY_CHECK(it != scope_->vars.end()) << "llvm codegen: variable " << e->name << " is not in scope";
        return it->second;
      }
      case ExprKind::Add: {
        Value* a = expr(o[0]);
        Value* b = expr(o[1]);
        return is_float(t) ? b_.CreateFAdd(a, b) : b_.CreateAdd(a, b);
      }
      case ExprKind::Sub: {
        Value* a = expr(o[0]);
        Value* b = expr(o[1]);
        return is_float(t) ? b_.CreateFSub(a, b) : b_.CreateSub(a, b);
      }
      case ExprKind::Mul: {
        Value* a = expr(o[0]);
        Value* b = expr(o[1]);
        return is_float(t) ? b_.CreateFMul(a, b) : b_.CreateMul(a, b);
      }
      case ExprKind::Div:
      case ExprKind::Mod: {
        const bool div = e->kind == ExprKind::Div;
        if (is_float(t)) {
          Value* a = expr(o[0]);
          Value* b = expr(o[1]);
          return div ? b_.CreateFDiv(a, b) : b_.CreateFRem(a, b);
        }
        int64_t c = 0;
        if (nonneg(o[0]) && is_int_const(o[1], &c) && c > 0) {
          Value* a = expr(o[0]);
          Value* b = expr(o[1]);
          if (is_unsigned(t)) return div ? b_.CreateUDiv(a, b) : b_.CreateURem(a, b);
          return div ? b_.CreateSDiv(a, b) : b_.CreateSRem(a, b);
        }
        Value* a = to_i64(expr(o[0]), o[0]->dtype);
        Value* b = to_i64(expr(o[1]), o[1]->dtype);
        return cast(floor_divmod(a, b, div), DType::i64, t);
      }
      case ExprKind::Min:
      case ExprKind::Max: {
        Value* a = expr(o[0]);
        Value* b = expr(o[1]);
        return minmax(a, b, t, e->kind == ExprKind::Min);
      }
      case ExprKind::EQ:
      case ExprKind::NE:
      case ExprKind::LT:
      case ExprKind::LE:
      case ExprKind::GT:
      case ExprKind::GE: {
        Value* a = expr(o[0]);
        Value* b = expr(o[1]);
        return compare(e->kind, a, b, o[0]->dtype);
      }
      case ExprKind::And:
      case ExprKind::Or: {
        const bool is_and = e->kind == ExprKind::And;
        Value* a = expr(o[0]);
        if (!needs_guard(o[1])) {
          Value* b = expr(o[1]);
          return is_and ? b_.CreateAnd(a, b) : b_.CreateOr(a, b);
        }
        if (is_and) return choose(a, [&] { return expr(o[1]); }, [&] { return b_.getFalse(); }, true);
        return choose(a, [&] { return b_.getTrue(); }, [&] { return expr(o[1]); }, true);
      }
      case ExprKind::Not: return b_.CreateNot(expr(o[0]));
      case ExprKind::Select: {
        Value* c = expr(o[0]);
        return choose(c, [&] { return expr(o[1]); }, [&] { return expr(o[2]); }, needs_guard(o[1]) || needs_guard(o[2]));
      }
      case ExprKind::Cast: return cast(expr(o[0]), o[0]->dtype, t);
      case ExprKind::Call: return call(e);
      case ExprKind::Load: return load(e->buffer, o);
      case ExprKind::TensorRead:
      case ExprKind::Reduce: break;
    }
    throw Error("llvm codegen: a tensor-expression node reached code generation: " + print_expr(e));
  }


  // ---- vector loops as vector instructions (as TVM's LLVM back end emits them) ----
  // A vectorized loop of stores (or a reduction) becomes whole vectors of the target's width:
  // the loop variable is a base plus the lane number, reads with stride 1 are vector loads,
  // others gathers, reads under a select's or an && 's guard masked loads; expressions that do
  // not depend on the variable are computed once and broadcast. Other vectorized loops are left
  // to LLVM's loop vectorizer (loop()'s metadata).
  Expr vvar_, vbase_;  // the loop variable, and the variable holding the current vector's first value
  std::optional<int64_t> vbase_const_;  // that first value, when it is a constant

  // For a guard on the vector variable with the vector's lanes known: how many lanes from the
  // first the guard provably holds on, if it provably fails on all the others (-1 if not so).
  int64_t guard_prefix(const Expr& cond, unsigned lanes) {
    if (!vbase_const_) return -1;
    int64_t k = 0;
    bool failing = false;
    for (unsigned l = 0; l < lanes; ++l) {
      Expr c = simplify(substitute(cond, VarMap{{vvar_.get(), int_imm(*vbase_const_ + l)}}), ranges_);
      if (!failing && can_prove(c, ranges_)) {
        ++k;
        continue;
      }
      if (!can_prove(logical_not(c), ranges_)) return -1;
      failing = true;
    }
    return k;
  }

  unsigned vector_width() const { return static_cast<unsigned>(std::max(opts_.vector_bits / 32, 4)); }

  bool vector_node_ok(const Expr& x) {
    switch (x->kind) {
      case ExprKind::Div:
      case ExprKind::Mod: {
        if (is_float(x->dtype)) return true;
        int64_t c = 0;
        return is_int_const(x->operands[1], &c) && c > 0 && nonneg(x->operands[0]);
      }
      case ExprKind::Call: {
        const std::string& n = x->name;
        if (n == "abs" || n == "isnan" || n == "isinf" || n.rfind("sy_nanmax_", 0) == 0 || n.rfind("sy_nanmin_", 0) == 0)
          return true;
        return is_float(x->dtype) && (float_intrinsic(n) != llvm::Intrinsic::not_intrinsic || libm_functions().count(n));
      }
      case ExprKind::TensorRead:
      case ExprKind::Reduce: return false;
      default: return true;
    }
  }
  // Whether e can be evaluated lane-wise: every node that depends on the loop variable can.
  bool vectorizable(const Expr& e) {
    bool ok = true;
    visit_expr(e, [&](const Expr& x) { ok = ok && (!uses_var(x, vvar_) || vector_node_ok(x)); });
    return ok;
  }

  // 1: consecutive lanes read consecutive elements; 0: one element; -1: anything else.
  int stride_of(const Expr& f) {
    if (!uses_var(f, vvar_)) return 0;
    int64_t d = 0;
    Expr step = simplify(substitute(f, VarMap{{vvar_.get(), vvar_ + int_imm(1)}}) - f, ranges_);
    return is_int_const(step, &d) && d == 1 ? 1 : -1;
  }
  Value* at_base(const Expr& f) {
    const Expr base = vbase_const_ ? int_imm(*vbase_const_) : vbase_;
    return expr(simplify(substitute(f, VarMap{{vvar_.get(), base}}), ranges_));
  }
  Value* vptr(const Buffer& b, const Expr& f, unsigned lanes) {
    Value* p = b_.CreateInBoundsGEP(mem_type(b->dtype), buffer(b), at_base(f));
    return b_.CreateBitCast(p, llvm::FixedVectorType::get(mem_type(b->dtype), lanes)->getPointerTo());
  }
  Value* any_lane(Value* mask) { return b_.CreateOrReduce(mask); }

  Value* vload(const Expr& e, Value* mask, unsigned lanes) {
    const Buffer& b = e->buffer;
    const Expr f = flat(b, e->operands);
    auto* vt = llvm::FixedVectorType::get(mem_type(b->dtype), lanes);
    const llvm::Align al(dtype_size(b->dtype));
    Value* v;
    if (stride_of(f) == 1) {
      Value* p = vptr(b, f, lanes);
      v = mask ? static_cast<Value*>(b_.CreateMaskedLoad(vt, p, al, mask, llvm::Constant::getNullValue(vt)))
               : static_cast<Value*>(b_.CreateAlignedLoad(vt, p, al));
    } else {
      Value* ptrs = b_.CreateInBoundsGEP(mem_type(b->dtype), buffer(b), vexpr(f, mask, lanes));
      v = b_.CreateMaskedGather(vt, ptrs, al, mask, llvm::Constant::getNullValue(vt));
    }
    return b->dtype == DType::boolean ? b_.CreateICmpNE(v, llvm::Constant::getNullValue(vt)) : v;
  }

  Value* vcall(const Expr& e, Value* mask, unsigned lanes) {
    const std::string& n = e->name;
    const auto& o = e->operands;
    std::vector<Value*> a;
    for (const auto& x : o) a.push_back(vexpr(x, mask, lanes));
    if (n == "abs") {
      if (is_float(e->dtype)) return b_.CreateUnaryIntrinsic(llvm::Intrinsic::fabs, a[0]);
      if (is_unsigned(e->dtype)) return a[0];
      Value* zero = llvm::Constant::getNullValue(a[0]->getType());
      return b_.CreateSelect(b_.CreateICmpSLT(a[0], zero), b_.CreateNeg(a[0]), a[0]);
    }
    if (n == "isnan") return b_.CreateFCmpUNO(a[0], a[0]);
    if (n == "isinf")
      return b_.CreateFCmpOEQ(b_.CreateUnaryIntrinsic(llvm::Intrinsic::fabs, a[0]), llvm::ConstantFP::getInfinity(a[0]->getType()));
    if (n.rfind("sy_nanmax_", 0) == 0 || n.rfind("sy_nanmin_", 0) == 0) {
      const bool is_max = n.rfind("sy_nanmax_", 0) == 0;
      Value* pick = is_max ? b_.CreateSelect(b_.CreateFCmpOLT(a[0], a[1]), a[1], a[0])
                           : b_.CreateSelect(b_.CreateFCmpOLT(a[1], a[0]), a[1], a[0]);
      return b_.CreateSelect(b_.CreateFCmpUNO(a[1], a[1]), a[1], b_.CreateSelect(b_.CreateFCmpUNO(a[0], a[0]), a[0], pick));
    }
    if (llvm::Intrinsic::ID id = float_intrinsic(n); id != llvm::Intrinsic::not_intrinsic)
      return a.size() == 1 ? b_.CreateUnaryIntrinsic(id, a[0]) : b_.CreateBinaryIntrinsic(id, a[0], a[1]);
    // glibc's vector variant where the vector is the ISA's own width (libmvec), else lane by lane.
    const DType t = e->dtype;
    const unsigned full = t == DType::f32 ? vector_width() : vector_width() / 2;
    const char isa = opts_.vector_bits >= 512 ? 'e' : opts_.vector_bits >= 256 ? 'd' : 'b';
    if (a.size() == 1 && lanes == full && libmvec_functions().count(n)) {
      const std::string sym = "_ZGV" + std::string(1, isa) + "N" + std::to_string(lanes) + "v_" + n + (t == DType::f32 ? "f" : "");
      llvm::FunctionCallee fc = runtime(sym, a[0]->getType(), {a[0]->getType()});
      if (auto* fn = llvm::dyn_cast<Function>(fc.getCallee())) {
        fn->setDoesNotAccessMemory();
        fn->setDoesNotThrow();
      }
      llvm::CallInst* c = b_.CreateCall(fc, {a[0]});
      c->setDoesNotAccessMemory();
      return c;
    }
    Value* out = llvm::UndefValue::get(llvm::FixedVectorType::get(value_type(t), lanes));
    for (unsigned l = 0; l < lanes; ++l) {
      std::vector<Value*> sa;
      for (Value* v : a) sa.push_back(b_.CreateExtractElement(v, l));
      out = b_.CreateInsertElement(out, libm(n, t, sa), l);
    }
    return out;
  }

  Value* vexpr(const Expr& e, Value* mask, unsigned lanes) {
    if (!uses_var(e, vvar_)) {
      // Computed once, for all lanes; a guarded read only if some lane takes its arm.
      if (!mask || !needs_guard(e)) return b_.CreateVectorSplat(lanes, expr(e));
      Value* s = choose(any_lane(mask), [&] { return expr(e); },
                        [&] { return static_cast<Value*>(llvm::Constant::getNullValue(value_type(e->dtype))); }, true);
      return b_.CreateVectorSplat(lanes, s);
    }
    const auto& o = e->operands;
    const DType t = e->dtype;
    switch (e->kind) {
      case ExprKind::Var: {  // the loop variable: its base plus the lane
        std::vector<llvm::Constant*> steps;
        for (unsigned l = 0; l < lanes; ++l) steps.push_back(b_.getInt64(l));
        return b_.CreateAdd(b_.CreateVectorSplat(lanes, expr(vbase_)), llvm::ConstantVector::get(steps));
      }
      case ExprKind::Add: {
        Value* a = vexpr(o[0], mask, lanes);
        Value* b = vexpr(o[1], mask, lanes);
        return is_float(t) ? b_.CreateFAdd(a, b) : b_.CreateAdd(a, b);
      }
      case ExprKind::Sub: {
        Value* a = vexpr(o[0], mask, lanes);
        Value* b = vexpr(o[1], mask, lanes);
        return is_float(t) ? b_.CreateFSub(a, b) : b_.CreateSub(a, b);
      }
      case ExprKind::Mul: {
        Value* a = vexpr(o[0], mask, lanes);
        Value* b = vexpr(o[1], mask, lanes);
        return is_float(t) ? b_.CreateFMul(a, b) : b_.CreateMul(a, b);
      }
      case ExprKind::Div:
      case ExprKind::Mod: {
        Value* a = vexpr(o[0], mask, lanes);
        Value* b = vexpr(o[1], mask, lanes);
        const bool div = e->kind == ExprKind::Div;
        if (is_float(t)) return div ? b_.CreateFDiv(a, b) : b_.CreateFRem(a, b);
        if (is_unsigned(t)) return div ? b_.CreateUDiv(a, b) : b_.CreateURem(a, b);
        return div ? b_.CreateSDiv(a, b) : b_.CreateSRem(a, b);  // non-negative by positive (vectorizable())
      }
      case ExprKind::Min:
      case ExprKind::Max: {
        Value* a = vexpr(o[0], mask, lanes);
        Value* b = vexpr(o[1], mask, lanes);
        return minmax(a, b, t, e->kind == ExprKind::Min);
      }
      case ExprKind::EQ:
      case ExprKind::NE:
      case ExprKind::LT:
      case ExprKind::LE:
      case ExprKind::GT:
      case ExprKind::GE: {
        Value* a = vexpr(o[0], mask, lanes);
        Value* b = vexpr(o[1], mask, lanes);
        return compare(e->kind, a, b, o[0]->dtype);
      }
      case ExprKind::And:
      case ExprKind::Or: {
        const bool is_and = e->kind == ExprKind::And;
        Value* a = vexpr(o[0], mask, lanes);
        Value* live = is_and ? a : b_.CreateNot(a);  // the lanes whose result the second operand decides
        Value* m = mask ? b_.CreateAnd(mask, live) : live;
        Value* b = vexpr(o[1], needs_guard(o[1]) ? m : mask, lanes);
        return is_and ? b_.CreateAnd(a, b) : b_.CreateOr(a, b);
      }
      case ExprKind::Not: return b_.CreateNot(vexpr(o[0], mask, lanes));
      case ExprKind::Select: {
        Value* c = vexpr(o[0], mask, lanes);
        Value* mt = mask ? b_.CreateAnd(mask, c) : c;
        Value* mf = mask ? b_.CreateAnd(mask, b_.CreateNot(c)) : b_.CreateNot(c);
        Value* a = vexpr(o[1], needs_guard(o[1]) ? mt : mask, lanes);
        Value* b = vexpr(o[2], needs_guard(o[2]) ? mf : mask, lanes);
        return b_.CreateSelect(c, a, b);
      }
      case ExprKind::Cast: return cast(vexpr(o[0], mask, lanes), o[0]->dtype, t);
      case ExprKind::Call: return vcall(e, mask, lanes);
      case ExprKind::Load: return vload(e, mask, lanes);
      default: break;
    }
    throw Error("llvm codegen: no vector lowering for " + print_expr(e));
  }

  // Statements a vector body may hold: stores, ifs (a guard on the variable masks the lanes),
  // lets of values that do not depend on the variable.
  bool vector_stmt_ok(const Stmt& st) {
    if (!st) return true;
    switch (st->kind) {
      case StmtKind::Seq:
        for (const auto& c : st->seq)
          if (!vector_stmt_ok(c)) return false;
        return true;
      case StmtKind::Store: {
        if (!vectorizable(st->value)) return false;
        for (const auto& i : st->indices)
          if (!vectorizable(i)) return false;
        return stride_of(flat(st->buffer, st->indices)) != 0;  // a store to one place is no vector
      }
      case StmtKind::IfThenElse: return vectorizable(st->cond) && vector_stmt_ok(st->body) && vector_stmt_ok(st->else_body);
      case StmtKind::LetStmt: return !uses_var(st->value, vvar_) && vector_stmt_ok(st->body);
      default: return false;
    }
  }

  void vstmt(const Stmt& st, unsigned lanes, Value* mask) {
    if (!st) return;
    switch (st->kind) {
      case StmtKind::Seq:
        for (const auto& c : st->seq) vstmt(c, lanes, mask);
        break;
      case StmtKind::Store: vstore(st, lanes, mask); break;
      case StmtKind::IfThenElse: {
        if (uses_var(st->cond, vvar_) && !st->else_body && !mask) {
          // A tail guard (lane < k) on a vector whose lanes are known: a narrower vector, no
          // mask (masked accesses would keep a register tile's accumulators in memory).
          const int64_t k = guard_prefix(st->cond, lanes);
          if (k == 0) break;
          if (k > 0) {
            vstmt(st->body, static_cast<unsigned>(k), nullptr);
            break;
          }
        }
        if (uses_var(st->cond, vvar_)) {
          Value* c = vexpr(st->cond, mask, lanes);
          vstmt(st->body, lanes, mask ? b_.CreateAnd(mask, c) : c);
          Value* nc = b_.CreateNot(c);
          vstmt(st->else_body, lanes, mask ? b_.CreateAnd(mask, nc) : nc);
          break;
        }
        // The same for every lane: a branch around whole vectors.
        Value* c = expr(st->cond);
        BasicBlock* tb = BasicBlock::Create(ctx_, "vif", scope_->fn);
        BasicBlock* eb = st->else_body ? BasicBlock::Create(ctx_, "velse", scope_->fn) : nullptr;
        BasicBlock* mb = BasicBlock::Create(ctx_, "vendif", scope_->fn);
        b_.CreateCondBr(c, tb, eb ? eb : mb);
        b_.SetInsertPoint(tb);
        vstmt(st->body, lanes, mask);
        b_.CreateBr(mb);
        if (eb) {
          b_.SetInsertPoint(eb);
          vstmt(st->else_body, lanes, mask);
          b_.CreateBr(mb);
        }
        b_.SetInsertPoint(mb);
        break;
      }
      case StmtKind::LetStmt:
        bind(scope_->vars, st->var.get(), expr(st->value));
        vstmt(st->body, lanes, mask);
        scope_->vars.erase(st->var.get());
        break;
      default: SY_CHECK(false) << "llvm codegen: a vector body with a " << static_cast<int>(st->kind) << " statement";
    }
  }

  void vstore(const Stmt& st, unsigned lanes, Value* mask) {
    const Buffer& b = st->buffer;
    Value* v = vexpr(st->value, mask, lanes);
    auto* vt = llvm::FixedVectorType::get(mem_type(b->dtype), lanes);
    if (b->dtype == DType::boolean) v = b_.CreateZExt(v, vt);
    const Expr f = flat(b, st->indices);
    const llvm::Align al(dtype_size(b->dtype));
    if (stride_of(f) == 1) {
      if (mask) b_.CreateMaskedStore(v, vptr(b, f, lanes), al, mask);
      else b_.CreateAlignedStore(v, vptr(b, f, lanes), al);
    } else {
      Value* ptrs = b_.CreateInBoundsGEP(mem_type(b->dtype), buffer(b), vexpr(f, mask, lanes));
      b_.CreateMaskedScatter(v, ptrs, al, mask);
    }
  }

  // The reduction's combine, as the C path's sy_max/sy_min and +.
  Value* combine(ReduceKind k, Value* acc, Value* x, DType t) {
    if (k == ReduceKind::Sum) return is_float(t) ? b_.CreateFAdd(acc, x) : b_.CreateAdd(acc, x);
    return minmax(acc, x, t, k == ReduceKind::Min);
  }
  Value* identity(ReduceKind k, DType t) {
    Type* ty = value_type(t);
    if (k == ReduceKind::Sum) return llvm::Constant::getNullValue(ty);
    const bool mx = k == ReduceKind::Max;
    if (is_float(t)) return llvm::ConstantFP::getInfinity(ty, mx);
    const unsigned bits = ty->getIntegerBitWidth();
    if (is_unsigned(t)) return mx ? llvm::ConstantInt::get(ty, 0) : llvm::ConstantInt::get(ty, llvm::APInt::getMaxValue(bits));
    return llvm::ConstantInt::get(ty, mx ? llvm::APInt::getSignedMinValue(bits) : llvm::APInt::getSignedMaxValue(bits));
  }
  // acc op lane 0 op lane 1 ...
  Value* fold_lanes(ReduceKind k, Value* acc, Value* vec, unsigned lanes, DType t) {
    for (unsigned l = 0; l < lanes; ++l) acc = combine(k, acc, b_.CreateExtractElement(vec, l), t);
    return acc;
  }

  bool vector_loop(const Stmt& s) {
    int64_t mn = 0, ext = 0;
    if (!is_int_const(s->min, &mn) || !is_int_const(s->extent, &ext) || ext < 2) return false;
    vvar_ = s->var;
    std::optional<VectorReduction> red = match_vector_reduction(s);
    ranges_[s->var.get()] = {int_imm(mn), int_imm(mn + ext - 1)};
    const bool ok = red ? vectorizable(red->operand) && (!red->cond || vectorizable(red->cond)) : vector_stmt_ok(s->body);
    if (!ok) {
      ranges_.erase(s->var.get());
      return false;
    }
    const unsigned w = vector_width();
    const int64_t chunks = ext / w, tail = ext % w;
    vbase_ = var(s->var->name + "_vbase");
    ranges_[vbase_.get()] = {int_imm(mn), int_imm(mn + ext - 1)};
    const DType t = red ? red->store->buffer->dtype : DType::f32;
    Value* acc = red ? load(red->store->buffer, red->store->indices) : nullptr;
    // One vector's work: stores, or the reduction's lanes (those the guard excludes are the identity).
    auto body = [&](unsigned lanes) -> Value* {
      if (!red) {
        vstmt(s->body, lanes, nullptr);
        return nullptr;
      }
      Value* c = red->cond ? vexpr(red->cond, nullptr, lanes) : nullptr;
      Value* x = vexpr(red->operand, c && needs_guard(red->operand) ? c : nullptr, lanes);
      return c ? b_.CreateSelect(c, x, b_.CreateVectorSplat(lanes, identity(red->kind, t))) : x;
    };
    if (chunks == 1 && !red) {  // one whole vector: its lanes are known
      vbase_const_ = mn;
      bind(scope_->vars, vbase_.get(), b_.getInt64(static_cast<uint64_t>(mn)));
      body(w);
    } else if (chunks > 0) {
      vbase_const_.reset();
      llvm::AllocaInst* vacc = nullptr;
      if (red) {
        llvm::IRBuilder<> eb(scope_->entry, scope_->entry->begin());
        vacc = eb.CreateAlloca(llvm::FixedVectorType::get(value_type(t), w));
        b_.CreateStore(b_.CreateVectorSplat(w, identity(red->kind, t)), vacc);
      }
      Expr chunk = var(s->var->name + "_chunk");
      loop(b_.getInt64(0), b_.getInt64(static_cast<uint64_t>(chunks)), chunk, ForKind::Serial, [&] {
        Value* offset = b_.CreateMul(scope_->vars.at(chunk.get()), b_.getInt64(w));
        bind(scope_->vars, vbase_.get(), b_.CreateAdd(b_.getInt64(static_cast<uint64_t>(mn)), offset));
        Value* x = body(w);
        if (red) b_.CreateStore(combine(red->kind, b_.CreateLoad(vacc->getAllocatedType(), vacc), x, t), vacc);
      });
      if (red) {
        // Whole vectors first, then their lanes in order (reassociated, as `omp simd reduction`).
        Value* v = b_.CreateLoad(vacc->getAllocatedType(), vacc);
        Value* r = red->kind == ReduceKind::Sum && is_float(t)
                       ? static_cast<Value*>(b_.CreateFAddReduce(llvm::ConstantFP::get(value_type(t), -0.0), v))
                       : fold_lanes(red->kind, identity(red->kind, t), v, w, t);
        if (red->kind == ReduceKind::Sum && is_float(t)) llvm::cast<llvm::Instruction>(r)->setHasAllowReassoc(true);
        acc = combine(red->kind, acc, r, t);
      }
    }
    if (tail > 0) {
      vbase_const_ = mn + chunks * static_cast<int64_t>(w);
      bind(scope_->vars, vbase_.get(), b_.getInt64(static_cast<uint64_t>(*vbase_const_)));
      Value* x = body(static_cast<unsigned>(tail));
      if (red) acc = fold_lanes(red->kind, acc, x, static_cast<unsigned>(tail), t);
    }
    vbase_const_.reset();
    scope_->vars.erase(vbase_.get());
    ranges_.erase(vbase_.get());
    ranges_.erase(s->var.get());
    if (red) store(red->store->buffer, red->store->indices, acc);
    return true;
  }

  // ---- statements ----
  // A loop over [lo, hi) (64-bit), its variable bound to the induction value, with loop metadata
  // for its kind.
  void loop(Value* lo, Value* hi, const Expr& var, ForKind kind, const std::function<void()>& body) {
    BasicBlock* pre = b_.GetInsertBlock();
    BasicBlock* head = BasicBlock::Create(ctx_, var->name + ".head", scope_->fn);
    BasicBlock* blk = BasicBlock::Create(ctx_, var->name + ".body", scope_->fn);
    BasicBlock* exit = BasicBlock::Create(ctx_, var->name + ".exit", scope_->fn);
    b_.CreateBr(head);
    b_.SetInsertPoint(head);
    llvm::PHINode* iv = b_.CreatePHI(i64(), 2, var->name);
    iv->addIncoming(lo, pre);
    b_.CreateCondBr(b_.CreateICmpSLT(iv, hi), blk, exit);
    b_.SetInsertPoint(blk);
    bind(scope_->vars, var.get(), iv);
    llvm::MDNode* group = nullptr;
    if (kind == ForKind::Vectorized) {
      group = llvm::MDNode::getDistinct(ctx_, {});
      groups_.push_back(group);
    }
    body();
    if (group) groups_.pop_back();
    Value* next = b_.CreateAdd(iv, b_.getInt64(1), "", true, true);
    llvm::BranchInst* back = b_.CreateBr(head);
    iv->addIncoming(next, b_.GetInsertBlock());
    std::vector<llvm::Metadata*> props{nullptr};
    if (kind == ForKind::Vectorized) {
      props.push_back(llvm::MDNode::get(ctx_, {llvm::MDString::get(ctx_, "llvm.loop.vectorize.enable"),
                                               llvm::ConstantAsMetadata::get(b_.getTrue())}));
      props.push_back(llvm::MDNode::get(ctx_, {llvm::MDString::get(ctx_, "llvm.loop.parallel_accesses"), group}));
    } else if (kind == ForKind::Unrolled) {
      props.push_back(llvm::MDNode::get(ctx_, {llvm::MDString::get(ctx_, "llvm.loop.unroll.full")}));
    }
    if (props.size() > 1) {
      llvm::MDNode* id = llvm::MDNode::getDistinct(ctx_, props);
      id->replaceOperandWith(0, id);
      back->setMetadata(llvm::LLVMContext::MD_loop, id);
    }
    b_.SetInsertPoint(exit);
    scope_->vars.erase(var.get());
  }

  void for_stmt(const Stmt& s) {
    int64_t mn = 0, ext = 0;
    const bool ranged = is_int_const(s->min, &mn) && is_int_const(s->extent, &ext);
    if (s->for_kind == ForKind::Parallel && !in_parallel_ && !(ranged && ext == 1)) {  // one iteration: in place
      parallel({s});
      return;
    }
    if (s->for_kind == ForKind::Vectorized && vector_loop(s)) return;
    if (s->for_kind == ForKind::Vectorized)
      if (auto red = match_vector_reduction(s)) {
        reduction(s, *red);
        return;
      }
    Value* lo = to_i64(expr(s->min), s->min->dtype);
    Value* hi = ranged ? static_cast<Value*>(b_.getInt64(static_cast<uint64_t>(mn + ext)))
                       : b_.CreateAdd(lo, to_i64(expr(s->extent), s->extent->dtype));
    if (ranged) ranges_[s->var.get()] = {int_imm(mn), int_imm(mn + ext - 1)};
    // A parallel loop inside a team runs on the thread that meets it (OpenMP's nested regions
    // are inactive by default, and the C path's are).
    const ForKind kind = s->for_kind == ForKind::Parallel ? ForKind::Serial : s->for_kind;
    loop(lo, hi, s->var, kind, [&] { stmt(s->body); });
    ranges_.erase(s->var.get());
  }

  // { acc = B[idx]; simd for (...) [if (c)] acc = acc op e; B[idx] = acc; } as the C path's
  // reduction clause: the accumulator lives in a register, outside the loop's access group.
  void reduction(const Stmt& s, const VectorReduction& r) {
    int64_t mn = 0, ext = 0;
    is_int_const(s->min, &mn);
    is_int_const(s->extent, &ext);
    const Stmt& st = r.store;
    const DType t = st->buffer->dtype;
    llvm::IRBuilder<> eb(scope_->entry, scope_->entry->begin());
    llvm::AllocaInst* acc = eb.CreateAlloca(value_type(t));
    b_.CreateStore(load(st->buffer, st->indices), acc);
    ranges_[s->var.get()] = {int_imm(mn), int_imm(mn + ext - 1)};
    loop(b_.getInt64(static_cast<uint64_t>(mn)), b_.getInt64(static_cast<uint64_t>(mn + ext)), s->var, ForKind::Vectorized,
         [&] {
           auto update = [&] {
             Value* a = b_.CreateLoad(value_type(t), acc);
             Value* x = expr(r.operand);
             if (r.kind == ReduceKind::Sum) return is_float(t) ? b_.CreateFAdd(a, x) : b_.CreateAdd(a, x);
             return minmax(a, x, t, r.kind == ReduceKind::Min);
           };
           if (!r.cond) {
             b_.CreateStore(update(), acc);
             return;
           }
           Value* c = expr(r.cond);
           Value* v = choose(c, update, [&] { return static_cast<Value*>(b_.CreateLoad(value_type(t), acc)); },
                             needs_guard(r.operand));
           b_.CreateStore(v, acc);
         });
    ranges_.erase(s->var.get());
    store(st->buffer, st->indices, b_.CreateLoad(value_type(t), acc));
  }

  // Pieces of one parallel loop (one piece, or a partitioned loop's pieces) as one OpenMP team:
  // GOMP_parallel runs an outlined function on every thread; each piece is split over the
  // threads as schedule(static) splits it, with no barrier between pieces (they are iterations
  // of one loop). The outlined function receives what the pieces use through a struct and calls
  // a function whose buffer parameters are noalias, as the C body's restrict pointers are.
  void parallel(const std::vector<Stmt>& pieces) {
    // What the pieces read from the enclosing scope: every variable and buffer in scope.
    std::vector<const ExprNode*> vkeys;
    std::vector<const BufferNode*> bkeys;
    std::vector<Value*> vals;
    std::vector<Type*> types;
    // In the order they came into scope, not the maps' (addresses): the IR, and so the cache key
    // and the artifact, are the same in every process.
    for (const auto& [k, v] : scope_->vars) vkeys.push_back(k);
    for (const auto& [k, v] : scope_->bufs) bkeys.push_back(k);
    std::sort(vkeys.begin(), vkeys.end(), [&](const void* a, const void* b) { return seq_.at(a) < seq_.at(b); });
    std::sort(bkeys.begin(), bkeys.end(), [&](const void* a, const void* b) { return seq_.at(a) < seq_.at(b); });
    for (const ExprNode* k : vkeys) {
      vals.push_back(scope_->vars.at(k));
      types.push_back(vals.back()->getType());
    }
    for (const BufferNode* k : bkeys) {
      vals.push_back(scope_->bufs.at(k));
      types.push_back(vals.back()->getType());
    }
    vals.push_back(scope_->fault);
    types.push_back(scope_->fault->getType());
    vals.push_back(scope_->states);
    types.push_back(scope_->states->getType());
    const std::string base = scope_->fn->getName().str() + "_par" + std::to_string(++num_parallel_);

    Function* inner = Function::Create(llvm::FunctionType::get(b_.getVoidTy(), types, false),
                                       llvm::GlobalValue::InternalLinkage, base + "_body", mod_);
    attributes(inner);
    if (!params_may_alias_)
      for (size_t i = 0; i < bkeys.size(); ++i) inner->addParamAttr(static_cast<unsigned>(vkeys.size() + i), llvm::Attribute::NoAlias);
    llvm::StructType* st = llvm::StructType::get(ctx_, types);
    Function* outer = Function::Create(llvm::FunctionType::get(b_.getVoidTy(), {i8p()}, false),
                                       llvm::GlobalValue::InternalLinkage, base, mod_);
    attributes(outer);

    // The caller: the struct on its stack, then the team.
    {
      llvm::IRBuilder<> eb(scope_->entry, scope_->entry->begin());
      llvm::AllocaInst* data = eb.CreateAlloca(st);
      for (size_t i = 0; i < vals.size(); ++i) b_.CreateStore(vals[i], b_.CreateStructGEP(st, data, static_cast<unsigned>(i)));
      llvm::FunctionCallee gomp = runtime("GOMP_parallel", b_.getVoidTy(),
                                          {outer->getType(), i8p(), b_.getInt32Ty(), b_.getInt32Ty()});
      b_.CreateCall(gomp, {outer, b_.CreateBitCast(data, i8p()), b_.getInt32(0), b_.getInt32(0)});
    }
    // The outlined function: unpacks the struct and calls the body.
    {
      llvm::IRBuilder<> ob(BasicBlock::Create(ctx_, "entry", outer));
      Value* data = ob.CreateBitCast(outer->getArg(0), st->getPointerTo());
      std::vector<Value*> args;
      for (size_t i = 0; i < types.size(); ++i)
        args.push_back(ob.CreateLoad(types[i], ob.CreateStructGEP(st, data, static_cast<unsigned>(i))));
      ob.CreateCall(inner, args);
      ob.CreateRetVoid();
    }
    // The body, in a scope of its own.
    Scope* saved = scope_;
    llvm::IRBuilderBase::InsertPoint ip = b_.saveIP();
    Scope sc;
    sc.fn = inner;
    sc.entry = BasicBlock::Create(ctx_, "entry", inner);
    for (size_t i = 0; i < vkeys.size(); ++i) bind(sc.vars, vkeys[i], inner->getArg(static_cast<unsigned>(i)));
    for (size_t i = 0; i < bkeys.size(); ++i) bind(sc.bufs, bkeys[i], inner->getArg(static_cast<unsigned>(vkeys.size() + i)));
    sc.fault = inner->getArg(static_cast<unsigned>(types.size() - 2));
    sc.states = inner->getArg(static_cast<unsigned>(types.size() - 1));
    scope_ = &sc;
    in_parallel_ = true;
    BasicBlock* start = BasicBlock::Create(ctx_, "start", inner);
    b_.SetInsertPoint(start);
    Value* tid = b_.CreateSExt(b_.CreateCall(runtime("omp_get_thread_num", i32(), {})), i64());
    Value* nt = b_.CreateSExt(b_.CreateCall(runtime("omp_get_num_threads", i32(), {})), i64());
    // schedule(static) of [lo, lo + n): the first n % nt threads take one iteration more.
    auto share = [&](Value* lo, Value* n) {
      Value* q = b_.CreateSDiv(n, nt);
      Value* r = b_.CreateSRem(n, nt);
      Value* extra = b_.CreateICmpSLT(tid, r);
      Value* before = b_.CreateMul(tid, q);  // (one statement each: C++ leaves the order of arguments open)
      Value* earlier_extras = b_.CreateSelect(extra, tid, r);
      Value* first = b_.CreateAdd(before, earlier_extras);
      Value* count = b_.CreateAdd(q, b_.CreateZExt(extra, i64()));
      Value* from = b_.CreateAdd(lo, first);
      return std::pair<Value*, Value*>{from, b_.CreateAdd(from, count)};
    };
    // The pieces are consecutive ranges of one loop: the whole range is shared out and each piece
    // runs its part of the thread's share (as the C generator: one-iteration pieces, a conv's
    // first and last groups of rows peeled off for the padding, otherwise all went to thread 0).
    int64_t whole_lo = 0, last = 0, last_ext = 0;
    const bool whole = pieces.size() > 1 && is_int_const(pieces.front()->min, &whole_lo) && is_int_const(pieces.back()->min, &last) &&
                       is_int_const(pieces.back()->extent, &last_ext);
    std::pair<Value*, Value*> mine{nullptr, nullptr};
    if (whole) mine = share(b_.getInt64(whole_lo), b_.getInt64(last + last_ext - whole_lo));
    for (const Stmt& p : pieces) {
      int64_t mn = 0, ext = 0;
      const bool ranged = is_int_const(p->min, &mn) && is_int_const(p->extent, &ext);
      Value* lo = to_i64(expr(p->min), p->min->dtype);
      Value* n = to_i64(expr(p->extent), p->extent->dtype);
      Value* from = nullptr;
      Value* to = nullptr;
      if (whole) {
        Value* hi = b_.CreateAdd(lo, n);
        from = b_.CreateSelect(b_.CreateICmpSGT(mine.first, lo), mine.first, lo);
        to = b_.CreateSelect(b_.CreateICmpSLT(mine.second, hi), mine.second, hi);
      } else {
        std::tie(from, to) = share(lo, n);
      }
      if (ranged) ranges_[p->var.get()] = {int_imm(mn), int_imm(mn + ext - 1)};
      loop(from, to, p->var, ForKind::Serial, [&] { stmt(p->body); });
      ranges_.erase(p->var.get());
    }
    b_.CreateRetVoid();
    b_.SetInsertPoint(sc.entry);
    b_.CreateBr(start);
    in_parallel_ = false;
    scope_ = saved;
    b_.restoreIP(ip);
  }

  void allocate(const Stmt& s) {
    const Buffer& buf = s->buffer;
    const int64_t bytes = buf->numel() * static_cast<int64_t>(dtype_size(buf->dtype));
    const bool heap = bytes > opts_.max_stack_bytes;
    Value* p;
    if (heap) {
      llvm::FunctionCallee aa = runtime("aligned_alloc", i8p(), {i64(), i64()});
      Value* raw = b_.CreateCall(aa, {b_.getInt64(64), b_.getInt64(static_cast<uint64_t>((bytes + 63) / 64 * 64))});
      p = b_.CreateBitCast(raw, ptr_to(buf->dtype));
    } else {
      llvm::IRBuilder<> eb(scope_->entry, scope_->entry->begin());
      llvm::AllocaInst* a = eb.CreateAlloca(llvm::ArrayType::get(mem_type(buf->dtype), static_cast<uint64_t>(buf->numel())));
      a->setAlignment(llvm::Align(64));
      p = b_.CreateBitCast(a, ptr_to(buf->dtype));
    }
    bind(scope_->bufs, buf.get(), p);
    stmt(s->body);
    scope_->bufs.erase(buf.get());
    if (heap) b_.CreateCall(runtime("free", b_.getVoidTy(), {i8p()}), {b_.CreateBitCast(p, i8p())});
  }

  void extern_call(const Stmt& s) {
    Value* fptr = b_.CreateLoad(i8p(), b_.CreateConstInBoundsGEP2_64(extern_ptrs_->getValueType(), extern_ptrs_, 0,
                                                                     extern_slot_.at(s->func)));
    if (s->stateful) {
      // run(state of site j, {buffers...}); the site's line as the C generator writes it.
      const size_t site = num_sites_++;
      const std::string line = stateful_site_line(s, func_->params);
      sites_ += (sites_.empty() ? "" : "\n") + line;
      llvm::IRBuilder<> eb(scope_->entry, scope_->entry->begin());
      llvm::AllocaInst* arr = eb.CreateAlloca(llvm::ArrayType::get(i8p(), std::max<size_t>(s->buffers.size(), 1)));
      for (size_t i = 0; i < s->buffers.size(); ++i)
        b_.CreateStore(b_.CreateBitCast(buffer(s->buffers[i]), i8p()), b_.CreateConstInBoundsGEP2_64(arr->getAllocatedType(), arr, 0, i));
      Value* state = b_.CreateLoad(i8p(), b_.CreateConstInBoundsGEP1_64(i8p(), scope_->states, site));
      auto* ft = llvm::FunctionType::get(i32(), {i8p(), i8p()->getPointerTo()}, false);
      Value* rc = b_.CreateCall(ft, b_.CreateBitCast(fptr, ft->getPointerTo()),
                                {state, b_.CreateConstInBoundsGEP2_64(arr->getAllocatedType(), arr, 0, 0)});
      note_fault(rc);
      return;
    }
    std::vector<Type*> types;
    std::vector<Value*> args;
    for (const auto& bf : s->buffers) {
      types.push_back(ptr_to(bf->dtype));
      args.push_back(buffer(bf));
    }
    for (const auto& a : s->scalar_args) {
      Value* v = expr(a);
      if (a->dtype == DType::boolean) v = b_.CreateZExt(v, b_.getInt8Ty());
      types.push_back(v->getType());
      args.push_back(v);
    }
    auto* ft = llvm::FunctionType::get(i32(), types, false);
    note_fault(b_.CreateCall(ft, b_.CreateBitCast(fptr, ft->getPointerTo()), args));
  }

  void stmt(const Stmt& s) {
    if (!s) return;
    switch (s->kind) {
      case StmtKind::For: for_stmt(s); break;
      case StmtKind::Store: store(s->buffer, s->indices, expr(s->value)); break;
      case StmtKind::Seq: {
        const std::vector<Stmt> flat = flat_sequence(s);
        for (size_t i = 0; i < flat.size();) {
          size_t j = i + 1;
          while (j < flat.size() && continues_parallel_loop(flat[j - 1], flat[j])) ++j;
          if (j - i >= 2 && !in_parallel_) {
            parallel(std::vector<Stmt>(flat.begin() + static_cast<std::ptrdiff_t>(i), flat.begin() + static_cast<std::ptrdiff_t>(j)));
            i = j;
          } else {
            stmt(flat[i++]);
          }
        }
        break;
      }
      case StmtKind::IfThenElse: {
        Value* c = expr(s->cond);
        BasicBlock* tb = BasicBlock::Create(ctx_, "if", scope_->fn);
        BasicBlock* eb = s->else_body ? BasicBlock::Create(ctx_, "else", scope_->fn) : nullptr;
        BasicBlock* mb = BasicBlock::Create(ctx_, "endif", scope_->fn);
        b_.CreateCondBr(c, tb, eb ? eb : mb);
        b_.SetInsertPoint(tb);
        stmt(s->body);
        b_.CreateBr(mb);
        if (eb) {
          b_.SetInsertPoint(eb);
          stmt(s->else_body);
          b_.CreateBr(mb);
        }
        b_.SetInsertPoint(mb);
        break;
      }
      case StmtKind::LetStmt:
        bind(scope_->vars, s->var.get(), expr(s->value));
        stmt(s->body);
        scope_->vars.erase(s->var.get());
        break;
      case StmtKind::Allocate: allocate(s); break;
      case StmtKind::ExternCall: extern_call(s); break;
    }
  }

  template <typename K>
  void bind(std::map<K, Value*>& m, K k, Value* v) {
    seq_.emplace(k, seq_.size());
    m[k] = v;
  }
  std::map<const void*, size_t> seq_;  // when each variable and buffer first came into scope

  llvm::LLVMContext& ctx_;
  llvm::Module& mod_;
  llvm::IRBuilder<> b_;
  const EmitOptions& opts_;
  Scope* scope_ = nullptr;
  const PrimFunc* func_ = nullptr;
  RangeMap ranges_;
  std::vector<llvm::MDNode*> groups_;  // access groups of the enclosing vector loops
  bool in_parallel_ = false;
  int num_parallel_ = 0;
  bool params_may_alias_ = false;  // the kernel's PrimFunc::params_may_alias
  std::map<std::string, size_t> extern_slot_;
  std::vector<std::string> extern_names_;
  llvm::GlobalVariable* extern_ptrs_ = nullptr;
  std::string sites_;
  size_t num_sites_ = 0;
  std::vector<std::string> kernel_names_, kernel_sites_;
  std::vector<int32_t> kernel_num_args_;
};

}  // namespace

std::unique_ptr<llvm::Module> emit_module(llvm::LLVMContext& ctx, const std::vector<tir::PrimFunc>& funcs,
                                          const EmitOptions& opts) {
  auto mod = std::make_unique<llvm::Module>("switchyard_kernels", ctx);
  check_kernel_names(funcs);
  Emitter em(ctx, *mod, opts);
  em.prepare(funcs);
  for (const auto& f : funcs) em.kernel(f);
  em.tables();
  return mod;
}

}  // namespace sy::codegen::llvmgen
