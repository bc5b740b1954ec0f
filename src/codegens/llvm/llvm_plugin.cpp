// libswitchyard_llvm.so, the part of the llvm codegen hook that holds LLVM (plugin_abi.h): loop
// IR -> LLVM IR (ir_emitter.cpp) -> LLVM's O3 pipeline for the target's ISA (vector math through
// glibc's libmvec, as the C path's) -> an object file. llvm_codegen.cpp links it with lld and
// caches the library by content like the C path's.
#include <mutex>
#include <map>

#include <llvm/ADT/Triple.h>
#include <llvm/Analysis/TargetLibraryInfo.h>
#include <llvm/Config/llvm-config.h>
#include <llvm/IR/LegacyPassManager.h>
#include <llvm/IR/Verifier.h>
#include <llvm/MC/MCSubtargetInfo.h>
#include <llvm/MC/TargetRegistry.h>
#include <llvm/Passes/PassBuilder.h>
#include <llvm/Support/TargetSelect.h>
#include <llvm/Support/raw_ostream.h>
#include <llvm/Target/TargetMachine.h>

#include "codegens/llvm/ir_emitter.h"
#include "codegens/llvm/plugin_abi.h"
#include "support/error.h"

namespace sy::codegen::llvmgen {

namespace {

constexpr const char* kTriple = "x86_64-pc-linux-gnu";
// Part of the cache key: what emit_object does with the IR (change it when the pipeline changes).
constexpr const char* kPipeline = "O3, unrolling as scheduled, no SLP, libmvec; lld -shared";

void init_llvm() {
  static std::once_flag once;
  std::call_once(once, [] {
    LLVMInitializeX86TargetInfo();
    LLVMInitializeX86Target();
    LLVMInitializeX86TargetMC();
    LLVMInitializeX86AsmPrinter();
  });
}

// LLVM's name for the target's ISA level (its features are then exactly the target's, added).
std::string level_cpu(target::IsaLevel l) {
  switch (l) {
    case target::IsaLevel::Baseline: return "x86-64";
    case target::IsaLevel::Sse42: return "x86-64-v2";
    case target::IsaLevel::Avx2: return "x86-64-v3";
    case target::IsaLevel::Avx512: return "x86-64-v4";
  }
  return "x86-64";
}

struct MachineChoice {
  std::string cpu, features, tune;
};

// The level's CPU plus every feature of the target (LLVM 14 knows each name target::
// known_features() accepts by the same name as GCC does).
MachineChoice machine_of(const target::Target& t, const llvm::Target& lt) {
  MachineChoice m;
  m.cpu = level_cpu(t.isa());
  for (const auto& f : t.features) m.features += (m.features.empty() ? "+" : ",+") + f;
  std::unique_ptr<llvm::MCSubtargetInfo> sti(lt.createMCSubtargetInfo(kTriple, m.cpu, ""));
  m.tune = sti->isCPUStringValid(t.mtune) ? t.mtune : "generic";
  return m;
}

// glibc's vector variants of the math functions the kernels call (the C generator declares the
// same ones `omp declare simd`): vector-function ABI names for the target's widest vectors.
void add_libmvec(llvm::TargetLibraryInfoImpl& tli, target::IsaLevel l) {
  const char isa = l == target::IsaLevel::Avx512 ? 'e' : l == target::IsaLevel::Avx2 ? 'd' : 'b';
  const unsigned f32 = l == target::IsaLevel::Avx512 ? 16 : l == target::IsaLevel::Avx2 ? 8 : 4;
  // The names must outlive the library info: kept for the process.
  static std::mutex mu;
  static std::map<char, std::vector<std::string>> names;
  std::lock_guard<std::mutex> lock(mu);
  std::vector<std::string>& keep = names[isa];
  if (keep.empty()) {
    for (const std::string& f : llvmgen::libmvec_functions()) {
      keep.push_back(std::string(f) + "f");
      keep.push_back("_ZGV" + std::string(1, isa) + "N" + std::to_string(f32) + "v_" + f + "f");
      keep.push_back(f);
      keep.push_back("_ZGV" + std::string(1, isa) + "N" + std::to_string(f32 / 2) + "v_" + f);
    }
  }
  std::vector<llvm::VecDesc> descs;
  for (size_t i = 0; i < keep.size(); i += 4) {
    descs.push_back({keep[i], keep[i + 1], llvm::ElementCount::getFixed(f32)});
    descs.push_back({keep[i + 2], keep[i + 3], llvm::ElementCount::getFixed(f32 / 2)});
  }
  tli.addVectorizableFunctions(descs);
}

std::string emit_object(llvm::Module& m, llvm::TargetMachine& tm, target::IsaLevel level) {
  llvm::LoopAnalysisManager lam;
  llvm::FunctionAnalysisManager fam;
  llvm::CGSCCAnalysisManager cgam;
  llvm::ModuleAnalysisManager mam;
  llvm::PipelineTuningOptions pto;
  pto.LoopVectorization = true;
  // The vector loops are explicit vectors already; LLVM's SLP vectorizer only packed a register
  // tile's scalar weight addresses into vectors and extracted them again (and spilled).
  pto.SLPVectorization = false;
  // Loops are unrolled where the schedule says so (llvm.loop.unroll.full on its unrolled loops),
  // as GCC's -O3 does: LLVM's own partial unrolling of a register tile's loop over the kernel
  // window doubled the live accumulators, which then spilled (a 3x3 conv at 92 GFLOP/s, 160 in C).
  pto.LoopUnrolling = false;
  llvm::PassBuilder pb(&tm, pto);
  llvm::TargetLibraryInfoImpl tli{llvm::Triple(kTriple)};
  add_libmvec(tli, level);
  fam.registerPass([&] { return llvm::TargetLibraryAnalysis(tli); });
  pb.registerModuleAnalyses(mam);
  pb.registerCGSCCAnalyses(cgam);
  pb.registerFunctionAnalyses(fam);
  pb.registerLoopAnalyses(lam);
  pb.crossRegisterProxies(lam, fam, cgam, mam);
  llvm::ModulePassManager mpm = pb.buildPerModuleDefaultPipeline(llvm::OptimizationLevel::O3);
  mpm.run(m, mam);

  llvm::SmallVector<char, 0> buf;
  llvm::raw_svector_ostream os(buf);
  llvm::legacy::PassManager cg;
  if (tm.addPassesToEmitFile(cg, os, nullptr, llvm::CGFT_ObjectFile))
    throw Error("llvm codegen: LLVM cannot emit an object file for " + tm.getTargetCPU().str());
  cg.run(m);
  return std::string(buf.begin(), buf.end());
}

void emit(const PluginRequest& req, PluginResult& res) {
  init_llvm();
  const target::Target& t = req.target;
  std::string err;
  const llvm::Target* lt = llvm::TargetRegistry::lookupTarget(kTriple, err);
  if (!lt) throw Error("llvm codegen: " + err);
  const MachineChoice mc = machine_of(t, *lt);

  llvm::LLVMContext ctx;
  EmitOptions eo;
  eo.max_stack_bytes = req.max_stack_bytes;
  eo.vector_bits = t.vector_lanes() * 32;
  std::unique_ptr<llvm::Module> m = emit_module(ctx, *req.funcs, eo);
  for (llvm::Function& f : *m) {
    if (f.isDeclaration()) continue;
    f.addFnAttr("target-cpu", mc.cpu);
    if (!mc.features.empty()) f.addFnAttr("target-features", mc.features);
    f.addFnAttr("tune-cpu", mc.tune);
  }
  {
    llvm::raw_string_ostream os(res.ir);
    m->print(os, nullptr);
  }
  {
    std::string verr;
    llvm::raw_string_ostream vos(verr);
    if (llvm::verifyModule(*m, &vos)) throw Error("llvm codegen: the generated module is invalid: " + vos.str().substr(0, 600));
  }
  res.machine = std::string("llvm ") + LLVM_VERSION_STRING + " " + kPipeline + " " + mc.cpu + " " + mc.features + " " + mc.tune;
  if (!req.wants_object || !req.wants_object(res.ir, res.machine)) return;
  llvm::TargetOptions to;
  std::unique_ptr<llvm::TargetMachine> tm(lt->createTargetMachine(kTriple, mc.cpu, mc.features, to, llvm::Reloc::PIC_,
                                                                  llvm::CodeModel::Small, llvm::CodeGenOpt::Aggressive));
  m->setDataLayout(tm->createDataLayout());
  m->setTargetTriple(kTriple);
  res.object = emit_object(*m, *tm, t.isa());
}

}  // namespace

}  // namespace sy::codegen::llvmgen

// Errors as text: an exception's type would not be the caller's (each side has its own copy).
extern "C" __attribute__((visibility("default"))) void sy_llvm_plugin_emit(const sy::codegen::llvmgen::PluginRequest& req,
                                                                          sy::codegen::llvmgen::PluginResult& res) {
  try {
    sy::codegen::llvmgen::emit(req, res);
  } catch (const std::exception& e) {
    res.error = e.what();
    if (res.error.empty()) res.error = "llvm codegen: failed";
  } catch (...) {
    res.error = "llvm codegen: an unknown error";
  }
}
