#include "nn/footprint.hpp"

#include <algorithm>
#include <cmath>
#include <memory>

#include "nn/mixers/mixer_layer.hpp"
#include "nn/registry.hpp"

namespace seqbench::nn {

namespace {

constexpr double kF = sizeof(float), kI32 = sizeof(int32_t), kI64 = sizeof(int64_t);

// Σ_{t=0}^{steps-1} min(t, cap): the attended entries of a growing window.
double sum_min(double steps, double cap) {
  if (steps <= 0) return 0;
  if (steps - 1 <= cap) return steps * (steps - 1) / 2;
  return cap * (cap + 1) / 2 + cap * (steps - 1 - cap);
}

// The cells Recurrent<Cell> drives: floats per batch row and hidden unit of the input
// projection, the state and the per-step cache (nn/cells/*.hpp).
struct Sizes {
  double proj, state, cache;
};

// Recurrent<Cell>::held_bytes() after a training step (nn/recurrent/recurrent.hpp).
double driven_bytes(Sizes s, double H, double T, double B, bool probe) {
  return kF * H * (T * B * s.proj + (T + 1) * B * s.state + T * B * s.cache + 2 * B * s.state) +
         (probe ? sizeof(double) * T * B : 0.0);
}

template <int Proj, int State, int Cache>
double driven_layer(const ModelConfig& m, int64_t, double T, double B, bool probe) {
  return driven_bytes({Proj, State, Cache}, double(m.hidden), T, B, probe);
}
template <int State>
double state_of(const ModelConfig& m) {
  return State * double(m.hidden);
}
template <int Proj>
double projection_workspace(const ModelConfig& m, int64_t) {
  return kF * double(m.hidden) * Proj * double(m.hidden);
}

int64_t lstm_params(const ModelConfig& m, int64_t I) {
  const int64_t H = m.hidden;
  return 4 * H * I + 4 * H * H + 4 * H;
}
int64_t momentum_lstm_params(const ModelConfig& m, int64_t I) {
  const int64_t H = m.hidden;
  return 4 * H * I + 4 * H * H + 8 * H;
}
int64_t rnn_params(const ModelConfig& m, int64_t I) {
  const int64_t H = m.hidden;
  return H * I + H * H + H + (m.nonlinearity == "modrelu" ? H : 0);
}
int64_t momentum_rnn_params(const ModelConfig& m, int64_t I) {
  const int64_t H = m.hidden;
  return H * I + H * H + H;
}
int64_t attentive_rnn_params(const ModelConfig& m, int64_t I) {
  const int64_t H = m.hidden;
  return H * I + H * H + H + 2 * H * H + H;
}
int64_t attentive_lstm_params(const ModelConfig& m, int64_t I) {
  const int64_t H = m.hidden;
  return 4 * H * I + 4 * H * H + 4 * H + 2 * H * H + H;
}
int64_t sab_params(const ModelConfig& m, int64_t I) {
  const int64_t H = m.hidden;
  return 4 * H * I + 4 * H * H + 4 * H + 2 * H;
}

// The LSTM, ours or oneDNN's primitive.
double lstm_layer(const ModelConfig& m, int64_t input, double T, double B, bool probe) {
  if (m.backend != "onednn") return driven_layer<4, 2, 5>(m, input, T, B, probe);
  // backend::DnnlLstm, one cached shape. The primitive reserves about 43 floats per step,
  // row and hidden unit (held_bytes() reports them) but touches about 15.5 of them (gates
  // and h, c states in the workspace, y, dy, the backward's gradients of gates and
  // states), measured as peak RSS with oneDNN 2.7; counted here is what a run occupies:
  // those, x and dx, the weights' copies (ours, gradients, primitive layouts) and a few
  // rows. A probe replays the sequence on our own cell, with its own buffers.
  const double H = double(m.hidden), I = double(input);
  const double P = double(lstm_params(m, input));
  return kF * (15.5 * T * B * H + 4 * T * B * I + 8 * B * H + 3.5 * P) +
         (probe ? driven_bytes({4, 2, 5}, H, T, B, true) : 0.0);
}
double lstm_workspace(const ModelConfig& m, int64_t input) {
  return m.backend == "onednn" ? 0.0 : projection_workspace<4>(m, input);  // onednn: in its layer
}

// AttentiveRecurrent::held_bytes() after a training step (nn/recurrent/attentive.hpp).
template <bool Lstm, bool Everything>
double attentive_layer(const ModelConfig& m, int64_t, double T, double B, bool probe) {
  const double H = double(m.hidden);
  const double G = Lstm ? 4 * H : H, Sc = Lstm ? 2 * H : H, Cc = Lstm ? 5 * H : H;
  const double S = Lstm ? 3 * H : 2 * H;
  const double nu = double(m.nu), rho = double(m.rho);
  // Attended entries per row over all steps, and the most at one step.
  const double K = Everything ? sum_min(T, T) : sum_min(T, nu) + sum_min(T - nu, rho);
  const double kmax =
      Everything ? std::max(0.0, T - 1)
                 : std::min(std::max(0.0, T - 1), nu) + std::min(std::max(0.0, T - 1 - nu), rho);
  const double rel = Everything ? 0 : 1;
  const double floats = T * B * (G + 2 * Sc + Cc + H /* hu */ + H /* q */ + 2 * H /* dh, dhu */) +
                        B * K /* alpha */ + rel * (T * B + B * rho) + B * S /* final */ + B * kmax +
                        B * H /* dv_rows */ + 2 * B * Sc + B * H /* dsq */;
  return kF * floats + kI32 * (B * K + rel * B * rho) + kI64 * (2 * T + 1) +
         (probe ? sizeof(double) * T * B : 0.0);
}
double attentive_rnn_workspace(const ModelConfig& m, int64_t) {
  const double H = double(m.hidden);
  return kF * 3 * H * H;  // w_hᵀ, u_aᵀ, v_aᵀ
}
double attentive_lstm_workspace(const ModelConfig& m, int64_t) {
  const double H = double(m.hidden);
  return kF * (4 * H * H + 2 * H * H);
}

// SabLayer::held_bytes() after a training step (nn/recurrent/sab.hpp).
double sab_layer(const ModelConfig& m, int64_t, double T, double B, bool) {
  const double H = double(m.hidden), attk = double(m.attk), ktop = double(m.ktop);
  const double n_mem = std::ceil(T / attk);
  // Σ_t min(ceil(t / attk), ktop): memories grow by one every attk steps up to ktop.
  const double full = std::min(T, (ktop - 1) * attk + 1);  // steps before the cap is reached
  // For t < full the count is ceil(t / attk): attk steps of each value 1 .. (full-1)/attk.
  const double q = std::floor(std::max(0.0, full - 1) / attk);
  const double r = std::max(0.0, full - 1) - q * attk;
  double sel = attk * q * (q + 1) / 2 + r * (q + 1);
  sel += ktop * std::max(0.0, T - full);
  const double n_sel = B * sel;
  const double floats = T * B * (4 * H + 5 * H + H /* hhat */ + H /* dh */ + 1 /* zsum */) +
                        (T + 1) * B * 2 * H + 2 * n_mem * B /* ms, dms */ + n_sel + n_mem +
                        2 * ktop + 4 * B * H /* ds, ds_prev */;
  return kF * floats + kI32 * (n_sel + n_mem) + kI64 * (2 * T + 1);
}
double sab_workspace(const ModelConfig& m, int64_t) {
  return kF * 4 * double(m.hidden) * double(m.hidden);
}

// The mixers say for themselves: build one (parameters declared, nothing allocated) and ask.
std::unique_ptr<Mixer<float>> probe_mixer(const ModelConfig& m, int64_t input,
                                          core::ParamStoreT<float>& ps) {
  return make_mixer<float>(*find_cell(m.cell).mixer, m.mixer, ps, "probe", input, m.hidden);
}
int64_t mixer_params(const ModelConfig& m, int64_t input) {
  core::ParamStoreT<float> ps;
  probe_mixer(m, input, ps);
  return ps.size();
}
double mixer_layer(const ModelConfig& m, int64_t input, double T, double B, bool) {
  core::ParamStoreT<float> ps;
  return double(MixerLayer<float>::estimate_bytes(*probe_mixer(m, input, ps), int64_t(T),
                                                  int64_t(B)));
}
double no_workspace(const ModelConfig&, int64_t) { return 0; }

double all_past(const ModelConfig& m, double steps) { return steps * double(m.hidden); }
double recent_and_relevant(const ModelConfig& m, double steps) {
  return std::min(steps, double(m.nu + m.rho)) * double(m.hidden);
}
double every_attk(const ModelConfig& m, double steps) {
  return std::floor(steps / double(m.attk)) * double(m.hidden);
}
double mixer_state(const ModelConfig& m) {
  core::ParamStoreT<float> ps;
  return double(probe_mixer(m, 1, ps)->state_size());
}

}  // namespace

const CellFootprint kLstmFootprint{lstm_params, lstm_layer, lstm_workspace, state_of<2>, false};
const CellFootprint kRnnFootprint{rnn_params, driven_layer<1, 1, 1>, projection_workspace<1>,
                                  state_of<1>, false};
const CellFootprint kMomentumRnnFootprint{momentum_rnn_params, driven_layer<1, 2, 1>,
                                          projection_workspace<1>, state_of<2>, false};
const CellFootprint kMomentumLstmFootprint{momentum_lstm_params, driven_layer<4, 6, 5>,
                                           projection_workspace<4>, state_of<6>, false};
const CellFootprint kAdaptiveLstmFootprint{momentum_lstm_params, driven_layer<4, 10, 13>,
                                           projection_workspace<4>, state_of<10>, false};
const CellFootprint kMemRnnFootprint{attentive_rnn_params, attentive_layer<false, true>,
                                     attentive_rnn_workspace, state_of<2>, true, all_past};
const CellFootprint kRelRnnFootprint{attentive_rnn_params, attentive_layer<false, false>,
                                     attentive_rnn_workspace, state_of<2>, false,
                                     recent_and_relevant};
const CellFootprint kRelLstmFootprint{attentive_lstm_params, attentive_layer<true, false>,
                                      attentive_lstm_workspace, state_of<3>, false,
                                      recent_and_relevant};
const CellFootprint kSabFootprint{sab_params, sab_layer, sab_workspace, state_of<2>, false,
                                  every_attk};
const CellFootprint kMixerFootprint{mixer_params, mixer_layer, no_workspace, mixer_state, false};

double carried_floats(const CellFootprint& f, const ModelConfig& m, double steps) {
  return f.state_floats(m) + (f.attended_floats ? f.attended_floats(m, steps) : 0.0);
}

}  // namespace seqbench::nn
