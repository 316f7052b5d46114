// Package pulls says how far a node got with pulling a set of images, as
// the API server shows it: the node's status.images and the pre-pull pods
// (functions/prepull) pinned to it. Pre-pull follows its pods with it;
// compute-spec reads it to plan a pod only once its node has the images.
//
// It is pure: it reads objects it is given and does no I/O.
package pulls
