// Package imageref turns the many spellings of an image reference into one
// canonical form, so that "nginx", "docker.io/library/nginx" and
// "index.docker.io/library/nginx:1.25" are known to be the same repository.
//
// It is pure: no registry is contacted. Parsing follows the Docker
// reference grammar (github.com/distribution/reference).
package imageref
