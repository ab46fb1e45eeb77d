//go:build mujoco

// C side of package mujoco (see cgo.go): episode loop, MuJoCo error and
// warning capture, loading from memory. Every function declared here arms a
// thread-local jump buffer before it calls into MuJoCo, so a MuJoCo error
// (mju_error) returns to it as ZR_ERROR instead of ending the process.

#ifndef ZOREPRO_MUJOCO_ZR_H
#define ZOREPRO_MUJOCO_ZR_H

#include <mujoco/mujoco.h>

// Status codes of zr_status.code.
enum {
  ZR_OK = 0,
  ZR_WARNING = 1,    // MuJoCo raised a warning (instability, see zr_check)
  ZR_ERROR = 2,      // MuJoCo raised an error (mju_error)
  ZR_NONFINITE = 3,  // the state became NaN or exceeded mjMAXVAL
  ZR_BADARG = 4      // an argument was out of range (a programming error)
};

// Reset modes of zr_rollout and zr_reset (see reset_impl in zr.c).
enum {
  ZR_RESET_FAST = 0,    // zr_fast_reset: the state and header only
  ZR_RESET_FULL = 1,    // mj_resetData: also zeroes the whole buffer
  ZR_RESET_POISON = 2   // mj_resetDataDebug(b), then fast reset (tests); the
                        // poison byte b is passed as reset_mode | b << 8
};

// Largest observation and action dimensions the episode loop supports
// (HalfCheetah: 17 and 6).
#define ZR_MAXOBS 32
#define ZR_MAXACT 8

// zr_env describes one environment's semantics on top of its model.
typedef struct {
  int frame_skip;    // mj_step calls per environment step
  int obs_skip;      // the observation is qpos[obs_skip:] ++ qvel
  double ctrl_cost;  // c in r = (x_after - x_before)/dt - c*|a|^2
  double dt;         // timestep*frame_skip
} zr_env;

// zr_status reports how a call ended.
typedef struct {
  int code;          // ZR_OK, ...
  int step;          // environment step (0-based) where it happened; -1: reset
  int substep;       // mj_step call within that step (0..frame_skip-1); -1: none
  int warning;       // mjtWarning index when code == ZR_WARNING
  int info;          // that warning's lastinfo (e.g. the dof index)
  int index;         // state coordinate (qpos then qvel) when ZR_NONFINITE
  char msg[512];     // MuJoCo's message, if any
} zr_status;

void zr_init(void);
int zr_version(void);
const char* zr_version_string(void);

mjModel* zr_load(const char* name, const char* xml, int len, char* err, int errlen,
                 zr_status* st);
void zr_delete_model(mjModel* m);
mjData* zr_make_data(const mjModel* m, zr_status* st);
void zr_delete_data(mjData* d);

double zr_rollout(const mjModel* m, mjData* d, const zr_env* env, int reset_mode,
                  const double* W, int H, const double* dqpos, const double* dqvel, int t,
                  const double* delta, double* obs_t, zr_status* st);

int zr_reset(const mjModel* m, mjData* d, int reset_mode, const double* dqpos,
             const double* dqvel, zr_status* st);
int zr_set_state(const mjModel* m, mjData* d, const double* qpos, const double* qvel,
                 zr_status* st);
void zr_obs(const mjModel* m, const mjData* d, const zr_env* env, double* s);
double zr_step(const mjModel* m, mjData* d, const zr_env* env, const double* a,
               int step, zr_status* st);
int zr_raw_steps(const mjModel* m, mjData* d, int n, zr_status* st);

#endif
