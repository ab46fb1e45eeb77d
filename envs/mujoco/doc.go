// Package mujoco is the MuJoCo Swimmer-v2 and HalfCheetah-v2 of the
// paper's horizon sweep (spec §4.1, experiment 3), simulated by the real
// MuJoCo library (Debian's libmujoco 2.2.2) through cgo, as episodic
// environments for algos/arsv1 and algos/exact (Instance) and as the
// stages' environment (Env).
//
// # Building
//
// The simulator is behind the build tag mujoco. With it, the package links
// -lmujoco and includes <mujoco/mujoco.h> from the system include path
// (apt-get install libmujoco-dev; Debian ships no pkg-config file for it).
// Without it (stub.go) the package still compiles and every entry point
// that needs the simulator returns ErrUnavailable ("MuJoCo unavailable:
// install libmujoco-dev and build with -tags mujoco"). The library's
// version is checked at start-up: Open fails with ErrVersion unless
// mj_version() and the headers are WantVersion (222), and Env reports
// "mujoco 2.2.2" through task.Native so it enters the identity of every
// task that uses it.
//
// # Models
//
// assets/swimmer.xml and assets/half_cheetah.xml are MJCF models written
// for this project to match gym 0.10.5's Swimmer-v2 and HalfCheetah-v2
// assets; each file's header comment lists what was left out (rendering
// only) and what differs because of the MuJoCo version. They are embedded
// (go:embed), compiled once per process from memory through MuJoCo's
// virtual file system (no file is written anywhere), and the compiled
// mjModel is shared read-only by all goroutines. Open checks nq, nv, nu and
// treats a compiler warning as an error.
//
// # Semantics (spec §4.1)
//
//	                 Swimmer                     HalfCheetah
//	frame skip, dt   4, 0.04                     5, 0.05         (dt = timestep·frame skip)
//	observation      qpos[2:] ‖ qvel  (n = 8)    qpos[1:] ‖ qvel (n = 17)
//	action           p = 2, gear 150             p = 6, gears 120/90/60/120/60/30
//	reward           (x' − x)/dt − 1e-4·‖a‖²     (x' − x)/dt − 0.1·‖a‖²     x = qpos[0]
//	reset qpos       qpos0 + U(−0.1, 0.1)        qpos0 + U(−0.1, 0.1)
//	reset qvel       0 + U(−0.1, 0.1)            0 + 0.1·N(0, 1)
//
// The policy is a = W·s with W p×n row-major; the action is passed to
// MuJoCo unclipped (the actuators are ctrllimited, so MuJoCo clamps the
// control to [−1, 1] inside the step) and the control cost uses the
// unclipped action. An episode is exactly H steps; nothing terminates it.
// The return is the undiscounted sum of the H rewards, in step order.
//
// Floating-point order, identical in every call: a_i = ((0 + W_i0·s_0) +
// W_i1·s_1) + ... (then + delta_i for ExAct's perturbed step), ‖a‖² =
// ((0 + a_0²) + a_1²) + ..., r = (x' − x)/dt − c·‖a‖². zr.c is compiled
// with floating-point contraction off, so no fused multiply-add can change
// the rounding whatever the C flags.
//
// # Randomness
//
// A rollout draws only its reset noise, all of it from the rng it is
// given, before the episode: NQ values rng.Float64() for the positions
// (dq = −0.1 + 0.2·u), then NV values for the velocities (Float64 as above
// for Swimmer, dv = 0.1·rng.NormFloat64() for HalfCheetah); see
// Spec.DrawReset. Evaluate gives each of its episodes its own stream:
// episode i uses rand.New(rand.NewPCG(hi_i, lo_i)) where hi_0, lo_0, hi_1,
// lo_1, ... are successive Uint64 draws of the evaluation rng, drawn before
// the first episode; the mean is summed in index order. Results therefore
// depend on the streams only, never on scheduling: Rollout may run on any
// goroutine, concurrently.
//
// # Execution
//
// A whole episode is one cgo call (zr_rollout in zr.c): reset, then H
// times policy, frame-skip mj_step calls, reward and observation, in C.
// Each concurrent rollout takes an mjData from the model's free list and
// returns it (a fresh mj_makeData per episode costs ~200 µs more, because
// mj_resetData zeroes the whole ~3.2 MB buffer; see BenchmarkDataAlloc).
// For the same reason a pooled mjData is not reset with mj_resetData but
// with an equivalent reset of the state and header only (fast_reset in
// zr.c); the tests check it bit for bit against mj_resetData, including
// from buffers poisoned with NaN and with finite garbage.
//
// # Errors
//
// MuJoCo's error and warning hooks (mju_user_error, mju_user_warning) are
// set at start-up to C handlers that record the message in thread-local
// state; an error jumps back to the cgo entry point in progress, so MuJoCo
// never ends the process and never writes MUJOCO_LOG.TXT. After every
// mj_step the episode loop checks MuJoCo's warning counters and the state:
// a warning (BADQACC, BADQVEL, BADQPOS, BADCTRL, CONTACTFULL, CNSTRFULL,
// INERTIA; after the first three MuJoCo would silently reset the state) or
// a NaN/huge qpos or qvel ends the episode with an ErrUnstable error naming
// the environment, the step (and mj_step within it) and the warning, and a
// MuJoCo error with ErrSimulation. A huge but finite policy is not an
// error: its controls saturate and the control cost makes the return −Inf
// or very negative, which the Episodic contract allows. Dimension
// mismatches are programmer errors and panic.
package mujoco
