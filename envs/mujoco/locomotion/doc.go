// Package locomotion is gym 0.10.5's other -v2 locomotion bodies, Hopper,
// Walker2d, Ant and Humanoid, on package mujoco's simulator and episode
// loop, as the crossover experiment runs them (beyond the paper's Swimmer
// and HalfCheetah, which stay in package mujoco: adding these changes no
// identity of theirs). Each body is a mujoco.Spec registered at start-up
// and an environment type (Hopper, Walker2d, Ant, Humanoid) that the stages
// bind as "hopper", "walker2d", "ant" and "humanoid".
//
// # Models
//
// hopper.xml, walker2d.xml, ant.xml and humanoid.xml are MJCF models
// written for this project from gym 0.10.5's assets (gym/envs/mujoco/assets
// at tag v0.10.5), with every value that affects the dynamics kept, and:
//   - rendering left out (textures, materials, lights, cameras); geom
//     colours kept;
//   - MuJoCo 1.50's masses and inertias, as package mujoco's models have
//     them: every capsule is massless and paired with a cylinder
//     "<name>_mass" of its radius and axis, r/2 longer at each end, that
//     holds the mass and collides with nothing (1.50 computed a capsule's
//     mass and inertia as those of that cylinder; 2.1.2 made them exact);
//   - three-number solimp written with 2.x's equivalent five numbers
//     (midpoint 0.5, power 2: 1.50's sigmoid);
//   - Hopper's and Walker2d's foot bodies at their joints (gym writes
//     pos="0.13/2 0 0.1", an expression no MJCF parser evaluates; a body's
//     origin changes nothing here: its inertia comes from its geoms and its
//     joints are placed explicitly);
//   - Ant's unused custom init_qpos left out (gym starts from qpos0);
//   - Ant and Humanoid carry an accelerometer at the torso: MuJoCo 2.x
//     computes the external contact forces cfrc_ext, which their
//     observations and rewards read, only when an acceleration sensor asks
//     (1.50 always computed them; package mujoco's TestBodyTerms pins the
//     difference). With RK4 the forces are those of the last substep's
//     first stage; whether 1.50 read them there or at its last stage is not
//     documented.
//
// # Semantics (gym 0.10.5)
//
//	             Hopper-v2        Walker2d-v2      Ant-v2                 Humanoid-v2
//	p, n         3, 11            6, 17            8, 111                 17, 376
//	d = p·n      33               102              888                    6,392
//	frame skip   4 (RK4, 0.002)   4 (RK4, 0.002)   5 (RK4, 0.01)          5 (RK4, 0.003)
//	observation  qpos[1:],        qpos[1:],        qpos[2:], qvel,        qpos[2:], qvel, cinert,
//	             clip(qvel, ±10)  clip(qvel, ±10)  clip(cfrc_ext, ±1)     cvel, qfrc_actuator, cfrc_ext
//	reward       (Δx/dt + 1)      (Δx/dt + 1)      ((Δx_torso/dt − 0.5‖a‖²)  ((0.25·Δx_com/timestep
//	             − 1e-3‖a‖²       − 1e-3‖a‖²       − 5e-4‖clip(cfrc)‖²) + 1  − 0.1‖a‖²) − min(5e-7‖cfrc‖², 10)) + 5
//	reset        U(±0.005) both   U(±0.005) both   U(±0.1), 0.1·N(0,1)    U(±0.01) both
//
// The paper runs its bodies for a fixed horizon H with no early
// termination, and so are these: gym ends a Hopper, Walker2d or Ant
// episode when the body falls (height or angle out of range) and a
// Humanoid one when the torso leaves 1 < z < 2. Without that, the alive
// bonus (1 a step; Humanoid 5) is paid every step whatever the body does,
// a constant H (5H) in every return that cancels in ARS's differences and
// in ExAct's σ-normalised update only up to its variance; a fallen body
// keeps collecting it and its forward reward continues to count.
package locomotion
