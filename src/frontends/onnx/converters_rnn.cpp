// Converters of the ONNX recurrent ops (RNN, GRU, LSTM), unrolled over the static sequence length
// into dense/elementwise ops, one chain per direction.
#include "frontends/onnx/converters.h"
#include "ops/op.h"

namespace sy::onnx {

namespace {

using ops::OpCode;
using Outs = std::vector<ir::Expr>;

enum class Cell { Rnn, Gru, Lstm };

// x[..., begin:end, ...] along one axis.
ir::Expr slice_axis(NodeContext& c, const ir::Expr& x, int64_t axis, int64_t begin, int64_t end) {
  const Shape& s = ir::shape_of(x);
  ops::StridedSliceAttrs a;
  for (size_t i = 0; i < s.size(); ++i) {
    a.begin.push_back(static_cast<int64_t>(i) == axis ? begin : 0);
    a.end.push_back(static_cast<int64_t>(i) == axis ? end : s[i]);
    a.strides.push_back(1);
  }
  return c.op(OpCode::StridedSlice, {x}, a);
}

// Row d of a (num_directions, ...) tensor, without the leading axis.
ir::Expr direction_row(NodeContext& c, const ir::Expr& x, int64_t d) {
  Shape s = ir::shape_of(x);
  ir::Expr row = slice_axis(c, x, 0, d, d + 1);
  s.erase(s.begin());
  return c.reshape(row, s);
}

ir::Expr activation(NodeContext& c, const std::string& name, ir::Expr x, double clip) {
  if (clip > 0) {
    ops::ClipAttrs a;
    a.min = -clip;
    a.max = clip;
    x = c.op(OpCode::Clip, {x}, a);
  }
  if (name == "Sigmoid") return c.op(OpCode::Sigmoid, {x});
  if (name == "Tanh") return c.op(OpCode::Tanh, {x});
  if (name == "Relu") return c.op(OpCode::Relu, {x});
  if (name == "Softsign") return c.op(OpCode::Softsign, {x});
  if (name == "Softplus") return c.op(OpCode::Softplus, {x});
  c.unsupported("activation '" + name + "'");
}

// A (batch, G*H) gate tensor as G tensors of (batch, H): slices, each of which fuses into the
// gate's activation (a split was a kernel of its own in every step).
std::vector<ir::Expr> split_gates(NodeContext& c, const ir::Expr& g, int64_t count, int64_t hidden) {
  std::vector<ir::Expr> out;
  for (int64_t i = 0; i < count; ++i) out.push_back(slice_axis(c, g, 1, i * hidden, (i + 1) * hidden));
  return out;
}

Outs convert_recurrent(NodeContext& c, Cell cell) {
  const int64_t gates = cell == Cell::Rnn ? 1 : cell == Cell::Gru ? 3 : 4;
  ir::Expr x = c.input(0, "X"), w = c.input(1, "W"), r = c.input(2, "R");
  if (c.rank(0, "X") != 3 || c.rank(1, "W") != 3 || c.rank(2, "R") != 3) c.fail("X, W and R must be 3-D");
  int64_t layout = c.attr_int("layout", 0);
  if (layout != 0 && layout != 1) c.fail("layout must be 0 or 1");
  if (layout == 1) x = c.transpose(x, {1, 0, 2});
  const Shape& xs = ir::shape_of(x);
  const int64_t seq = xs[0], batch = xs[1];
  const int64_t hidden = c.attr_int("hidden_size", ir::shape_of(r)[2]);
  const std::string direction = c.attr_string("direction", "forward");
  if (direction != "forward" && direction != "reverse" && direction != "bidirectional")
    c.fail("unknown direction '" + direction + "'");
  const int64_t num_dir = direction == "bidirectional" ? 2 : 1;
  if (ir::shape_of(w) != Shape{num_dir, gates * hidden, xs[2]})
    c.fail("W has shape " + shape_str(ir::shape_of(w)) + ", expected " + shape_str({num_dir, gates * hidden, xs[2]}));
  if (ir::shape_of(r) != Shape{num_dir, gates * hidden, hidden})
    c.fail("R has shape " + shape_str(ir::shape_of(r)) + ", expected " + shape_str({num_dir, gates * hidden, hidden}));
  if (c.has_attr("activation_alpha") || c.has_attr("activation_beta"))
    c.unsupported("activations with parameters (activation_alpha/activation_beta)");
  if (cell == Cell::Lstm && c.attr_int("input_forget", 0) != 0) c.unsupported("LSTM with input_forget=1");
  if (auto lens = c.optional_const_input(4, "sequence_lens")) {
    for (int64_t v : lens->to_int_vector())
      if (v != seq) c.unsupported("sequence_lens shorter than the sequence (variable-length batches)");
  }
  const double clip = c.attr_float("clip", 0.0);
  std::vector<std::string> acts;
  if (c.has_attr("activations")) {
    acts = c.attr_strings("activations");
  } else {
    acts = cell == Cell::Rnn ? std::vector<std::string>{"Tanh"}
           : cell == Cell::Gru ? std::vector<std::string>{"Sigmoid", "Tanh"}
                               : std::vector<std::string>{"Sigmoid", "Tanh", "Tanh"};
    if (num_dir == 2) {
      std::vector<std::string> once = acts;
      acts.insert(acts.end(), once.begin(), once.end());
    }
  }
  const size_t acts_per_dir = cell == Cell::Rnn ? 1 : cell == Cell::Gru ? 2 : 3;
  if (acts.size() != acts_per_dir * static_cast<size_t>(num_dir))
    c.fail("activations has " + std::to_string(acts.size()) + " entries, expected " + std::to_string(acts_per_dir * num_dir));
  const bool linear_before_reset = cell == Cell::Gru && c.attr_int("linear_before_reset", 0) != 0;
  DType dt = ir::dtype_of(x);

  // The input's projection of every time step is one dense of (seq * batch) rows, before the
  // recurrence: step by step, each step read the whole W for one row (a 2-layer bidirectional
  // LSTM of 192 spent 47% of its time re-reading its second layer's 1.2 MB W from L3).
  const ir::Expr x_rows = c.reshape(x, {seq * batch, xs[2]});

  std::vector<std::vector<ir::Expr>> ys(static_cast<size_t>(num_dir));  // per direction, per time step
  std::vector<ir::Expr> last_h, last_c;
  for (int64_t d = 0; d < num_dir; ++d) {
    bool reverse = direction == "reverse" || d == 1;
    auto act = [&](size_t k, const ir::Expr& v) { return activation(c, acts[static_cast<size_t>(d) * acts_per_dir + k], v, clip); };
    ir::Expr wd = direction_row(c, w, d), rd = direction_row(c, r, d);
    ir::Expr wb, rb;
    if (c.has_input(3)) {
      ir::Expr bd = direction_row(c, c.input(3, "B"), d);
      if (ir::shape_of(bd) != Shape{2 * gates * hidden}) c.fail("B must have shape (num_directions, " + std::to_string(2 * gates * hidden) + ")");
      wb = slice_axis(c, bd, 0, 0, gates * hidden);
      rb = slice_axis(c, bd, 0, gates * hidden, 2 * gates * hidden);
    }
    ir::Expr h = c.has_input(5) ? direction_row(c, c.input(5, "initial_h"), d) : ir::constant(Tensor(dt, {batch, hidden}));
    ir::Expr cs;
    ir::Expr pi, po, pf;
    if (cell == Cell::Lstm) {
      cs = c.has_input(6) ? direction_row(c, c.input(6, "initial_c"), d) : ir::constant(Tensor(dt, {batch, hidden}));
      if (c.has_input(7)) {
        ir::Expr pd = direction_row(c, c.input(7, "P"), d);
        if (ir::shape_of(pd) != Shape{3 * hidden}) c.fail("P must have shape (num_directions, " + std::to_string(3 * hidden) + ")");
        pi = slice_axis(c, pd, 0, 0, hidden);
        po = slice_axis(c, pd, 0, hidden, 2 * hidden);
        pf = slice_axis(c, pd, 0, 2 * hidden, 3 * hidden);
      }
    }
    // Gate weights split once (constants fold): W_g (H, in), R_g (H, H), biases (H).
    auto rows = [&](const ir::Expr& m, int64_t g) { return slice_axis(c, m, 0, g * hidden, (g + 1) * hidden); };
    std::vector<ir::Expr>& y = ys[static_cast<size_t>(d)];
    y.assign(static_cast<size_t>(seq), nullptr);
    ir::Expr xw_all = c.op(OpCode::Dense, {x_rows, wd});
    if (wb) xw_all = c.op(OpCode::Add, {xw_all, wb});
    for (int64_t step = 0; step < seq; ++step) {
      int64_t t = reverse ? seq - 1 - step : step;
      ir::Expr xw = slice_axis(c, xw_all, 0, t * batch, (t + 1) * batch);
      if (cell == Cell::Gru) {
        // z and r use the combined projection; the candidate needs R_h separately.
        std::vector<ir::Expr> xg = split_gates(c, xw, 3, hidden);
        ir::Expr hr = c.op(OpCode::Dense, {h, rd});
        if (rb) hr = c.op(OpCode::Add, {hr, rb});
        std::vector<ir::Expr> hg = split_gates(c, hr, 3, hidden);
        ir::Expr z = act(0, c.op(OpCode::Add, {xg[0], hg[0]}));
        ir::Expr rg = act(0, c.op(OpCode::Add, {xg[1], hg[1]}));
        ir::Expr cand;
        if (linear_before_reset) {
          cand = c.op(OpCode::Add, {xg[2], c.op(OpCode::Mul, {rg, hg[2]})});
        } else {
          ir::Expr rh = c.op(OpCode::Dense, {c.op(OpCode::Mul, {rg, h}), rows(rd, 2)});
          if (rb) rh = c.op(OpCode::Add, {rh, rows(rb, 2)});
          cand = c.op(OpCode::Add, {xg[2], rh});
        }
        ir::Expr hh = act(1, cand);
        ir::Expr one_minus_z = c.op(OpCode::Sub, {NodeContext::scalar(dt, 1), z});
        h = c.op(OpCode::Add, {c.op(OpCode::Mul, {one_minus_z, hh}), c.op(OpCode::Mul, {z, h})});
      } else {
        ir::Expr g = c.op(OpCode::Add, {xw, c.op(OpCode::Dense, {h, rd})});
        if (rb) g = c.op(OpCode::Add, {g, rb});
        if (cell == Cell::Rnn) {
          h = act(0, g);
        } else {
          std::vector<ir::Expr> gi = split_gates(c, g, 4, hidden);  // i, o, f, c
          ir::Expr ig = gi[0], og = gi[1], fg = gi[2];
          if (pi) {
            ig = c.op(OpCode::Add, {ig, c.op(OpCode::Mul, {pi, cs})});
            fg = c.op(OpCode::Add, {fg, c.op(OpCode::Mul, {pf, cs})});
          }
          ig = act(0, ig);
          fg = act(0, fg);
          ir::Expr cc = act(1, gi[3]);
          cs = c.op(OpCode::Add, {c.op(OpCode::Mul, {fg, cs}), c.op(OpCode::Mul, {ig, cc})});
          if (po) og = c.op(OpCode::Add, {og, c.op(OpCode::Mul, {po, cs})});
          og = act(0, og);
          h = c.op(OpCode::Mul, {og, act(2, cs)});
        }
      }
      y[static_cast<size_t>(t)] = h;
    }
    last_h.push_back(h);
    if (cell == Cell::Lstm) last_c.push_back(cs);
  }

  // Y: (seq, num_dir, batch, hidden) or, for layout 1, (batch, seq, num_dir, hidden).
  auto stack = [&](const std::vector<ir::Expr>& parts, Shape part_shape, int64_t axis) {
    std::vector<ir::Expr> r;
    for (const auto& p : parts) r.push_back(c.reshape(p, part_shape));
    if (r.size() == 1) return r[0];
    ops::AxisAttrs a;
    a.axis = axis;
    return c.op(OpCode::Concat, r, a);
  };
  Outs outs;
  if (c.num_outputs() > 0 && c.output_used(0)) {
    std::vector<ir::Expr> steps;
    for (int64_t t = 0; t < seq; ++t) {
      std::vector<ir::Expr> dirs;
      for (int64_t d = 0; d < num_dir; ++d) dirs.push_back(ys[static_cast<size_t>(d)][static_cast<size_t>(t)]);
      steps.push_back(stack(dirs, {1, 1, batch, hidden}, 1));
    }
    ir::Expr y = stack(steps, {1, num_dir, batch, hidden}, 0);
    if (layout == 1) y = c.transpose(y, {2, 0, 1, 3});
    outs.push_back(y);
  } else {
    outs.push_back(nullptr);
  }
  auto final_state = [&](const std::vector<ir::Expr>& per_dir) {
    ir::Expr s = stack(per_dir, {1, batch, hidden}, 0);
    if (layout == 1) s = c.transpose(s, {1, 0, 2});
    return s;
  };
  outs.push_back(final_state(last_h));
  if (cell == Cell::Lstm) outs.push_back(final_state(last_c));
  return outs;
}

Outs convert_rnn(NodeContext& c) { return convert_recurrent(c, Cell::Rnn); }
Outs convert_gru(NodeContext& c) { return convert_recurrent(c, Cell::Gru); }
Outs convert_lstm(NodeContext& c) { return convert_recurrent(c, Cell::Lstm); }

}  // namespace

void register_rnn_converters(ConverterTable& t) {
  t.add("RNN", 7, convert_rnn);
  t.add("GRU", 7, convert_gru);
  t.add("LSTM", 7, convert_lstm);
}

}  // namespace sy::onnx
