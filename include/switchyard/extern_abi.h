/* The calling convention of a stateful extern call site: how a library's implementation of one
 * operator (an "extern implementation", see src/strategy/externs.h) keeps what it builds once --
 * a library primitive, weights reordered into its own layout -- from load to unload.
 *
 * Each call of the extern inside a generated kernel is a call site; every call of that kernel in
 * the model's plan gets a state of its own. When an executable is made (at compile or when an
 * artifact is loaded), each state is made by `init` from the site's buffer shapes and dtypes, the
 * contents of the buffers that are model constants (e.g. the weight), and the site's integer
 * attributes. Every run of the kernel then calls `run(state, buffers)`; `destroy` ends it.
 *
 * run may be called from several threads at once with the same state (an executable may run
 * concurrently): after init, a state is read-only or guards itself. Buffers are dense,
 * row-major, in the shapes given to init; the last one is the output. */
#ifndef SWITCHYARD_EXTERN_ABI_H
#define SWITCHYARD_EXTERN_ABI_H
#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/* dtype codes: those of sy::DType (support/dtype.h). */
enum { SY_EXTERN_F32 = 0 };

typedef struct {
  int32_t num_buffers;
  const int32_t* dtypes;         /* per buffer */
  const int32_t* ranks;          /* per buffer */
  const int64_t* const* shapes;  /* per buffer: ranks[i] extents */
  /* Per buffer: its contents when it is a model constant (valid only during init), else NULL. */
  const void* const* constants;
  int32_t num_attrs;
  const int64_t* attrs;
} sy_extern_site;

/* Returns the state, or NULL after writing why into err (at most err_size bytes, terminated). */
typedef void* (*sy_extern_init_fn)(const sy_extern_site* site, char* err, size_t err_size);
/* Returns 0, or a fault code of generated code (codegen::KernelFault) that the kernel returns. */
typedef int32_t (*sy_extern_run_fn)(void* state, void* const* buffers);
typedef void (*sy_extern_destroy_fn)(void* state);

#ifdef __cplusplus
}
#endif
#endif
