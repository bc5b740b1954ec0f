// Schedules of tensor expressions: per-stage loop transformations (split, tile, fuse, reorder,
// vectorize, unroll, parallel) and placement (compute_inline, compute_at, cache_write). Every
// primitive applied is recorded in a trace, so a schedule is data that can be printed and compared.
#pragma once
#include <memory>
#include <string>
#include <tuple>
#include <unordered_map>
#include <vector>

#include "te/tensor.h"
#include "tir/stmt.h"

namespace sy::te {

// A loop axis of a stage: a root axis (an output or reduce axis of the op) or one derived by split/fuse.
struct AxisNode {
  Expr var;
  int64_t extent = 0;  // for the full op shape; lowering recomputes it for compute_at regions
  bool reduce = false;
  tir::ForKind kind = tir::ForKind::Serial;
};
using Axis = std::shared_ptr<AxisNode>;

struct AxisRelation {
  enum Kind { Split, Fuse } kind;
  Axis parent, outer, inner;  // Split: parent -> (outer, inner); Fuse: (outer, inner) -> parent
  int64_t factor = 0;         // Split
};

enum class AttachKind { Root, Inline, At };

class Schedule;

class Stage {
 public:
  Stage(Schedule* owner, Operation op);

  const Operation& op() const { return op_; }            // what this stage computes
  const Operation& origin_op() const { return origin_; }  // the op the user created (cache_write replaces op)
  const std::string& name() const { return op_->name; }

  // Root axes: data-parallel axis d of the output, reduce axis r of the reduction.
  Axis axis(size_t d) const;
  Axis reduce_axis(size_t r) const;
  const std::vector<Axis>& leaves() const { return leaves_; }
  const std::vector<Axis>& roots() const { return roots_; }
  const std::vector<AxisRelation>& relations() const { return relations_; }

  // The axes are taken by value: a caller may pass an element of leaves(), which these change.
  std::pair<Axis, Axis> split(Axis a, int64_t factor);  // (outer, inner)
  // split both axes and order the loops (x_outer, y_outer, x_inner, y_inner).
  std::tuple<Axis, Axis, Axis, Axis> tile(Axis x, Axis y, int64_t fx, int64_t fy);
  Axis fuse(Axis outer, Axis inner);  // adjacent leaves, outer first
  void reorder(const std::vector<Axis>& order);       // the given leaves take their positions in this order
  void vectorize(const Axis& a);
  void unroll(const Axis& a);
  void parallel(const Axis& a);
  void compute_inline();
  void compute_at(Stage& consumer, const Axis& a);
  // Undoes compute_inline / compute_at: the stage gets its own loop nest at the top level.
  void compute_root();
  // A stage computed at a loop computes the whole of its output dimension d there, not only
  // what its readers inside that loop read (a grid rounded up to whole vectors, whose last
  // vector the readers only partly read).
  void cover(size_t d);
  bool covers(size_t d) const { return d < cover_.size() && cover_[d]; }

  AttachKind attach() const { return attach_; }
  Stage* attach_stage() const { return attach_stage_; }
  const Axis& attach_axis() const { return attach_axis_; }

 private:
  friend class Schedule;
  void check_leaf(const Axis& a, const char* prim) const;
  void check_loop_schedulable(const char* prim) const;
  std::string axis_name(const Axis& a) const;
  void record(std::string step);
  void set_kind(const Axis& a, tir::ForKind k, const char* prim);

  Schedule* owner_;
  Operation op_, origin_;
  std::vector<Axis> roots_, leaves_;
  std::vector<AxisRelation> relations_;
  AttachKind attach_ = AttachKind::Root;
  Stage* attach_stage_ = nullptr;
  Axis attach_axis_;
  std::vector<bool> cover_;
};

class Schedule {
 public:
  // Every operation the outputs depend on gets a stage (placeholders included).
  explicit Schedule(const std::vector<Tensor>& outputs);
  Schedule(const Schedule&) = delete;
  Schedule& operator=(const Schedule&) = delete;

  Stage& operator[](const Tensor& t);
  Stage& operator[](const Operation& op);
  // The stage computing op (looked up by its current or original operation), or null.
  Stage* find(const OperationNode* op) const;
  const std::vector<Tensor>& outputs() const { return outputs_; }
  // Stages in dependency order (producers first).
  std::vector<Stage*> stages() const;

  // Computes t into a new stage ("<t>.local", returned) and makes t's stage copy it out; the new
  // stage is meant to be placed with compute_at inside t's loops (a register or L1 tile).
  // Must come before any other primitive on t's stage.
  Tensor cache_write(const Tensor& t);

  // Every primitive applied, one line each ("split C i 32 -> i.outer i.inner").
  const std::vector<std::string>& trace() const { return trace_; }

 private:
  friend class Stage;
  std::vector<Tensor> outputs_;
  std::vector<std::unique_ptr<Stage>> stages_;  // dependency order
  std::vector<std::string> trace_;
};

// Tunable schedule decisions: named knobs, each with candidate values; a schedule template reads
// knob values and a tuner enumerates the space and sets values.
class Knobs {
 public:
  struct Knob {
    std::string name;
    std::vector<int64_t> candidates;
  };
  // Declares a knob (once per name) and returns its value: the one set, else the first candidate.
  int64_t define(const std::string& name, std::vector<int64_t> candidates);
  void set(const std::string& name, int64_t value);
  const std::vector<Knob>& space() const { return space_; }
  // Number of configurations in the space (product of candidate counts).
  int64_t space_size() const;
  // "name=value name=value" in definition order.
  std::string to_string() const;
  // Sets every "name=value" of such a string (what to_string printed); sy::Error if malformed.
  void set_all(const std::string& assignments);
  // The "name=value" pairs of such a string, in order; sy::Error if malformed.
  static std::vector<std::pair<std::string, int64_t>> parse(const std::string& assignments);

 private:
  std::vector<Knob> space_;
  std::unordered_map<std::string, int64_t> values_;
};

}  // namespace sy::te
