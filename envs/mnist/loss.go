package mnist

import (
	"fmt"

	"zorepro/envs/mnist/lenet"
	"zorepro/pipeline/stream"
)

// CrossEntropyLoss is LeNet's minibatch cross-entropy on raw pixels, the
// loss SGD minimizes (algos/sgd, spec §2.4): it owns a network workspace and
// the scratch of batches of a fixed size.
type CrossEntropyLoss struct {
	in  *Instance
	net *lenet.Net
	idx []int
	x   []float64
	y   []int
	dl  []float64
}

// NewLoss returns the cross-entropy of batches of n ≥ 1 training images, or
// an ErrNoTraining error for an instance without training images. It panics
// if n < 1.
func (in *Instance) NewLoss(n int) (*CrossEntropyLoss, error) {
	if n < 1 {
		panic(fmt.Sprintf("mnist: NewLoss: batch of %d images", n))
	}
	if err := in.checkTraining(); err != nil {
		return nil, err
	}
	return &CrossEntropyLoss{
		in: in, net: lenet.New(n), idx: make([]int, n), x: make([]float64, n*Pixels), y: make([]int, n),
		dl: make([]float64, n*lenet.Classes),
	}, nil
}

// checkTraining reports an instance a method cannot draw training batches
// from.
func (in *Instance) checkTraining() error {
	if in == nil || in.NTrain() < 1 || len(in.TrainImages) != in.NTrain()*Pixels {
		return ErrNoTraining
	}
	return nil
}

// Gradient draws iteration it's batch (DrawTrainBatch with "batch"[it]: raw
// 0–255 pixels, no normalization, spec §6 item 11), runs the network in
// train mode at theta with the dropout masks of "dropout"[it], and writes
// into g the gradient (lenet.Net.Backward) of the mean cross-entropy
// (lenet.CrossEntropy), which it returns.
func (l *CrossEntropyLoss) Gradient(g, theta []float64, src stream.Source, it int64) (float64, error) {
	l.in.DrawTrainBatch(src.Rand("batch", uint64(it)), l.idx, l.x, l.y)
	logits := l.net.Forward(theta, l.x, lenet.Train, src.Rand("dropout", uint64(it)))
	loss := lenet.CrossEntropy(logits, l.y, l.dl)
	l.net.Backward(l.dl, g)
	return loss, nil
}
