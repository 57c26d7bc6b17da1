# Every image of Kiln in one bake file: the shared data base, one target per stage on it, the
# CPU trainer and the Ascend trainer. `docker buildx bake -f .github/docker-bake.hcl` builds the
# default group; .github/workflows/images.yml builds one target per matrix job with the GHA cache.
# Every image is IMAGE_PREFIX/<target>:TAG, the names `make images` gives and the manifests pull
# (kiln/<target>; `make k8s-images` points an overlay at another prefix and tag).

variable "BASE_IMAGE" { default = "python:3.11-slim-bookworm" }
variable "CANN_IMAGE" { default = "ascendai/cann:9.0.1-910b-ubuntu22.04-py3.11" }
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

# Built per platform on a native runner (the MindSpore wheel differs per architecture).
target "train-ascend" {
  inherits   = ["_common"]
  dockerfile = "Dockerfile.ascend"
  args       = { CANN_IMAGE = CANN_IMAGE }
  tags       = ["${IMAGE_PREFIX}/train-ascend:${TAG}"]
}
