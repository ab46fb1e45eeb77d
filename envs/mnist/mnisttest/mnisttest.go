// Package mnisttest provides test helpers for the methods that train on
// MNIST instances (algos/sgd, algos/reinforce, algos/ars):
// small synthetic instances that a LeNet learns in a few iterations.
package mnisttest

import (
	"math/rand/v2"

	"zorepro/envs/mnist"
)

// TwoClasses returns an instance of nTrain training and nTest test images of
// two easily separable classes on sparse background noise: label 3 is a
// bright 6×6 block in the upper left quadrant, label 7 one in the lower
// right, each shifted by up to 4 pixels. The images are drawn from
// rand.NewPCG(seed, 2), training images first. The instance carries no
// digests.
func TwoClasses(seed uint64, nTrain, nTest int) *mnist.Instance {
	rng := rand.New(rand.NewPCG(seed, 2))
	gen := func(n int) ([]uint8, []uint8) {
		im, lab := make([]uint8, n*mnist.Pixels), make([]uint8, n)
		for i := range n {
			img := im[i*mnist.Pixels : (i+1)*mnist.Pixels]
			for j := range img {
				if rng.IntN(10) == 0 {
					img[j] = uint8(rng.IntN(80))
				}
			}
			r0, c0 := 3+rng.IntN(5), 3+rng.IntN(5)
			lab[i] = 3
			if rng.IntN(2) == 0 {
				lab[i] = 7
				r0, c0 = r0+12, c0+12
			}
			for r := r0; r < r0+6; r++ {
				for c := c0; c < c0+6; c++ {
					img[r*mnist.Cols+c] = uint8(180 + rng.IntN(76))
				}
			}
		}
		return im, lab
	}
	in := &mnist.Instance{}
	in.TrainImages, in.TrainLabels = gen(nTrain)
	in.TestImages, in.TestLabels = gen(nTest)
	return in
}
