// Package actionrs is Algorithm 2 of the paper (random search in action
// space): each round predicts θᵀs + δe with e uniform on {−1, +1},
// receives c = (θᵀs + δe − a)² and steps θ ← θ − α·(c·e/δ)·s (the policy's
// Jacobian is s), then projects onto Θ. α and δ follow Theorem 1 for the
// horizon T: δ = T^(−1/4)·√(C_θ·(C² + 1)·C_s/(2C)) and
// α = C_θ·δ / ((C² + 1)·C_s·√T).
package actionrs
