// Package keychain gives registry credentials from Kubernetes pull secrets:
// the docker credentials of the secrets a pod names, resolved per registry
// host the way the kubelet would, for the poller's and the signature
// verifier's registry reads. It reads only the Secrets it is given by name;
// it never runs credential helpers and never watches Secrets.
package keychain
