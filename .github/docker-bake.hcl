# Every image of Kiln in one bake file: the shared data base, one target per stage on it,
# and the CPU trainer. `docker buildx bake -f .github/docker-bake.hcl` builds them all;
# .github/workflows/images.yml builds one target per matrix job with the GHA cache.

variable "BASE_IMAGE" { default = "python:3.11-slim-bookworm" }
variable "IMAGE_PREFIX" { default = "kiln" }
variable "TAG" { default = "latest" }
variable "REVISION" { default = "unknown" }
variable "VERSION" { default = "0.1.0" }
variable "SOURCE" { default = "unknown" }

group "default" {
  targets = ["ingest", "clean", "dedup", "mix", "tokenize", "train-cpu"]
}

target "_common" {
  context = "."
  args = {
    BASE_IMAGE = BASE_IMAGE
    REVISION   = REVISION
    VERSION    = VERSION
    SOURCE     = SOURCE
  }
}

target "base" {
  inherits   = ["_common"]
  dockerfile = "stages/base/Dockerfile"
  tags       = ["${IMAGE_PREFIX}/base:${TAG}"]
}

target "stage" {
  name       = stage
  matrix     = { stage = ["ingest", "clean", "dedup", "mix", "tokenize"] }
  inherits   = ["_common"]
  dockerfile = "stages/${stage}/Dockerfile"
  contexts   = { kiln-base = "target:base" }
  args       = { KILN_BASE = "kiln-base" }
  tags       = ["${IMAGE_PREFIX}/${stage}:${TAG}"]
}

target "train-cpu" {
  inherits   = ["_common"]
  dockerfile = "stages/train/Dockerfile"
  tags       = ["${IMAGE_PREFIX}/train-cpu:${TAG}"]
}
