// Package prom runs a real Prometheus server (bin/prometheus, built by
// make bin from test/tools/prometheus) for tests of canary analysis: on
// loopback, storage in a temporary directory, scraping the targets the test
// (or the test world) gives it through a file_sd target file it rewrites,
// every ScrapeInterval. Its API (no web UI) is at URL.
package prom
