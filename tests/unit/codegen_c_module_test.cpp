// The C module: extern stages, compile errors, the compilation cache, loading from bytes.
#include <cstdlib>
#include <filesystem>

#include "native_test_util.h"

using namespace sy;
using namespace sy::nativetest;
using te::Expr;

extern "C" int32_t sy_test_extern_scale(const float* in, float* out, int64_t n, float factor) {
  for (int64_t i = 0; i < n; ++i) out[i] = in[i] * factor;
  return 0;
}

namespace {

tir::PrimFunc add_one_kernel(const std::string& name, int64_t n = 16) {
  te::Tensor A = te::placeholder({n}, DType::f32, "A");
  te::Tensor B = te::compute({n}, [&](Expr i) { return A(i) + 1.0f; }, "B");
  te::Schedule s({B});
  return te::lower(s, {A, B}, name);
}

}  // namespace

TEST(CodegenCModule, ExternStageCallsAFunctionOfTheProcess) {
  // D = extern scale(B) where B = A + 1 (generated) and E = D * D (generated): an extern stage
  // between two native stages, its scalar arguments passed as C scalars.
  te::Tensor A = te::placeholder({10}, DType::f32, "A");
  te::Tensor B = te::compute({10}, [&](Expr i) { return A(i) + 1.0f; }, "B");
  te::Tensor D = te::extern_op("D", {10}, DType::f32, {B}, "sy_test_extern_scale",
                               {tir::int_imm(10), tir::float_imm(3.0)});
  te::Tensor E = te::compute({10}, [&](Expr i) { return D(i) * D(i); }, "E");
  te::Schedule s({E});
  tir::PrimFunc f = te::lower(s, {A, E}, "with_extern");
  EXPECT_NE(tir::print_func(f).find("call sy_test_extern_scale(B, D, 10, 3.0f)"), std::string::npos) << tir::print_func(f);
  codegen::BuildOptions o = build_options();
  o.externs["sy_test_extern_scale"] = reinterpret_cast<void*>(&sy_test_extern_scale);
  auto m = build_one(f, o);
  Tensor a = random_tensor({10}, 41), e(DType::f32, {10});
  run(*m, "with_extern", {&a, &e});
  Tensor want(DType::f32, {10});
  for (int i = 0; i < 10; ++i) {
    const float d = (a.data<float>()[i] + 1) * 3;
    want.data<float>()[i] = d * d;
  }
  expect_close(e, want);
}

TEST(CodegenCModule, ExternFunctionDefinedInExtraSource) {
  te::Tensor A = te::placeholder({6}, DType::i32, "A");
  te::Tensor R = te::extern_op("R", {6}, DType::i32, {A}, "reverse_i32", {tir::int_imm(6)});
  te::Schedule s({R});
  codegen::BuildOptions o = build_options();
  o.source.extra_source =
      "int32_t reverse_i32(const int32_t* a, int32_t* r, int64_t n) { for (int64_t i = 0; i < n; ++i) r[i] = a[n - 1 - i]; "
      "return 0; }";
  auto m = build_one(te::lower(s, {A, R}, "rev"), o);
  Tensor a = Tensor::from_vector<int32_t>({6}, {1, 2, 3, 4, 5, 6}), r(DType::i32, {6});
  run(*m, "rev", {&a, &r});
  for (int i = 0; i < 6; ++i) EXPECT_EQ(r.data<int32_t>()[i], 6 - i);
}

TEST(CodegenCModule, MissingExternIsAnError) {
  te::Tensor A = te::placeholder({4}, DType::f32, "A");
  te::Tensor R = te::extern_op("R", {4}, DType::f32, {A}, "sy_no_such_function_anywhere");
  te::Schedule s({R});
  try {
    build_one(te::lower(s, {A, R}, "missing"));
    FAIL() << "expected an error";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("sy_no_such_function_anywhere"), std::string::npos) << e.what();
  }
}

TEST(CodegenCModule, CompileErrorIsReportedWithTheCompilersMessage) {
  codegen::BuildOptions o = build_options();
  o.source.extra_source = "int broken(void) { return undeclared_identifier_xyz; }";
  try {
    build_one(add_one_kernel("ok_kernel"), o);
    FAIL() << "expected an error";
  } catch (const Error& e) {
    const std::string msg = e.what();
    EXPECT_NE(msg.find("C compiler failed"), std::string::npos) << msg;
    EXPECT_NE(msg.find("undeclared_identifier_xyz"), std::string::npos) << msg;
    EXPECT_NE(msg.find("error"), std::string::npos) << msg;
  }
}

TEST(CodegenCModule, SecondBuildOfTheSameSourceHitsTheCache) {
  // A fresh cache directory: the first build compiles, the second does not.
  const std::string dir = (std::filesystem::temp_directory_path() /
                           ("sy-cache-test-" + std::to_string(getpid()))).string();
  std::filesystem::remove_all(dir);
  codegen::BuildOptions o;
  o.compile.cache_dir = dir;
  tir::PrimFunc f = add_one_kernel("cached_kernel");
  const int64_t before = codegen::compiler_invocations();
  auto m1 = codegen::build({f}, o);
  EXPECT_EQ(codegen::compiler_invocations(), before + 1);
  auto m2 = codegen::build({add_one_kernel("cached_kernel")}, o);  // rebuilt IR, identical source
  EXPECT_EQ(codegen::compiler_invocations(), before + 1);
  EXPECT_EQ(m1->path(), m2->path());
  EXPECT_EQ(m1->generated_c(), m2->generated_c());
  auto m3 = codegen::build({add_one_kernel("cached_kernel", 17)}, o);  // different source: compiles
  EXPECT_EQ(codegen::compiler_invocations(), before + 2);
  std::filesystem::remove_all(dir);
}

TEST(CodegenCModule, CacheDirectoryFromTheEnvironment) {
  const char* old = std::getenv("SWITCHYARD_CACHE_DIR");
  const std::string keep = old ? old : "";
  setenv("SWITCHYARD_CACHE_DIR", "/some/where", 1);
  EXPECT_EQ(codegen::default_cache_dir(), "/some/where");
  unsetenv("SWITCHYARD_CACHE_DIR");
  const char* xdg = std::getenv("XDG_CACHE_HOME");
  if (xdg && *xdg) EXPECT_EQ(codegen::default_cache_dir(), std::string(xdg) + "/switchyard");
  else EXPECT_NE(codegen::default_cache_dir().find(".cache/switchyard"), std::string::npos);
  if (old) setenv("SWITCHYARD_CACHE_DIR", keep.c_str(), 1);
}

TEST(CodegenCModule, LoadFromBytesAndCallByPackedArguments) {
  auto m = build_one(add_one_kernel("from_bytes"));
  const std::string bytes = m->so_bytes();
  ASSERT_GT(bytes.size(), 1000u);
  EXPECT_EQ(bytes.substr(1, 3), "ELF");
  auto loaded = codegen::Module::load_from_bytes(bytes);
  EXPECT_NE(loaded->path(), m->path());
  EXPECT_EQ(loaded->kernel_names(), std::vector<std::string>{"from_bytes"});
  EXPECT_EQ(loaded->num_args("from_bytes"), 2);
  Tensor a = random_tensor({16}, 51), b(DType::f32, {16});
  void* args[] = {a.raw(), b.raw()};
  ASSERT_EQ(loaded->get("from_bytes")(args), 0);
  for (int i = 0; i < 16; ++i) EXPECT_FLOAT_EQ(b.data<float>()[i], a.data<float>()[i] + 1);
  EXPECT_THROW(loaded->call("from_bytes", {a.raw()}), Error);
  EXPECT_THROW(loaded->get("nope"), Error);
  const std::string tmp = loaded->path();
  loaded.reset();
  EXPECT_FALSE(std::filesystem::exists(tmp));
}

TEST(CodegenCModule, BadKernelNamesAreRejected) {
  EXPECT_THROW(codegen::generate_c({add_one_kernel("has-dash")}), Error);
  EXPECT_THROW(codegen::generate_c({add_one_kernel("twice"), add_one_kernel("twice")}), Error);
}

TEST(CodegenCModule, SeveralKernelsInOneLibrary) {
  te::Tensor A = te::placeholder({5}, DType::f32, "A");
  te::Tensor B = te::compute({5}, [&](Expr i) { return A(i) * A(i); }, "B");
  te::Schedule s({B});
  auto m = codegen::build({add_one_kernel("k_add", 5), te::lower(s, {A, B}, "k_square")}, build_options());
  EXPECT_EQ(m->kernel_names(), (std::vector<std::string>{"k_add", "k_square"}));
  Tensor a = random_tensor({5}, 61), x(DType::f32, {5}), y(DType::f32, {5});
  run(*m, "k_add", {&a, &x});
  run(*m, "k_square", {&x, &y});
  for (int i = 0; i < 5; ++i) EXPECT_FLOAT_EQ(y.data<float>()[i], (a.data<float>()[i] + 1) * (a.data<float>()[i] + 1));
}

namespace {

// (A + k) * factor by the process's extern, then squared: each kernel calls through the extern
// table, which only the first translation unit defines.
tir::PrimFunc scaled_square_kernel(int k) {
  te::Tensor A = te::placeholder({12}, DType::f32, "A");
  te::Tensor B = te::compute({12}, [&](Expr i) { return A(i) + static_cast<float>(k); }, "B");
  te::Tensor D = te::extern_op("D", {12}, DType::f32, {B}, "sy_test_extern_scale",
                               {tir::int_imm(12), tir::float_imm(0.5)});
  te::Tensor E = te::compute({12}, [&](Expr i) { return D(i) * D(i); }, "E");
  te::Schedule s({E});
  return te::lower(s, {A, E}, "scaled_square_" + std::to_string(k));
}

}  // namespace

TEST(CodegenCModule, ALargeLibraryIsCompiledAsSeveralUnitsAtOnce) {
  std::vector<tir::PrimFunc> funcs;
  for (int k = 0; k < 240; ++k) funcs.push_back(scaled_square_kernel(k));
  const codegen::CUnits units = codegen::generate_c_units(funcs, {}, 3);
  EXPECT_EQ(units.whole, codegen::generate_c(funcs));
  size_t bytes = 0;
  for (const auto& u : units.units) bytes += u.size();
  ASSERT_GE(bytes, 2 * codegen::kMinUnitBytes) << "the kernels are too small to split";
  ASSERT_GE(units.units.size(), 2u);
  ASSERT_LE(units.units.size(), 3u);
  // Every kernel in exactly one unit; the tables in the first alone.
  for (const auto& f : funcs) {
    int n = 0;
    for (const auto& u : units.units) n += u.find("int32_t " + f.name + "(void* const* args)") != std::string::npos;
    EXPECT_EQ(n, 1) << f.name;
  }
  for (size_t u = 0; u < units.units.size(); ++u)
    EXPECT_EQ(units.units[u].find("const char* const sy_kernel_names") != std::string::npos, u == 0) << u;
  // One unit when asked for one, or when the kernels are few.
  EXPECT_EQ(codegen::generate_c_units(funcs, {}, 1).units, std::vector<std::string>{units.whole});
  EXPECT_EQ(codegen::generate_c_units({funcs[0], funcs[1]}, {}, 8).units.size(), 1u);

  // Built: a compiler process per unit and one link; every kernel computes its own values.
  const std::string dir = (std::filesystem::temp_directory_path() / ("sy-units-test-" + std::to_string(getpid()))).string();
  std::filesystem::remove_all(dir);
  codegen::BuildOptions o;
  o.compile.cache_dir = dir;
  o.compile.jobs = 3;
  o.externs["sy_test_extern_scale"] = reinterpret_cast<void*>(&sy_test_extern_scale);
  const int64_t before = codegen::compiler_invocations();
  auto m = codegen::build(funcs, o);
  const size_t expected_units = codegen::generate_c_units(funcs, {}, codegen::kMaxUnits).units.size();
  EXPECT_GE(expected_units, 2u);
  EXPECT_EQ(codegen::compiler_invocations(), before + static_cast<int64_t>(expected_units) + 1);
  EXPECT_EQ(m->kernel_names().size(), funcs.size());
  EXPECT_EQ(m->generated_c(), units.whole);
  Tensor a = random_tensor({12}, 71);
  for (int k : {0, 1, 117, 238, 239}) {
    Tensor e(DType::f32, {12});
    run(*m, "scaled_square_" + std::to_string(k), {&a, &e});
    for (int i = 0; i < 12; ++i) {
      const float d = (a.data<float>()[i] + static_cast<float>(k)) * 0.5f;
      EXPECT_FLOAT_EQ(e.data<float>()[i], d * d) << k << " " << i;
    }
  }
  // The same kernels again: the cache's library, no compiler.
  auto again = codegen::build(funcs, o);
  EXPECT_EQ(again->path(), m->path());
  EXPECT_EQ(codegen::compiler_invocations(), before + static_cast<int64_t>(expected_units) + 1);
  std::filesystem::remove_all(dir);
}

TEST(CodegenCModule, CompileJobsFromTheEnvironment) {
  setenv("SWITCHYARD_COMPILE_JOBS", "3", 1);
  EXPECT_EQ(codegen::compile_jobs(), 3);
  codegen::CompileOptions o;
  o.jobs = 5;
  EXPECT_EQ(codegen::compile_jobs(o), 5);
  setenv("SWITCHYARD_COMPILE_JOBS", "many", 1);
  EXPECT_THROW(codegen::compile_jobs(), Error);
  unsetenv("SWITCHYARD_COMPILE_JOBS");
  EXPECT_GE(codegen::compile_jobs(), 1);
}
