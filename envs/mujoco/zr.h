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
// (gym's Humanoid-v2: 376 and 17).
#define ZR_MAXOBS 400
#define ZR_MAXACT 20

// Observation parts after qpos[obs_skip:] ++ qvel (zr_env.obs_extra), in
// this order, each over every body (the world body included), as gym's
// Humanoid-v2 concatenates them.
enum {
  ZR_OBS_CINERT = 1,    // cinert, 10 per body
  ZR_OBS_CVEL = 2,      // cvel, 6 per body
  ZR_OBS_QFRC_ACT = 4,  // qfrc_actuator, nv
  ZR_OBS_CFRC_EXT = 8   // cfrc_ext, 6 per body (clipped to cfrc_clip if > 0)
};

// How the forward progress x of the reward is measured (zr_env.progress).
enum {
  ZR_PROGRESS_QPOS0 = 0,       // qpos[0] (Swimmer, HalfCheetah, Hopper, Walker2d)
  ZR_PROGRESS_BODY_X = 1,      // xpos[progress_body][0] (Ant: the torso)
  ZR_PROGRESS_MASS_CENTER = 2  // sum(body_mass*xipos[.][0]) / sum(body_mass) (Humanoid)
};

// zr_env describes one environment's semantics on top of its model. The
// fields after dt are zero for Swimmer and HalfCheetah, whose reward is
// then computed as it always was: (x_after - x_before)/dt - ctrl_cost*|a|^2.
typedef struct {
  int frame_skip;    // mj_step calls per environment step
  int obs_skip;      // the observation is qpos[obs_skip:] ++ qvel (++ obs_extra)
  double ctrl_cost;  // c in r = (x_after - x_before)/dt - c*|a|^2
  double dt;         // timestep*frame_skip

  double qvel_clip;       // > 0: the observed qvel is clipped to [-qvel_clip, qvel_clip]
  int obs_extra;          // ZR_OBS_* flags
  double cfrc_clip;       // > 0: cfrc_ext clipped in the observation and the contact cost
  int progress;           // ZR_PROGRESS_*
  int progress_body;      // the body of ZR_PROGRESS_BODY_X
  double progress_scale;  // != 0: the forward reward is (progress_scale*(x_after - x_before))/progress_div
  double progress_div;
  double contact_cost;    // > 0: minus contact_cost*|cfrc_ext|^2 (clipped as above)
  double contact_max;     // > 0: that cost capped at contact_max
  double alive;           // != 0: the alive bonus
  int alive_first;        // 1: r = (fwd + alive) - ctrl; else ((fwd - ctrl) - contact) + alive
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

// zr_rollout runs one episode of H steps. At the nsteps steps listed in
// steps (strictly increasing), the action is perturbed by delta[j*p..] and,
// when obs is not NULL, the observation before acting is copied to
// obs[j*n..]; when rewards is not NULL it receives each step's reward.
double zr_rollout(const mjModel* m, mjData* d, const zr_env* env, int reset_mode,
                  const double* W, int H, const double* dqpos, const double* dqvel,
                  int nsteps, const int* steps, const double* delta, double* obs,
                  double* rewards, zr_status* st);

int zr_reset(const mjModel* m, mjData* d, int reset_mode, const double* dqpos,
             const double* dqvel, zr_status* st);
int zr_set_state(const mjModel* m, mjData* d, const double* qpos, const double* qvel,
                 zr_status* st);
void zr_obs(const mjModel* m, const mjData* d, const zr_env* env, double* s);
double zr_step(const mjModel* m, mjData* d, const zr_env* env, const double* a,
               int step, zr_status* st);
int zr_raw_steps(const mjModel* m, mjData* d, int n, zr_status* st);

#endif
