// Package episodic is what the two multi-step methods of the paper's MuJoCo
// and LQR experiments, algos/arsv1 (ARS V1, parameter-space exploration) and
// algos/exact (ExAct, action-space exploration), share: the environment
// they train on, their hyperparameters and their trained state.
//
//   - Episodic is the environment contract: a finite-horizon episode under a
//     linear policy a = W s, optionally with one perturbed action. It is
//     declared here, once, by its consumers, so that an environment written
//     once (envs/lqr, envs/mujoco) serves both methods. Converger is the
//     optional stop rule of an environment (the LQR stationarity test).
//   - Parallel and Options run an iteration's independent rollouts;
//     Parallel.Run with a nil Parallel runs them in index order on the
//     calling goroutine. They never affect results.
//   - Config is the hyperparameters both methods take (α, N, ν and the
//     diagnostics period), with Validate, and Hyper and Decode read
//     them for the methods' factories. Each method declares its own Config
//     type on top of this one (type Config episodic.Config) so that its
//     trajectories name it (algos.Config.Meta).
//   - Policy is the trained state: W (p×n, row-major, zero-initialised) and
//     the ES-Adam (algos.ESAdam, spec §1) whose steps are ADDED to W, with
//     its state encoding.
//
// Nothing here draws randomness: the streams, their names and the order in
// which they are used belong to each method and are documented there.
package episodic
