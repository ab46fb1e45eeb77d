// Package linreg is the linear-regression-with-partial-information problem of
// spec §3.1 (Vemula, Sun & Bagnell 2019, experiment 2).
//
// An Instance is drawn once per seed by Generate and is the artifact of the
// generate stage (MarshalBinary). Batches, evaluation batches and initial
// weights are then drawn from separate named streams by the caller.
//
// Conventions:
//   - d is the input dimension (Instance.D) and Dim = d+1 (Instance.Dim()) is
//     the length of a feature vector and of w, with the bias at coordinate 0.
//     (The spec calls d+1 "D"; the names here follow the Go API.)
//   - A feature row is x = z/√d with z ~ N(0, C), then x[0] = 1, so
//     Σ_x = E[xxᵀ] = [[1, 0], [0, C[1:,1:]/d]] (see SigmaX).
//   - The label noise ξ ~ N(0, 0.001²) is ONE scalar per batch (spec §6.15).
//   - Losses are ½·MSE (spec §3.1.5); PopulationLoss is the exact expected
//     loss ½(w−w*)ᵀΣ_x(w−w*) + ½·10⁻⁶ (spec §6.14).
//
// Random draw orders are part of the results and documented on each function:
// Generate draws w* then M; Batch draws ε (row-major) then ξ; InitialWeights
// draws Dim normals. All draws use rand.Rand.NormFloat64.
//
// Snapshots: an evaluator receives the parameters of a method as a flat
// snapshot in one of two layouts (LayoutRaw, LayoutNormalized); EvalSnapshot
// and PopulationLossSnapshot evaluate both.
//
// Dimension mismatches in numeric calls are programmer errors and panic;
// decoding and snapshot validation return errors (see errors.go).
package linreg
