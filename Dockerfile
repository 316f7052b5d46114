# The one image of inplace, built from cmd/inplace:
#   plain mode    inplace run --functions=<name>   (config/plain)
#   Knative mode  inplace function                  (config/knative; INPLACE_FUNCTIONS names the function)
# The manifests refer to it as ghcr.io/inplace-dev/inplace; set the tag an
# overlay deploys with its `images:` entry.
#   docker build -t ghcr.io/inplace-dev/inplace:dev --build-arg VERSION=dev .
FROM golang:1.26 AS build
WORKDIR /src
COPY go.mod go.sum ./
RUN go mod download
COPY . .
ARG VERSION=dev
RUN CGO_ENABLED=0 go build -trimpath \
      -ldflags "-s -w -X github.com/inplace-dev/inplace/cmd/inplace/cli.version=${VERSION}" \
      -o /out/inplace ./cmd/inplace

FROM gcr.io/distroless/static-debian12:nonroot
COPY --from=build /out/inplace /inplace
USER 65532:65532
ENTRYPOINT ["/inplace"]
