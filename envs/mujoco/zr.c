//go:build mujoco

// Episode loop and MuJoCo error capture for package mujoco; see zr.h and
// cgo.go.

// Floating-point contraction (fused multiply-add) would change the rounding
// of the policy product and the reward depending on the target CPU flags
// (e.g. CGO_CFLAGS=-march=native). cgo does not allow -ffp-contract=off on
// the command line, so disable it here for GCC and Clang alike.
#if defined(__clang__)
#pragma STDC FP_CONTRACT OFF
#elif defined(__GNUC__)
#pragma GCC optimize("fp-contract=off")
#endif

#include "zr.h"

#include <math.h>
#include <setjmp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

// Per-thread capture state. A cgo call runs on one OS thread from start to
// end, and every entry point below arms zr_jmp for its duration, so a
// MuJoCo error raised inside it longjmps back to that entry point on the
// same thread. MuJoCo itself is single-threaded within a call.
static _Thread_local jmp_buf* zr_jmp;
static _Thread_local char zr_errmsg[512];
static _Thread_local char zr_warnmsg[512];

static void zr_copy(char* dst, size_t n, const char* src) {
  if (!src) src = "";
  snprintf(dst, n, "%s", src);
}

// zr_on_error replaces MuJoCo's default error handler, which writes
// MUJOCO_LOG.TXT to the working directory and exits the process. MuJoCo
// assumes the handler does not return, so it jumps back to the armed entry
// point. Every path from Go into MuJoCo goes through an entry point that
// arms zr_jmp; should an error ever arrive unarmed, the message is kept and
// the handler returns rather than end the process.
static void zr_on_error(const char* msg) {
  zr_copy(zr_errmsg, sizeof zr_errmsg, msg);
  if (zr_jmp) {
    jmp_buf* jb = zr_jmp;
    zr_jmp = NULL;
    longjmp(*jb, 1);
  }
}

// zr_on_warning replaces MuJoCo's default warning handler (which writes
// MUJOCO_LOG.TXT and prints). It keeps the first message of the current
// call; the call's own checks decide what the warning means (zr_check).
static void zr_on_warning(const char* msg) {
  if (zr_warnmsg[0] == 0) zr_copy(zr_warnmsg, sizeof zr_warnmsg, msg);
}

void zr_init(void) {
  mju_user_error = zr_on_error;
  mju_user_warning = zr_on_warning;
}

int zr_version(void) { return mj_version(); }

const char* zr_version_string(void) { return mj_versionString(); }

// zr_begin clears st and the thread's messages; the caller then calls
// setjmp and arms zr_jmp with its buffer.
static void zr_begin(zr_status* st) {
  memset(st, 0, sizeof *st);
  st->step = -1;
  st->substep = -1;
  st->warning = -1;
  st->index = -1;
  zr_errmsg[0] = 0;
  zr_warnmsg[0] = 0;
}

static void zr_end(void) { zr_jmp = NULL; }

// zr_caught fills st after a longjmp from zr_on_error. st->step and
// st->substep keep the position the interrupted code last stored.
static void zr_caught(zr_status* st) {
  zr_jmp = NULL;
  st->code = ZR_ERROR;
  zr_copy(st->msg, sizeof st->msg, zr_errmsg);
}

// zr_check reports the first warning recorded in d, if any. All warnings
// count except mjWARN_VGEOMFULL (visualization only): BADQPOS, BADQVEL and
// BADQACC are raised when MuJoCo finds a NaN or huge value and silently
// resets the state; BADCTRL flags a bad control; INERTIA, CONTACTFULL and
// CNSTRFULL mean the step was not computed as modeled. mj_resetData clears
// the counters, so every episode starts clean.
static int zr_check(const mjData* d, zr_status* st, int step, int sub) {
  for (int i = 0; i < mjNWARNING; i++) {
    if (i == mjWARN_VGEOMFULL || d->warning[i].number == 0) continue;
    st->code = ZR_WARNING;
    st->step = step;
    st->substep = sub;
    st->warning = i;
    st->info = d->warning[i].lastinfo;
    if (zr_warnmsg[0])
      zr_copy(st->msg, sizeof st->msg, zr_warnmsg);
    else
      zr_copy(st->msg, sizeof st->msg, mju_warningText(i, d->warning[i].lastinfo));
    return 1;
  }
  return 0;
}

// zr_check_state reports a NaN or |x| > mjMAXVAL in qpos or qvel, the test
// MuJoCo applies at the start of the next mj_step (which the last step of an
// episode never reaches).
static int zr_check_state(const mjModel* m, const mjData* d, zr_status* st, int step,
                          int sub) {
  for (int i = 0; i < m->nq + m->nv; i++) {
    mjtNum x = i < m->nq ? d->qpos[i] : d->qvel[i - m->nq];
    if (mju_isBad(x)) {
      st->code = ZR_NONFINITE;
      st->step = step;
      st->substep = sub;
      st->index = i;
      snprintf(st->msg, sizeof st->msg, "%s[%d] = %g", i < m->nq ? "qpos" : "qvel",
               i < m->nq ? i : i - m->nq, (double)x);
      return 1;
    }
  }
  return 0;
}

mjModel* zr_load(const char* name, const char* xml, int len, char* err, int errlen,
                 zr_status* st) {
  jmp_buf jb;
  mjVFS* vfs = calloc(1, sizeof(mjVFS));  // about 2 MB: not on the stack
  mjModel* m = NULL;
  if (!vfs) {
    memset(st, 0, sizeof *st);
    st->code = ZR_ERROR;
    zr_copy(st->msg, sizeof st->msg, "cannot allocate the virtual file system");
    return NULL;
  }
  zr_begin(st);
  if (setjmp(jb)) {
    zr_caught(st);
    mj_deleteVFS(vfs);
    free(vfs);
    return NULL;
  }
  zr_jmp = &jb;
  mj_defaultVFS(vfs);
  // One extra byte holds a terminating NUL for the XML parser.
  if (mj_makeEmptyFileVFS(vfs, name, len + 1) != 0) {
    zr_end();
    st->code = ZR_ERROR;
    zr_copy(st->msg, sizeof st->msg, "cannot add the model to the virtual file system");
    mj_deleteVFS(vfs);
    free(vfs);
    return NULL;
  }
  int i = mj_findFileVFS(vfs, name);
  memcpy(vfs->filedata[i], xml, (size_t)len);
  ((char*)vfs->filedata[i])[len] = 0;
  m = mj_loadXML(name, vfs, err, errlen);
  zr_end();
  mj_deleteVFS(vfs);
  free(vfs);
  if (zr_warnmsg[0]) zr_copy(st->msg, sizeof st->msg, zr_warnmsg);
  return m;
}

void zr_delete_model(mjModel* m) { mj_deleteModel(m); }

mjData* zr_make_data(const mjModel* m, zr_status* st) {
  jmp_buf jb;
  zr_begin(st);
  if (setjmp(jb)) {
    zr_caught(st);
    return NULL;
  }
  zr_jmp = &jb;
  mjData* d = mj_makeData(m);
  zr_end();
  if (!d) {
    st->code = ZR_ERROR;
    zr_copy(st->msg, sizeof st->msg, "mj_makeData failed");
  }
  return d;
}

void zr_delete_data(mjData* d) { mj_deleteData(d); }

// fast_reset puts d into the state mj_resetData leaves it in, as far as
// anything MuJoCo computes can tell, without mj_resetData's memset of the
// whole buffer (about 3.2 MB with the default njmax = 500 of these models,
// some 200 us, far more than the few mj_step calls of a short episode). It
// does what mj_resetData does to the info header (stack pointer, memory
// and solver statistics, warnings, timers, variable sizes, time, energy),
// sets qpos = qpos0 and the mocap poses from the model, and zeroes every
// array in mjData's "main inputs and outputs" group: qvel, act,
// qacc_warmstart, ctrl, qfrc_applied, xfrc_applied, qacc, act_dot,
// userdata, sensordata. Everything else in the buffer is computed by
// mj_forward/mj_step from these before it is read. The tests check this:
// rollouts after a reset from a buffer poisoned with 0xFF bytes
// (mj_resetDataDebug: NaNs everywhere) or 0x3F bytes (finite garbage,
// 4.9e-4 in every double) are bit-identical to rollouts after
// mj_resetData.
static void fast_reset(const mjModel* m, mjData* d) {
  d->pstack = 0;
  d->maxuse_stack = 0;
  d->maxuse_con = 0;
  d->maxuse_efc = 0;
  memset(d->warning, 0, sizeof d->warning);
  memset(d->timer, 0, sizeof d->timer);
  memset(d->solver, 0, sizeof d->solver);
  d->solver_iter = 0;
  d->solver_nnz = 0;
  mju_zero(d->solver_fwdinv, 2);
  d->ne = 0;
  d->nf = 0;
  d->nefc = 0;
  d->ncon = 0;
  d->time = 0;
  mju_zero(d->energy, 2);

  mju_copy(d->qpos, m->qpos0, m->nq);
  mju_zero(d->qvel, m->nv);
  mju_zero(d->act, m->na);
  mju_zero(d->qacc_warmstart, m->nv);
  mju_zero(d->ctrl, m->nu);
  mju_zero(d->qfrc_applied, m->nv);
  mju_zero(d->xfrc_applied, 6 * m->nbody);
  for (int i = 0; i < m->nbody; i++) {
    int id = m->body_mocapid[i];
    if (id >= 0) {
      mju_copy3(d->mocap_pos + 3 * id, m->body_pos + 3 * i);
      mju_copy4(d->mocap_quat + 4 * id, m->body_quat + 4 * i);
    }
  }
  mju_zero(d->qacc, m->nv);
  mju_zero(d->act_dot, m->na);
  mju_zero(d->userdata, m->nuserdata);
  mju_zero(d->sensordata, m->nsensordata);
}

// reset_impl: the initial state (mode: fast_reset, mj_resetData, or a
// poisoned buffer then fast_reset), then qpos = qpos0 + dqpos and
// qvel = 0 + dqvel (the initial state of gym's MujocoEnv is the model's
// qpos0 and a zero velocity), then mj_forward, as gym's
// reset_model/set_state do.
static int reset_impl(const mjModel* m, mjData* d, int mode, const double* dqpos,
                      const double* dqvel, zr_status* st) {
  switch (mode & 0xFF) {
    case ZR_RESET_FULL:
      mj_resetData(m, d);
      break;
    case ZR_RESET_POISON:
      mj_resetDataDebug(m, d, (unsigned char)(mode >> 8));
      fast_reset(m, d);
      break;
    default:
      fast_reset(m, d);
  }
  for (int i = 0; i < m->nq; i++) d->qpos[i] = m->qpos0[i] + dqpos[i];
  for (int i = 0; i < m->nv; i++) d->qvel[i] = 0.0 + dqvel[i];
  mj_forward(m, d);
  return zr_check(d, st, -1, -1) || zr_check_state(m, d, st, -1, -1);
}

// progress returns the x of the forward reward (zr_env.progress), read
// from d as it stands: after mj_step the body positions are those of the
// last substep's mj_forward, as gym reads them.
static double progress(const mjModel* m, const mjData* d, const zr_env* env) {
  switch (env->progress) {
    case ZR_PROGRESS_BODY_X:
      return d->xpos[3 * env->progress_body];
    case ZR_PROGRESS_MASS_CENTER: {
      double mx = 0.0, mass = 0.0;
      for (int b = 0; b < m->nbody; b++) {
        mx += m->body_mass[b] * d->xipos[3 * b];
        mass += m->body_mass[b];
      }
      return mx / mass;
    }
    default:
      return d->qpos[0];
  }
}

// clipv returns v clipped to [-c, c] when c > 0 (numpy's clip).
static double clipv(double v, double c) {
  if (c > 0) {
    if (v < -c) return -c;
    if (v > c) return c;
  }
  return v;
}

// step_impl runs one environment step with the unclipped action a (MuJoCo
// clamps ctrl to ctrlrange itself) and returns its reward: for Swimmer and
// HalfCheetah (x_after - x_before)/dt - ctrl_cost*|a|^2, |a|^2 summed in
// index order; the other terms of zr_env as gym 0.10.5's -v2 bodies
// compute them, each sum in index order.
static double step_impl(const mjModel* m, mjData* d, const zr_env* env, const double* a,
                        int step, zr_status* st) {
  double cc = 0.0;
  for (int i = 0; i < m->nu; i++) {
    d->ctrl[i] = a[i];
    cc += a[i] * a[i];
  }
  double xb = progress(m, d, env);
  for (int k = 0; k < env->frame_skip; k++) {
    st->step = step;
    st->substep = k;
    mj_step(m, d);
    if (zr_check(d, st, step, k) || zr_check_state(m, d, st, step, k)) return NAN;
  }
  st->step = -1;
  st->substep = -1;
  double xa = progress(m, d, env);
  double fwd = env->progress_scale != 0 ? (env->progress_scale * (xa - xb)) / env->progress_div
                                        : (xa - xb) / env->dt;
  if (env->alive_first) return (fwd + env->alive) - env->ctrl_cost * cc;
  double r = fwd - env->ctrl_cost * cc;
  if (env->contact_cost > 0) {
    double c2 = 0.0;
    for (int i = 0; i < 6 * m->nbody; i++) {
      double f = clipv(d->cfrc_ext[i], env->cfrc_clip);
      c2 += f * f;
    }
    double c = env->contact_cost * c2;
    if (env->contact_max > 0 && c > env->contact_max) c = env->contact_max;
    r = r - c;
  }
  if (env->alive != 0) r = r + env->alive;
  return r;
}

void zr_obs(const mjModel* m, const mjData* d, const zr_env* env, double* s) {
  int k = 0;
  for (int i = env->obs_skip; i < m->nq; i++) s[k++] = d->qpos[i];
  for (int i = 0; i < m->nv; i++) s[k++] = clipv(d->qvel[i], env->qvel_clip);
  if (env->obs_extra & ZR_OBS_CINERT)
    for (int i = 0; i < 10 * m->nbody; i++) s[k++] = d->cinert[i];
  if (env->obs_extra & ZR_OBS_CVEL)
    for (int i = 0; i < 6 * m->nbody; i++) s[k++] = d->cvel[i];
  if (env->obs_extra & ZR_OBS_QFRC_ACT)
    for (int i = 0; i < m->nv; i++) s[k++] = d->qfrc_actuator[i];
  if (env->obs_extra & ZR_OBS_CFRC_EXT)
    for (int i = 0; i < 6 * m->nbody; i++) s[k++] = clipv(d->cfrc_ext[i], env->cfrc_clip);
}

// obs_dim returns the length of zr_obs's observation.
static int obs_dim(const mjModel* m, const zr_env* env) {
  int n = m->nq - env->obs_skip + m->nv;
  if (env->obs_extra & ZR_OBS_CINERT) n += 10 * m->nbody;
  if (env->obs_extra & ZR_OBS_CVEL) n += 6 * m->nbody;
  if (env->obs_extra & ZR_OBS_QFRC_ACT) n += m->nv;
  if (env->obs_extra & ZR_OBS_CFRC_EXT) n += 6 * m->nbody;
  return n;
}

// policy sets a = W s, W p x n row-major: a[i] = ((0 + W[i][0]*s[0]) +
// W[i][1]*s[1]) + ..., each product rounded before it is added.
static void policy(const double* W, const double* s, int n, int p, double* a) {
  for (int i = 0; i < p; i++) {
    const double* w = W + (size_t)i * n;
    double acc = 0.0;
    for (int j = 0; j < n; j++) acc += w[j] * s[j];
    a[i] = acc;
  }
}

static double rollout_impl(const mjModel* m, mjData* d, const zr_env* env, int mode,
                           const double* W, int H, const double* dqpos,
                           const double* dqvel, int nsteps, const int* steps,
                           const double* delta, double* obs, double* rewards,
                           zr_status* st) {
  int n = obs_dim(m, env), p = m->nu;
  double s[ZR_MAXOBS], a[ZR_MAXACT];
  if (reset_impl(m, d, mode, dqpos, dqvel, st)) return NAN;
  zr_obs(m, d, env, s);
  double ret = 0.0;
  int j = 0;  // the next perturbed step
  for (int k = 0; k < H; k++) {
    policy(W, s, n, p, a);
    if (j < nsteps && k == steps[j]) {
      for (int i = 0; i < p; i++) a[i] = a[i] + delta[(size_t)j * p + i];
      if (obs) memcpy(obs + (size_t)j * n, s, (size_t)n * sizeof(double));
      j++;
    }
    double r = step_impl(m, d, env, a, k, st);
    if (st->code != ZR_OK) return NAN;
    if (rewards) rewards[k] = r;
    ret += r;
    zr_obs(m, d, env, s);
  }
  return ret;
}

static int zr_args_ok(const mjModel* m, const zr_env* env, zr_status* st) {
  int n = obs_dim(m, env);
  if (n < 0 || n > ZR_MAXOBS || m->nu > ZR_MAXACT || env->frame_skip < 1) {
    st->code = ZR_BADARG;
    snprintf(st->msg, sizeof st->msg, "observation %d or action %d dimension unsupported",
             n, m->nu);
    return 0;
  }
  return 1;
}

double zr_rollout(const mjModel* m, mjData* d, const zr_env* env, int reset_mode,
                  const double* W, int H, const double* dqpos, const double* dqvel,
                  int nsteps, const int* steps, const double* delta, double* obs,
                  double* rewards, zr_status* st) {
  jmp_buf jb;
  zr_begin(st);
  if (!zr_args_ok(m, env, st)) {
    zr_end();
    return NAN;
  }
  if (setjmp(jb)) {
    zr_caught(st);
    return NAN;
  }
  zr_jmp = &jb;
  double r = rollout_impl(m, d, env, reset_mode, W, H, dqpos, dqvel, nsteps, steps, delta, obs,
                          rewards, st);
  zr_end();
  return r;
}

int zr_reset(const mjModel* m, mjData* d, int reset_mode, const double* dqpos,
             const double* dqvel, zr_status* st) {
  jmp_buf jb;
  zr_begin(st);
  if (setjmp(jb)) {
    zr_caught(st);
    return st->code;
  }
  zr_jmp = &jb;
  reset_impl(m, d, reset_mode, dqpos, dqvel, st);
  zr_end();
  return st->code;
}

int zr_set_state(const mjModel* m, mjData* d, const double* qpos, const double* qvel,
                 zr_status* st) {
  jmp_buf jb;
  zr_begin(st);
  if (setjmp(jb)) {
    zr_caught(st);
    return st->code;
  }
  zr_jmp = &jb;
  memset(d->warning, 0, sizeof d->warning);  // a Sim may be reused after a warning
  mju_copy(d->qpos, qpos, m->nq);
  mju_copy(d->qvel, qvel, m->nv);
  mj_forward(m, d);
  if (!zr_check(d, st, -1, -1)) zr_check_state(m, d, st, -1, -1);
  zr_end();
  return st->code;
}

double zr_step(const mjModel* m, mjData* d, const zr_env* env, const double* a,
               int step, zr_status* st) {
  jmp_buf jb;
  zr_begin(st);
  if (setjmp(jb)) {
    zr_caught(st);
    return NAN;
  }
  zr_jmp = &jb;
  double r = step_impl(m, d, env, a, step, st);
  zr_end();
  return r;
}

// zr_raw_steps calls mj_step n times with the current controls and checks
// the warnings once at the end: the reference rate of the benchmarks.
int zr_raw_steps(const mjModel* m, mjData* d, int n, zr_status* st) {
  jmp_buf jb;
  zr_begin(st);
  if (setjmp(jb)) {
    zr_caught(st);
    return st->code;
  }
  zr_jmp = &jb;
  for (int k = 0; k < n; k++) mj_step(m, d);
  zr_check(d, st, -1, -1);
  zr_end();
  return st->code;
}
