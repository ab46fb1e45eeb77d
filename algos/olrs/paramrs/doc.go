// Package paramrs is Algorithm 1 of the paper (random search in parameter
// space, BGD of Flaxman et al.): each round plays θ + δu with u uniform on
// the unit sphere of R^b, receives c = ((θ+δu)ᵀs − a)² and steps
// θ ← θ − α·(c·b/δ)·u, then projects onto Θ. α and δ follow Theorem 1 for
// the horizon T: δ = T^(−1/4)·√(C_θ·b·(C² + C_s²)/(2L)) and
// α = C_θ·δ / (b·(C² + C_s²)·√T).
package paramrs
