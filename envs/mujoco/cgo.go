//go:build mujoco

package mujoco

/*
#cgo LDFLAGS: -lmujoco
#cgo noescape zr_rollout
#cgo nocallback zr_rollout
#cgo noescape mj_name2id
#cgo nocallback mj_name2id
#cgo noescape zr_reset
#cgo nocallback zr_reset
#cgo noescape zr_set_state
#cgo nocallback zr_set_state
#cgo noescape zr_obs
#cgo nocallback zr_obs
#cgo noescape zr_step
#cgo nocallback zr_step
#cgo noescape zr_raw_steps
#cgo nocallback zr_raw_steps
#cgo noescape zr_make_data
#cgo nocallback zr_make_data
#cgo nocallback zr_delete_data
#include <stdlib.h>
#include "zr.h"
*/
import "C"

import (
	"fmt"
	"math/rand/v2"
	"sync"
	"unsafe"
)

// linked is the library's version, read once at start-up; the error
// handlers are installed at the same time, before any other MuJoCo call.
var linked struct {
	version int
	str     string
}

func init() {
	C.zr_init()
	linked.version = int(C.zr_version())
	linked.str = C.GoString(C.zr_version_string())
}

// Version returns the linked library's mj_version() (e.g. 222) and
// mj_versionString() (e.g. "2.2.2"). Open fails unless the number is
// WantVersion and the headers this package was compiled against
// (mjVERSION_HEADER) agree.
func Version() (int, string, error) { return linked.version, linked.str, nil }

func checkVersion() error {
	if linked.version != WantVersion || C.mjVERSION_HEADER != WantVersion {
		return fmt.Errorf("%w: linked MuJoCo %d (%s), headers %d, want %d", ErrVersion, linked.version, linked.str, int(C.mjVERSION_HEADER), WantVersion)
	}
	return nil
}

// native is the cgo part of Model.
type native struct {
	m   *C.mjModel
	env C.zr_env
	dt  float64

	mu   sync.Mutex
	free []*C.mjData // idle mjData, one per past concurrent rollout
}

var models struct {
	mu     sync.Mutex // also serializes mj_loadXML
	byName map[string]*Model
}

// Open returns the compiled model of the named environment, compiling the
// embedded XML on first use (from memory, through MuJoCo's virtual file
// system). The model lives until the process ends.
func Open(name string) (*Model, error) {
	spec, err := Lookup(name)
	if err != nil {
		return nil, err
	}
	if err := checkVersion(); err != nil {
		return nil, err
	}
	models.mu.Lock()
	defer models.mu.Unlock()
	if m := models.byName[name]; m != nil {
		return m, nil
	}
	m, err := compile(spec)
	if err != nil {
		return nil, err
	}
	if models.byName == nil {
		models.byName = make(map[string]*Model)
	}
	models.byName[name] = m
	return m, nil
}

func compile(spec *Spec) (*Model, error) {
	cname := C.CString(spec.File)
	defer C.free(unsafe.Pointer(cname))
	cxml := C.CBytes(spec.XML)
	defer C.free(cxml)
	var errbuf [1000]C.char
	var st C.zr_status
	mm := C.zr_load(cname, (*C.char)(cxml), C.int(len(spec.XML)), &errbuf[0], C.int(len(errbuf)), &st)
	if mm == nil {
		msg := C.GoString(&errbuf[0])
		if st.code != C.ZR_OK {
			msg = C.GoString(&st.msg[0])
		}
		return nil, fmt.Errorf("%w: %s: %s does not compile: %s", ErrModel, spec.Name, spec.File, msg)
	}
	// A compiler warning is an error too: the model must compile cleanly.
	if w := C.GoString(&errbuf[0]); w != "" {
		C.zr_delete_model(mm)
		return nil, fmt.Errorf("%w: %s: %s: %s", ErrModel, spec.Name, spec.File, w)
	}
	if w := C.GoString(&st.msg[0]); w != "" {
		C.zr_delete_model(mm)
		return nil, fmt.Errorf("%w: %s: %s: warning while compiling: %s", ErrModel, spec.Name, spec.File, w)
	}
	nbody := spec.NBody
	if spec.ObsExtra == 0 && spec.ContactCost == 0 {
		nbody = int(mm.nbody) // not part of the semantics: unchecked
	}
	if int(mm.nq) != spec.NQ || int(mm.nv) != spec.NV || int(mm.nu) != spec.NU || int(mm.nbody) != nbody || spec.ObsDim() > C.ZR_MAXOBS || spec.NU > C.ZR_MAXACT {
		err := fmt.Errorf("%w: %s: nq, nv, nu, nbody = %d, %d, %d, %d, want %d, %d, %d, %d", ErrModel, spec.Name, mm.nq, mm.nv, mm.nu, mm.nbody, spec.NQ, spec.NV, spec.NU, nbody)
		C.zr_delete_model(mm)
		return nil, err
	}
	// gym: dt = model.opt.timestep·frame_skip.
	dt := float64(mm.opt.timestep) * float64(spec.FrameSkip)
	m := &Model{spec: spec}
	m.m = mm
	m.dt = dt
	m.env = C.zr_env{
		frame_skip:     C.int(spec.FrameSkip),
		obs_skip:       C.int(spec.ObsSkip),
		ctrl_cost:      C.double(spec.CtrlCost),
		dt:             C.double(dt),
		qvel_clip:      C.double(spec.QVelClip),
		obs_extra:      C.int(spec.ObsExtra),
		cfrc_clip:      C.double(spec.CfrcExtClip),
		progress:       C.int(spec.Progress),
		progress_scale: C.double(spec.ProgressScale),
		contact_cost:   C.double(spec.ContactCost),
		contact_max:    C.double(spec.ContactMax),
		alive:          C.double(spec.Alive),
	}
	if spec.AliveFirst {
		m.env.alive_first = 1
	}
	switch spec.ProgressDiv {
	case DivTimestep:
		m.env.progress_div = mm.opt.timestep
	default:
		m.env.progress_div = C.double(dt)
	}
	if spec.Progress == ProgressBodyX {
		cb := C.CString(spec.ProgressBody)
		id := C.mj_name2id(mm, C.mjOBJ_BODY, cb)
		C.free(unsafe.Pointer(cb))
		if id < 0 {
			C.zr_delete_model(mm)
			return nil, fmt.Errorf("%w: %s: no body %q to measure progress by", ErrModel, spec.Name, spec.ProgressBody)
		}
		m.env.progress_body = id
	}
	return m, nil
}

// Dt returns the environment step's duration, timestep·FrameSkip (0.04 for
// Swimmer, 0.05 for HalfCheetah).
func (m *Model) Dt() float64 { return m.dt }

// Timestep returns the model's mj_step timestep (opt.timestep).
func (m *Model) Timestep() float64 { return float64(m.m.opt.timestep) }

// getData takes an idle mjData or makes one.
func (m *Model) getData() (*C.mjData, error) {
	m.mu.Lock()
	if k := len(m.free); k > 0 {
		d := m.free[k-1]
		m.free = m.free[:k-1]
		m.mu.Unlock()
		return d, nil
	}
	m.mu.Unlock()
	var st C.zr_status
	d := C.zr_make_data(m.m, &st)
	if d == nil {
		return nil, fmt.Errorf("%w: %s: mj_makeData: %s", ErrSimulation, m.spec.Name, C.GoString(&st.msg[0]))
	}
	return d, nil
}

// putData returns an mjData to the free list. Data that ended in an error
// is deleted instead (a MuJoCo error may leave its stack unbalanced).
func (m *Model) putData(d *C.mjData, ok bool) {
	if !ok {
		C.zr_delete_data(d)
		return
	}
	m.mu.Lock()
	m.free = append(m.free, d)
	m.mu.Unlock()
}

// Rollout runs one episode of h environment steps under the linear policy
// a_t = W·s_t (W p×n row-major, unclipped) from a fresh reset drawn from
// rng (Spec.DrawReset) and returns the undiscounted return Σ_t r_t, with
// r_t = (x_{t+1} − x_t)/Dt − CtrlCost·‖a_t‖² and x = qpos[0].
//
// a_t[i] = ((0 + W[i,0]·s[0]) + W[i,1]·s[1]) + ... in that order, each
// product rounded (no fused multiply-add), then ‖a‖² = ((0 + a_0²) + a_1²)
// + ...; this is the same code, compiled once, for every call.
//
// If delta is non-nil (length p), the action at step t (0 ≤ t < h) is
// W·s_t + delta (added after the product) and s_t is copied into obs when
// obs is non-nil (length n). t is ignored when delta is nil.
//
// The whole episode is one cgo call. A MuJoCo warning (BADQACC, ...) or a
// NaN/huge state returns an ErrUnstable error naming the environment, the
// step and the warning; a MuJoCo error returns ErrSimulation. It is safe
// for concurrent use. It panics on wrong lengths or t out of range.
func (m *Model) Rollout(rng *rand.Rand, W []float64, h, t int, delta, obs []float64) (float64, error) {
	m.spec.checkRollout(W, h, t, delta, obs)
	d, err := m.getData()
	if err != nil {
		return 0, err
	}
	r, err := m.rollout(d, C.ZR_RESET_FAST, rng, W, h, onePerturbation(t, delta, obs))
	m.putData(d, err == nil)
	return r, err
}

// Episode is Rollout with the action perturbed at each of the listed steps
// (strictly increasing, in [0, h)) by delta[j·p:(j+1)·p], the observation
// before it copied to obs[j·n:(j+1)·n] when obs is not nil, and, when
// rewards is not nil (length h), each step's reward recorded: the episodes
// of ExAct's all-steps and reward-to-go variants. Rollout is Episode with
// one perturbed step; the arithmetic is the same.
func (m *Model) Episode(rng *rand.Rand, W []float64, h int, steps []int, delta, obs, rewards []float64) (float64, error) {
	m.spec.checkEpisode(W, h, steps, delta, obs, rewards)
	d, err := m.getData()
	if err != nil {
		return 0, err
	}
	r, err := m.rollout(d, C.ZR_RESET_FAST, rng, W, h, &episodeSteps{steps: steps, delta: delta, obs: obs, rewards: rewards})
	m.putData(d, err == nil)
	return r, err
}

// rollout runs an episode on d with the given reset mode (zr.h): Rollout
// uses ZR_RESET_FAST; the tests compare it with the others.
func (m *Model) rollout(d *C.mjData, mode C.int, rng *rand.Rand, W []float64, h int, pert *episodeSteps) (float64, error) {
	var noise [2 * C.ZR_MAXOBS]float64
	dqpos, dqvel := noise[:m.spec.NQ:m.spec.NQ], noise[m.spec.NQ:m.spec.NQ+m.spec.NV]
	m.spec.DrawReset(rng, dqpos, dqvel)
	var (
		nsteps       C.int
		csteps       *C.int
		cdelta, cobs *C.double
		crewards     *C.double
		stepsC       []C.int
	)
	if pert != nil {
		if len(pert.steps) > 0 {
			stepsC = make([]C.int, len(pert.steps))
			for i, t := range pert.steps {
				stepsC[i] = C.int(t)
			}
			nsteps, csteps = C.int(len(stepsC)), &stepsC[0]
			cdelta = (*C.double)(unsafe.Pointer(&pert.delta[0]))
			if pert.obs != nil {
				cobs = (*C.double)(unsafe.Pointer(&pert.obs[0]))
			}
		}
		if pert.rewards != nil {
			crewards = (*C.double)(unsafe.Pointer(&pert.rewards[0]))
		}
	}
	var st C.zr_status
	r := C.zr_rollout(m.m, d, &m.env, mode, (*C.double)(unsafe.Pointer(&W[0])), C.int(h),
		(*C.double)(unsafe.Pointer(&dqpos[0])), (*C.double)(unsafe.Pointer(&dqvel[0])),
		nsteps, csteps, cdelta, cobs, crewards, &st)
	if st.code != C.ZR_OK {
		return 0, m.statusErr(st)
	}
	return float64(r), nil
}

var warningNames = [...]string{
	"mjWARN_INERTIA", "mjWARN_CONTACTFULL", "mjWARN_CNSTRFULL", "mjWARN_VGEOMFULL",
	"mjWARN_BADQPOS", "mjWARN_BADQVEL", "mjWARN_BADQACC", "mjWARN_BADCTRL",
}

// statusErr turns a failed zr_status into an error naming the environment,
// the step and the cause.
func (m *Model) statusErr(st C.zr_status) error {
	where := "at reset"
	if st.step >= 0 {
		where = fmt.Sprintf("at step %d", int(st.step))
		if st.substep >= 0 {
			where += fmt.Sprintf(" (mj_step %d of %d)", int(st.substep)+1, m.spec.FrameSkip)
		}
	}
	msg := C.GoString(&st.msg[0])
	switch st.code {
	case C.ZR_WARNING:
		name := fmt.Sprintf("warning %d", int(st.warning))
		if w := int(st.warning); w >= 0 && w < len(warningNames) {
			name = warningNames[w]
		}
		return fmt.Errorf("%w: %s %s: %s (info %d): %s", ErrUnstable, m.spec.Name, where, name, int(st.info), msg)
	case C.ZR_NONFINITE:
		return fmt.Errorf("%w: %s %s: bad state %s", ErrUnstable, m.spec.Name, where, msg)
	case C.ZR_BADARG:
		panic(fmt.Sprintf("mujoco: %s: %s", m.spec.Name, msg))
	default:
		return fmt.Errorf("%w: %s %s: %s", ErrSimulation, m.spec.Name, where, msg)
	}
}

// Sim is one simulation state (its own mjData) of a Model, stepped by hand:
// for tests, diagnostics and hand-made controllers. Reset and Step run the
// same C code as Rollout. A Sim is not safe for concurrent use.
type Sim struct {
	m    *Model
	d    *C.mjData
	step int
}

// NewSim returns a Sim at the model's initial state: mj_resetData
// (qpos = qpos0, zero velocity), then mj_forward. Close releases it.
func (m *Model) NewSim() (*Sim, error) {
	d, err := m.getData()
	if err != nil {
		return nil, err
	}
	s := &Sim{m: m, d: d}
	var zero [2 * C.ZR_MAXOBS]float64
	var st C.zr_status
	C.zr_reset(m.m, d, C.ZR_RESET_FULL, (*C.double)(unsafe.Pointer(&zero[0])), (*C.double)(unsafe.Pointer(&zero[m.spec.NQ])), &st)
	if st.code != C.ZR_OK {
		s.Close()
		return nil, m.statusErr(st)
	}
	return s, nil
}

// QPos0 returns a copy of the model's reference configuration qpos0 (gym's
// init_qpos; init_qvel is zero).
func (m *Model) QPos0() []float64 {
	return append([]float64(nil), unsafe.Slice((*float64)(unsafe.Pointer(m.m.qpos0)), m.spec.NQ)...)
}

// Close deletes the Sim's mjData; the Sim must not be used afterwards.
func (s *Sim) Close() {
	if s.d != nil {
		s.m.putData(s.d, false)
		s.d = nil
	}
}

// Reset draws a reset from rng exactly as Rollout does (Spec.DrawReset)
// and applies it: mj_resetData, qpos = qpos0 + dqpos, qvel = 0 + dqvel,
// mj_forward. The step counter restarts at 0.
func (s *Sim) Reset(rng *rand.Rand) error {
	spec := s.m.spec
	dqpos, dqvel := make([]float64, spec.NQ), make([]float64, spec.NV)
	spec.DrawReset(rng, dqpos, dqvel)
	var st C.zr_status
	C.zr_reset(s.m.m, s.d, C.ZR_RESET_FAST, (*C.double)(unsafe.Pointer(&dqpos[0])), (*C.double)(unsafe.Pointer(&dqvel[0])), &st)
	s.step = 0
	if st.code != C.ZR_OK {
		return s.m.statusErr(st)
	}
	return nil
}

// SetState sets qpos (length NQ) and qvel (length NV), clears MuJoCo's
// warning counters, then runs mj_forward (gym's set_state). The step
// counter restarts at 0.
func (s *Sim) SetState(qpos, qvel []float64) error {
	spec := s.m.spec
	if len(qpos) != spec.NQ || len(qvel) != spec.NV {
		panic(fmt.Sprintf("mujoco: SetState(%s): lengths %d, %d, want %d, %d", spec.Name, len(qpos), len(qvel), spec.NQ, spec.NV))
	}
	var st C.zr_status
	C.zr_set_state(s.m.m, s.d, (*C.double)(unsafe.Pointer(&qpos[0])), (*C.double)(unsafe.Pointer(&qvel[0])), &st)
	s.step = 0
	if st.code != C.ZR_OK {
		return s.m.statusErr(st)
	}
	return nil
}

// QPos returns a copy of qpos.
func (s *Sim) QPos() []float64 {
	return append([]float64(nil), unsafe.Slice((*float64)(unsafe.Pointer(s.d.qpos)), s.m.spec.NQ)...)
}

// QVel returns a copy of qvel.
func (s *Sim) QVel() []float64 {
	return append([]float64(nil), unsafe.Slice((*float64)(unsafe.Pointer(s.d.qvel)), s.m.spec.NV)...)
}

// Obs returns the observation qpos[ObsSkip:] ‖ qvel (zr_obs, as Rollout
// computes it).
func (s *Sim) Obs() []float64 {
	o := make([]float64, s.m.spec.ObsDim())
	C.zr_obs(s.m.m, s.d, &s.m.env, (*C.double)(unsafe.Pointer(&o[0])))
	return o
}

// Step runs one environment step (FrameSkip mj_step calls) with the
// unclipped action a (length p) and returns its reward, as Rollout does.
func (s *Sim) Step(a []float64) (float64, error) {
	if len(a) != s.m.spec.NU {
		panic(fmt.Sprintf("mujoco: Step(%s): %d actions, want %d", s.m.spec.Name, len(a), s.m.spec.NU))
	}
	var st C.zr_status
	r := C.zr_step(s.m.m, s.d, &s.m.env, (*C.double)(unsafe.Pointer(&a[0])), C.int(s.step), &st)
	s.step++
	if st.code != C.ZR_OK {
		return 0, s.m.statusErr(st)
	}
	return float64(r), nil
}

// Arrays of mjModel and mjData a Sim reads for the tests of the reward and
// observation terms (copies, in MuJoCo's layout).
type simArray int

const (
	arrBodyMass     simArray = iota // body_mass: nbody
	arrXPos                         // xpos: 3 per body
	arrXIPos                        // xipos: 3 per body
	arrCInert                       // cinert: 10 per body
	arrCVel                         // cvel: 6 per body
	arrQfrcActuator                 // qfrc_actuator: nv
	arrCfrcExt                      // cfrc_ext: 6 per body
)

// array returns a copy of one of those arrays.
func (s *Sim) array(a simArray) []float64 {
	m, d := s.m.m, s.d
	nb, nv := int(m.nbody), int(m.nv)
	var p *C.mjtNum
	var n int
	switch a {
	case arrBodyMass:
		p, n = m.body_mass, nb
	case arrXPos:
		p, n = d.xpos, 3*nb
	case arrXIPos:
		p, n = d.xipos, 3*nb
	case arrCInert:
		p, n = d.cinert, 10*nb
	case arrCVel:
		p, n = d.cvel, 6*nb
	case arrQfrcActuator:
		p, n = d.qfrc_actuator, nv
	case arrCfrcExt:
		p, n = d.cfrc_ext, 6*nb
	}
	return append([]float64(nil), unsafe.Slice((*float64)(unsafe.Pointer(p)), n)...)
}

// rawSteps calls mj_step n times with the current controls: the reference
// rate of the benchmarks.
func (s *Sim) rawSteps(n int) error {
	var st C.zr_status
	C.zr_raw_steps(s.m.m, s.d, C.int(n), &st)
	if st.code != C.ZR_OK {
		return s.m.statusErr(st)
	}
	return nil
}

// freshRollout is Rollout on an mjData made for the episode (mj_makeData,
// which runs mj_resetData) and deleted afterwards, reset with the given
// mode: the reference of the tests and the alternative to the free list
// the benchmarks measure.
func (m *Model) freshRollout(mode C.int, rng *rand.Rand, W []float64, h, t int, delta, obs []float64) (float64, error) {
	m.spec.checkRollout(W, h, t, delta, obs)
	var st C.zr_status
	d := C.zr_make_data(m.m, &st)
	if d == nil {
		return 0, m.statusErr(st)
	}
	defer C.zr_delete_data(d)
	return m.rollout(d, mode, rng, W, h, onePerturbation(t, delta, obs))
}

// Reset modes for the tests (cgo constants are not visible there).
const (
	resetFast   = C.ZR_RESET_FAST
	resetFull   = C.ZR_RESET_FULL
	resetPoison = C.ZR_RESET_POISON // | poison byte << 8
)
