package lenet

import (
	"math/rand/v2"
)

// refForward is a direct transcription of spec §2.2 with plain loops (no
// im2col, no BLAS): the reference Forward is compared against. In Train
// mode it draws the dropout masks from rng as Forward documents.
func refForward(theta, x []float64, mode Mode, rng *rand.Rand) []float64 {
	n := len(x) / InputSize
	t := Tensors()
	w1, b1 := t[0].Of(theta), t[1].Of(theta)
	w2, b2 := t[2].Of(theta), t[3].Of(theta)
	w3, b3 := t[4].Of(theta), t[5].Of(theta)
	w4, b4 := t[6].Of(theta), t[7].Of(theta)
	out := make([]float64, 0, n*Classes)
	var hidden [][]float64
	for b := 0; b < n; b++ {
		img := x[b*InputSize : (b+1)*InputSize]
		c1 := refConv(img, 1, 28, w1, b1, 10)
		a1 := refReLU(refPool(c1, 10, 24))
		c2 := refConv(a1, 10, 12, w2, b2, 20)
		a2 := refReLU(refPool(c2, 20, 8)) // (c, y, x) = the flatten order
		h := refReLU(refLinear(a2, w3, b3, Hidden))
		hidden = append(hidden, h)
	}
	if mode == Train {
		for _, h := range hidden {
			for j := range h {
				if rng.Float64() < 1-DropoutP {
					h[j] *= 1 / (1 - DropoutP)
				} else {
					h[j] = 0
				}
			}
		}
	}
	for _, h := range hidden {
		out = append(out, refLinear(h, w4, b4, Classes)...)
	}
	return out
}

// refConv is a valid 5×5 convolution (cross-correlation, as PyTorch) of the
// cin×side×side map in with weights (cout, cin, 5, 5) and bias.
func refConv(in []float64, cin, side int, w, bias []float64, cout int) []float64 {
	o := side - 4
	out := make([]float64, cout*o*o)
	for co := 0; co < cout; co++ {
		for y := 0; y < o; y++ {
			for x := 0; x < o; x++ {
				s := bias[co]
				for ci := 0; ci < cin; ci++ {
					for ki := 0; ki < 5; ki++ {
						for kj := 0; kj < 5; kj++ {
							s += w[((co*cin+ci)*5+ki)*5+kj] * in[(ci*side+y+ki)*side+x+kj]
						}
					}
				}
				out[(co*o+y)*o+x] = s
			}
		}
	}
	return out
}

// refPool is a 2×2, stride-2 max-pool of ch channels of side×side.
func refPool(in []float64, ch, side int) []float64 {
	h := side / 2
	out := make([]float64, ch*h*h)
	for c := 0; c < ch; c++ {
		for y := 0; y < h; y++ {
			for x := 0; x < h; x++ {
				m := in[(c*side+2*y)*side+2*x]
				for _, v := range []float64{in[(c*side+2*y)*side+2*x+1], in[(c*side+2*y+1)*side+2*x], in[(c*side+2*y+1)*side+2*x+1]} {
					if v > m {
						m = v
					}
				}
				out[(c*h+y)*h+x] = m
			}
		}
	}
	return out
}

func refReLU(v []float64) []float64 {
	for i, x := range v {
		if x < 0 {
			v[i] = 0
		}
	}
	return v
}

// refLinear is W·in + bias with W (out × len(in)) row-major.
func refLinear(in, w, bias []float64, out int) []float64 {
	r := make([]float64, out)
	for o := range r {
		s := bias[o]
		for i, v := range in {
			s += w[o*len(in)+i] * v
		}
		r[o] = s
	}
	return r
}

// testImages returns n images of uniform pixels in [0, scale).
func testImages(rng *rand.Rand, n int, scale float64) []float64 {
	x := make([]float64, n*InputSize)
	for i := range x {
		x[i] = rng.Float64() * scale
	}
	return x
}

// pixelImages returns n images of integer pixels 0–255, about 80% of them
// zero like MNIST's background.
func pixelImages(rng *rand.Rand, n int) []float64 {
	x := make([]float64, n*InputSize)
	for i := range x {
		if rng.IntN(5) == 0 {
			x[i] = float64(rng.IntN(256))
		}
	}
	return x
}

func newRand(seed uint64) *rand.Rand { return rand.New(rand.NewPCG(seed, 0x6c656e6574)) }
