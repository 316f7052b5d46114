// Package signature is compute-spec's signature gate: before anything is
// planned, a workload that requires it (inplace.dev/signature-key, or
// inplace.dev/signature-identity and -issuer, or config-inplace's
// defaults) gets the pushed digest only when a Sigstore bundle attached to
// that digest verifies against its key or its keyless identity.
//
// Storage: the Sigstore bundle (media type
// application/vnd.dev.sigstore.bundle.v0.3+json) attached to the image as
// an OCI referrer — what cosign v2.4+ writes with --new-bundle-format and
// cosign v3 by default — found through the registry's referrers API or,
// where the registry has none, the referrers tag schema
// (go-containerregistry handles both). Cosign's legacy
// sha256-<digest>.sig tags are not read.
//
// Verification is sigstore-go's (verify.Verifier): with a public key (from
// a Secret's cosign.pub, cosign's convention), or keyless against a
// trusted root read from a file (the certificate's identity and issuer
// must match). The bundle must bind the digest: a DSSE in-toto statement
// whose subject is the digest and whose predicate type is cosign's
// signature predicate, or a message signature over the manifest. It fails
// closed: no bundle, or none that verifies, refuses the push with the
// reasons.
package signature
