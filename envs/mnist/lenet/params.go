package lenet

import (
	"fmt"
	"math"
	"math/rand/v2"
)

// Sizes of the network (spec §2.2).
const (
	// InputH and InputW are the image height and width; an image is one
	// channel of InputH×InputW pixels, row-major.
	InputH, InputW = 28, 28
	// InputSize is the number of pixels of one image.
	InputSize = InputH * InputW
	// Classes is the number of outputs (digits 0–9).
	Classes = 10
	// Hidden is the width of fc1.
	Hidden = 50
	// NumParams is d, the length of the flat parameter vector.
	NumParams = 21840
	// DropoutP is the drop probability of the dropout after fc1 (train mode
	// only); kept units are scaled by 1/(1−DropoutP) = 2.
	DropoutP = 0.5
)

// Offsets of the tensors in the flat parameter vector, in the order of
// spec §2.2 (the order of PyTorch's parameters()).
const (
	OffConv1W = 0                    // conv1.weight (10,1,5,5): 250
	OffConv1B = OffConv1W + 10*25    // conv1.bias (10): 10
	OffConv2W = OffConv1B + 10       // conv2.weight (20,10,5,5): 5000
	OffConv2B = OffConv2W + 20*250   // conv2.bias (20): 20
	OffFC1W   = OffConv2B + 20       // fc1.weight (50,320): 16000
	OffFC1B   = OffFC1W + Hidden*320 // fc1.bias (50): 50
	OffFC2W   = OffFC1B + Hidden     // fc2.weight (10,50): 500
	OffFC2B   = OffFC2W + Classes*Hidden
	end       = OffFC2B + Classes
)

// A compile-time check that the offsets add up to NumParams.
var _ = [1]struct{}{}[end-NumParams]

// Tensor describes one parameter tensor: its PyTorch name and shape, its
// place in the flat vector, and the fan-in that sets its initialization
// range.
type Tensor struct {
	// Name is the PyTorch state_dict name, e.g. "conv1.weight".
	Name string
	// Offset is the index of the tensor's first element in the flat vector.
	Offset int
	// Shape is the PyTorch shape: (out, in, kh, kw) for a conv weight,
	// (out, in) for a linear weight, (out) for a bias. Elements are stored
	// row-major in this shape.
	Shape []int
	// FanIn is in·kh·kw (conv) or in (linear); the default initialization
	// draws from U(−k, k) with k = 1/√FanIn for weight and bias alike.
	FanIn int
}

// Len returns the number of elements.
func (t Tensor) Len() int {
	n := 1
	for _, s := range t.Shape {
		n *= s
	}
	return n
}

// Bound returns k = 1/√FanIn, the half-width of the initialization range.
func (t Tensor) Bound() float64 { return 1 / math.Sqrt(float64(t.FanIn)) }

// Of returns the tensor's elements within the flat vector theta (a
// sub-slice, not a copy). It panics if len(theta) != NumParams.
func (t Tensor) Of(theta []float64) []float64 {
	checkParams("Tensor.Of", theta)
	return theta[t.Offset : t.Offset+t.Len() : t.Offset+t.Len()]
}

// Tensors returns the eight parameter tensors in flat-vector order.
func Tensors() []Tensor {
	return []Tensor{
		{"conv1.weight", OffConv1W, []int{10, 1, 5, 5}, 25},
		{"conv1.bias", OffConv1B, []int{10}, 25},
		{"conv2.weight", OffConv2W, []int{20, 10, 5, 5}, 250},
		{"conv2.bias", OffConv2B, []int{20}, 250},
		{"fc1.weight", OffFC1W, []int{Hidden, 320}, 320},
		{"fc1.bias", OffFC1B, []int{Hidden}, 320},
		{"fc2.weight", OffFC2W, []int{Classes, Hidden}, Hidden},
		{"fc2.bias", OffFC2B, []int{Classes}, Hidden},
	}
}

// Init fills theta (length NumParams) with PyTorch v0.3's default
// initialization (spec §1): every element of every tensor is drawn from
// U(−k, k), k = 1/√fan_in, as PyTorch's uniform_(−k, k) computes it:
// θ = u·(k+k) − k with u = rng.Float64() ∈ [0, 1).
//
// Draw order: one rng.Float64() per element, in flat-vector order (conv1.weight
// row-major, conv1.bias, conv2.weight, ..., fc2.bias), i.e. exactly NumParams
// draws with element j taking the j-th draw. It panics if
// len(theta) != NumParams.
func Init(theta []float64, rng *rand.Rand) {
	checkParams("Init", theta)
	for _, t := range Tensors() {
		k := t.Bound()
		for j := range t.Of(theta) {
			theta[t.Offset+j] = rng.Float64()*(k+k) - k
		}
	}
}

// NewParams returns a fresh parameter vector filled by Init.
func NewParams(rng *rand.Rand) []float64 {
	theta := make([]float64, NumParams)
	Init(theta, rng)
	return theta
}

func checkParams(op string, theta []float64) {
	if len(theta) != NumParams {
		panic(fmt.Sprintf("lenet: %s: len(theta) = %d, want %d", op, len(theta), NumParams))
	}
}
