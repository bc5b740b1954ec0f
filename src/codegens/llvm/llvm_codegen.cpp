// The llvm codegen hook: loop IR -> LLVM IR (ir_emitter.cpp) -> LLVM's O3 pipeline for the
// target's ISA (vector math through glibc's libmvec, as the C path's) -> an object file -> a
// shared library linked by lld (no C compiler), cached by content like the C path's libraries.
#include <dlfcn.h>
#include <link.h>
#include <unistd.h>

#include <atomic>
#include <filesystem>
#include <fstream>
#include <map>
#include <mutex>
#include <set>
#include <sstream>

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

#include "codegen/c/hooks.h"
#include "codegens/llvm/ir_emitter.h"
#include "support/error.h"
#include "target/host.h"

namespace sy::codegen {

namespace {

namespace fs = std::filesystem;
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

// The full path of a shared library of this process (loaded if it is not yet), for the linker:
// the kernels' library names it as needed, so that it loads in any process (Python too, where
// this library's own dependencies are not global).
std::string loaded_library(const char* soname) {
  void* h = dlopen(soname, RTLD_LAZY | RTLD_NOLOAD);
  if (!h) h = dlopen(soname, RTLD_LAZY);
  if (!h) throw Error(std::string("llvm codegen: cannot find ") + soname + " to link the kernels against");
  link_map* lm = nullptr;
  std::string path;
  if (dlinfo(h, RTLD_DI_LINKMAP, &lm) == 0 && lm && lm->l_name) path = lm->l_name;
  dlclose(h);
  if (path.empty()) throw Error(std::string("llvm codegen: cannot find the path of ") + soname);
  return path;
}

const std::vector<std::string>& runtime_libraries() {
  static const std::vector<std::string> libs = {loaded_library("libgomp.so.1"), loaded_library("libmvec.so.1"),
                                                loaded_library("libm.so.6"), loaded_library("libc.so.6")};
  return libs;
}

// lld from Debian's lld-14 (or a plain ld.lld); GNU ld if neither is installed.
std::string linker() {
  static const std::string found = [] {
    for (const char* l : {"ld.lld-14", "ld.lld", "ld"}) {
      const char* path = std::getenv("PATH");
      std::stringstream ss(path ? path : "/usr/bin:/bin");
      for (std::string dir; std::getline(ss, dir, ':');)
        if (!dir.empty() && access((fs::path(dir) / l).c_str(), X_OK) == 0) return std::string(l);
    }
    return std::string();
  }();
  if (found.empty()) throw Error("llvm codegen: no linker found (install Debian's lld-14)");
  return found;
}

std::shared_ptr<Module> build_llvm(const std::vector<tir::PrimFunc>& funcs, const BuildOptions& opts) {
  init_llvm();
  const target::Target t = opts.target.value_or(target::host());
  std::string err;
  const llvm::Target* lt = llvm::TargetRegistry::lookupTarget(kTriple, err);
  if (!lt) throw Error("llvm codegen: " + err);
  const MachineChoice mc = machine_of(t, *lt);

  llvm::LLVMContext ctx;
  llvmgen::EmitOptions eo;
  eo.max_stack_bytes = opts.source.max_stack_bytes;
  eo.vector_bits = t.vector_lanes() * 32;
  std::unique_ptr<llvm::Module> m = llvmgen::emit_module(ctx, funcs, eo);
  for (llvm::Function& f : *m) {
    if (f.isDeclaration()) continue;
    f.addFnAttr("target-cpu", mc.cpu);
    if (!mc.features.empty()) f.addFnAttr("target-features", mc.features);
    f.addFnAttr("tune-cpu", mc.tune);
  }
  std::string ir;
  {
    llvm::raw_string_ostream os(ir);
    m->print(os, nullptr);
  }
  {
    std::string verr;
    llvm::raw_string_ostream vos(verr);
    if (llvm::verifyModule(*m, &vos)) throw Error("llvm codegen: the generated module is invalid: " + vos.str().substr(0, 600));
  }

  const fs::path dir = opts.compile.cache_dir.empty() ? default_cache_dir() : opts.compile.cache_dir;
  const std::string key = content_hash(std::string("llvm ") + LLVM_VERSION_STRING + " " + kPipeline + " " + mc.cpu + " " +
                                       mc.features + " " + mc.tune + " " + linker() + "\n" + ir);
  const fs::path so = dir / (key + ".so");
  std::error_code ec;
  if (!fs::exists(so, ec)) {
    fs::create_directories(dir, ec);
    if (ec) throw Error("codegen: cannot create the cache directory " + dir.string() + ": " + ec.message());
    llvm::TargetOptions to;
    std::unique_ptr<llvm::TargetMachine> tm(lt->createTargetMachine(kTriple, mc.cpu, mc.features, to, llvm::Reloc::PIC_,
                                                                    llvm::CodeModel::Small, llvm::CodeGenOpt::Aggressive));
    m->setDataLayout(tm->createDataLayout());
    m->setTargetTriple(kTriple);
    const std::string obj = emit_object(*m, *tm, t.isa());
    static std::atomic<int64_t> attempt{0};
    const std::string tag = std::to_string(getpid()) + "-" + std::to_string(attempt++);
    const fs::path o = dir / (key + "-" + tag + ".o"), tmp = dir / (key + ".so.tmp-" + tag),
                   log = dir / (key + ".log-" + tag);
    {
      std::ofstream out(o, std::ios::binary);
      out << obj;
      if (!out) throw Error("codegen: cannot write " + o.string());
    }
    std::vector<std::string> argv = {linker(), "-shared", "-o", tmp.string(), o.string()};
    for (const auto& l : runtime_libraries()) argv.push_back(l);
    const int rc = run_command(argv, log.string());
    std::ifstream lf(log);
    std::stringstream lines;
    lines << lf.rdbuf();
    fs::remove(o, ec);
    fs::remove(log, ec);
    if (rc != 0) {
      fs::remove(tmp, ec);
      throw Error("llvm codegen: the linker failed (exit " + std::to_string(rc) + "): " + lines.str().substr(0, 600));
    }
    {
      std::ofstream out(dir / (key + ".ll"));
      out << ir;
    }
    fs::rename(tmp, so, ec);
    if (ec) throw Error("codegen: cannot move " + tmp.string() + " into the cache: " + ec.message());
  }
  return Module::load(so.string(), opts.externs, std::move(ir));
}

}  // namespace

void register_llvm_codegen() {
  CodegenHook h;
  h.description = "LLVM " LLVM_VERSION_STRING ": loop IR to machine code, linked by lld (no C compiler)";
  h.build = build_llvm;
  h.identity = [] { return std::string("LLVM ") + LLVM_VERSION_STRING; };
  register_codegen_hook("llvm", std::move(h));
}

}  // namespace sy::codegen
