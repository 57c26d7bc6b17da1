# Kiln: `make data` runs the data pipeline, `make test` runs the tests.
# Both create .venv on first use and reinstall only when requirements/*.lock change.

PYTHON   ?= python3
VENV     ?= .venv
DATA_DIR ?= data
INPUT    ?=
CONFIG   ?=
ARGS     ?=
DEMO_DOCS ?=
EVAL_SETS ?=
PYTEST_ARGS ?=
NPROC    ?= 1
TRAIN_CONFIG ?= configs/train-cpu.yaml

# A venv is made by python -m venv, then uv (pinned in requirements/bootstrap.lock) installs lock files into
# it, every file checked against the lock's hashes, and Kiln itself (editable) beside them; it is rebuilt
# when its lock files or this recipe change. Installed modules are compiled to bytecode here, once: a Ray
# start imports hundreds of them in each of its processes, and compiling them in every process (as under
# PYTHONDONTWRITEBYTECODE) doubles the start's time.
UV_INSTALL = $(1)/bin/python -m pip install -q --no-deps --require-hashes -r requirements/bootstrap.lock && \
             $(1)/bin/uv pip install -q --python $(1)/bin/python --no-deps --require-hashes $(2) && \
             $(1)/bin/uv pip install -q --python $(1)/bin/python --no-deps -e . && \
             $(1)/bin/python -W ignore::SyntaxWarning -m compileall -q -j 0 $(1)/lib

PY       := $(VENV)/bin/python
LOCKS    := requirements/bootstrap.lock requirements/data.lock requirements/nodeps.in requirements/dev.lock
LOCK_ID  := $(shell { cat $(LOCKS) pyproject.toml; echo '$(value UV_INSTALL)'; } 2>/dev/null | sha256sum | cut -c1-16)
STAMP    := $(VENV)/.installed-$(LOCK_ID)

# The trainer's environment: MindSpore with numpy < 2 and no pyarrow, so it lives apart from .venv.
TRAIN_VENV     ?= .venv-train
TRAIN_PY       := $(TRAIN_VENV)/bin/python
TRAIN_LOCK_ID  := $(shell { cat requirements/bootstrap.lock requirements/train.lock pyproject.toml; echo '$(value UV_INSTALL)'; } 2>/dev/null | sha256sum | cut -c1-16)
TRAIN_STAMP    := $(TRAIN_VENV)/.installed-$(TRAIN_LOCK_ID)

# make test runs each suite on TEST_WORKERS pytest-xdist workers (the tests wait on Ray and child processes
# for much of their time, so two workers finish sooner than one on two cores).
# The modules that start `ray start` nodes run after the others, in one process: their nodes take the machine's
# current-cluster file, and two clusters starting at once on one machine have left a worker node unjoined.
# Where PYTEST_ARGS leaves a part with no test to run (pytest's exit code 5), that part passes.
TEST_WORKERS ?= 2
RAY_NODE_MODULES := tests/test_ray_cluster.py tests/test_ray_autoscale.py
DATA_TESTS  = $(PY) -m pytest -n $(TEST_WORKERS) --dist loadgroup --ignore=tests/containers --ignore=tests/faults \
              $(addprefix --ignore=,$(K8S_POD_TESTS) $(RAY_NODE_MODULES))
RAY_NODE_TESTS = $(PY) -m pytest $(RAY_NODE_MODULES)
NONE_SELECTED_OK = $(if $(PYTEST_ARGS),|| test $$? -eq 5)
TRAIN_TESTS = PATH=$(abspath $(TRAIN_VENV))/bin:$$PATH $(TRAIN_PY) -m pytest -n $(TEST_WORKERS) --dist loadgroup \
              --noconftest tests/test_train*.py

# Container images: one per stage on a shared dependency base (stages/base/Dockerfile).
DOCKER      ?= docker
# Compose v2 (`docker compose`) where the Docker CLI has it, else v1 (`docker-compose`).
ifndef COMPOSE
COMPOSE     := $(shell $(DOCKER) compose version >/dev/null 2>&1 && echo "$(DOCKER) compose" || echo docker-compose)
endif
BASE_IMAGE  ?= python:3.11-slim-bookworm
IMAGE_PREFIX ?= kiln
# Seven hex digits, as CI's tags (.github/workflows/images.yml): one commit, one tag, here and in the registry.
REVISION    := $(shell git rev-parse --short=7 HEAD 2>/dev/null || echo dev)
VERSION     := $(shell sed -n 's/^version = "\(.*\)"/\1/p' pyproject.toml)
# pip inside a build sees the host's CA bundle as a build secret (never a layer).
CA_BUNDLE   ?= $(wildcard /etc/ssl/certs/ca-certificates.crt)
comma       := ,
BUILD_FLAGS ?= --network host $(if $(CA_BUNDLE),--secret id=pipca$(comma)src=$(CA_BUNDLE))
STAGE_IMAGES := ingest clean dedup mix tokenize
# Every image the manifests pull, each IMAGE_PREFIX/<name> (kiln/<name> in k8s/). make images tags each
# IMAGE_PREFIX/<name>:TAG and :latest; make k8s-images points the manifests at IMAGE_PREFIX/<name>:TAG.
DEPLOY_IMAGES := $(STAGE_IMAGES) train-cpu train-ascend
TAG         ?= $(REVISION)
COMPOSE_CHAIN := init demo ingest clean dedup mix tokenize train-cpu
LABEL_ARGS  := --build-arg VERSION=$(VERSION) --build-arg REVISION=$(REVISION) \
               --build-arg SOURCE=$(shell git remote get-url origin 2>/dev/null || echo unknown)
BUILD       := DOCKER_BUILDKIT=1 $(DOCKER) build $(BUILD_FLAGS) $(LABEL_ARGS)

# Kubernetes (k8s/): every overlay renders as `kubectl apply -k` reads it.
KUBECTL     ?= kubectl
K8S_OVERLAY ?= data
K8S_TRAIN   ?= train-ascend-2x16
K8S_POD_TESTS := tests/k8s/test_pods_train.py tests/k8s/test_pods_ray.py

.DEFAULT_GOAL := help
.PHONY: help data ablation test test-profile lint status venv lock clean-data autoscale-demo category-model
.PHONY: train train-venv test-train test-faults train-lock
.PHONY: k8s-render k8s-images k8s-data k8s-train
.PHONY: images image-base image-train-cpu image-ascend-smoke local-base compose-data test-containers

help: ## list the targets, by group
	@awk '/^##@ / { printf "\n%s:\n", substr($$0, 5) } \
	     /^[a-z0-9-]+:.*## / { split($$0, part, /:.*## /); printf "  make %-19s %s\n", part[1], part[2] }' $(MAKEFILE_LIST)
	@echo
	@echo "variables: INPUT=<file, folder or glob>  DATA_DIR=$(DATA_DIR)  CONFIG=<yaml>  DEMO_DOCS=<n>  ARGS=<extra flags>"
	@echo "           EVAL_SETS=<evaluation files or folders to remove from the training data (make data)>"
	@echo "           NPROC=$(NPROC) (data-parallel processes for make train)  TRAIN_CONFIG=$(TRAIN_CONFIG)"

##@ data
$(STAMP): $(LOCKS) pyproject.toml
	@test -x $(PY) || $(PYTHON) -m venv $(VENV)
	$(call UV_INSTALL,$(VENV),-r requirements/data.lock -r requirements/dev.lock)
	$(PY) -m stages.clean.compile_kernels
	@rm -f $(VENV)/.installed-*
	@touch $@

venv: $(STAMP) ## create or update .venv (data stages + dev tools)

data: $(STAMP) ## run every data stage: on INPUT if given, else on the built-in demo corpus
	$(PY) -m kiln run --data-dir $(DATA_DIR) \
		$(if $(strip $(INPUT)),--input $(INPUT),--demo $(if $(DEMO_DOCS),--demo-docs $(DEMO_DOCS))) \
		$(if $(strip $(EVAL_SETS)),--eval-sets $(EVAL_SETS)) $(if $(CONFIG),--config $(CONFIG)) $(ARGS)

status: $(STAMP) ## show what each stage under DATA_DIR has done
	$(VENV)/bin/kiln status $(DATA_DIR)

autoscale-demo: $(STAMP) ## redo DATA_DIR's clean stage on a one-machine autoscaling Ray cluster (0 -> N -> 0 clean workers)
	$(PY) -m kiln autoscale-demo --data-dir $(DATA_DIR) $(if $(CONFIG),--config $(CONFIG)) $(ARGS)

category-model: $(STAMP) ## build the default category model mix uses for a corpus without categories (fetches its seed set)
	$(PY) -m kiln category-model $(ARGS)

clean-data: ## delete DATA_DIR
	rm -rf $(DATA_DIR)

lock: ## re-resolve requirements/*.in into requirements/*.lock and the images' locks, with hashes (needs PyPI)
	requirements/lock.sh data $(PYTHON)

##@ train
$(TRAIN_STAMP): requirements/train.lock pyproject.toml
	@test -x $(TRAIN_PY) || $(PYTHON) -m venv $(TRAIN_VENV)
	$(call UV_INSTALL,$(TRAIN_VENV),-r requirements/train.lock)
	@rm -f $(TRAIN_VENV)/.installed-*
	@touch $@

train-venv: $(TRAIN_STAMP) ## create or update .venv-train (MindSpore trainer)

train: $(STAMP) $(TRAIN_STAMP) ## train TRAIN_CONFIG's model on make data's tokens (NPROC=2: data parallel with msrun)
	@test -f $(DATA_DIR)/tokenize/train.bin || { echo "no $(DATA_DIR)/tokenize/train.bin: run make data first"; exit 2; }
ifeq ($(NPROC),1)
	$(TRAIN_PY) -m stages.train --data-dir $(DATA_DIR) --config $(TRAIN_CONFIG) $(ARGS)
else
	$(TRAIN_PY) -m stages.train.launch --nproc $(NPROC) -- --data-dir $(DATA_DIR) --config $(TRAIN_CONFIG) $(ARGS)
endif
	@$(VENV)/bin/kiln report $(DATA_DIR) >/dev/null && echo "  plots           $(DATA_DIR)/report/index.html"

ablation: $(STAMP) $(TRAIN_STAMP) ## train one small model per stage's output (raw, clean, dedup, full) and compare held-out bits per byte
	$(PY) -m kiln ablate --data-dir $(DATA_DIR) --train-python $(TRAIN_PY) \
		$(if $(strip $(INPUT)),--input $(INPUT),--demo $(if $(DEMO_DOCS),--demo-docs $(DEMO_DOCS))) \
		$(if $(CONFIG),--config $(CONFIG)) $(ARGS)

train-lock: ## re-resolve requirements/train.in into requirements/train.lock, with hashes (needs PyPI)
	requirements/lock.sh train $(PYTHON)

##@ test
test: $(STAMP) $(TRAIN_STAMP) ## run the test suite (data stages in .venv, the trainer in .venv-train)
	$(DATA_TESTS) $(PYTEST_ARGS) $(NONE_SELECTED_OK)
	$(RAY_NODE_TESTS) $(PYTEST_ARGS) $(NONE_SELECTED_OK)
	$(TRAIN_TESTS) $(PYTEST_ARGS) $(NONE_SELECTED_OK)

test-train: $(TRAIN_STAMP) ## run only the trainer tests in .venv-train
	$(TRAIN_TESTS) $(PYTEST_ARGS) $(NONE_SELECTED_OK)

test-profile: $(STAMP) $(TRAIN_STAMP) ## make test, then each suite's 50 slowest tests and fixture set-ups
	$(DATA_TESTS) --durations=50 $(PYTEST_ARGS) $(NONE_SELECTED_OK)
	$(RAY_NODE_TESTS) --durations=50 $(PYTEST_ARGS) $(NONE_SELECTED_OK)
	$(TRAIN_TESTS) --durations=50 $(PYTEST_ARGS) $(NONE_SELECTED_OK)

test-faults: $(STAMP) ## the fault-injection suite: kills, a killed Ray worker, a full disk (needs root to mount a tmpfs)
	$(PY) -m pytest tests/faults $(PYTEST_ARGS)

test-containers: $(STAMP) ## hadolint, compose/workflow schemas, then (where Docker runs) images, compose chain, Ascend smoke, k8s pods as containers
	$(PY) -m pytest tests/containers $(K8S_POD_TESTS) $(PYTEST_ARGS)

lint: $(STAMP) ## ruff over the code
	$(VENV)/bin/ruff check .

##@ images
local-base: ## build local/python:3.11-bookworm with debootstrap (for machines that reach no registry)
	stages/base/local-base.sh $(DOCKER)

image-base: ## the shared dependency base of the data-stage images
	$(BUILD) --build-arg BASE_IMAGE=$(BASE_IMAGE) -f stages/base/Dockerfile \
		-t $(IMAGE_PREFIX)/base:$(TAG) -t $(IMAGE_PREFIX)/base:latest .

images: image-base image-train-cpu ## every stage image, tagged with the git revision and latest
	@for stage in $(STAGE_IMAGES); do \
		echo "building $(IMAGE_PREFIX)/$$stage:$(TAG)"; \
		$(BUILD) --build-arg KILN_BASE=$(IMAGE_PREFIX)/base:$(TAG) -f stages/$$stage/Dockerfile \
			-t $(IMAGE_PREFIX)/$$stage:$(TAG) -t $(IMAGE_PREFIX)/$$stage:latest . || exit 1; \
	done

image-train-cpu: ## the CPU trainer image (MindSpore, numpy < 2, no pyarrow)
	$(BUILD) --build-arg BASE_IMAGE=$(BASE_IMAGE) -f stages/train/Dockerfile \
		-t $(IMAGE_PREFIX)/train-cpu:$(TAG) -t $(IMAGE_PREFIX)/train-cpu:latest .

image-ascend-smoke: ## Dockerfile.ascend on BASE_IMAGE instead of the CANN base (a build check that runs on CPU)
	$(BUILD) --build-arg CANN_IMAGE=$(BASE_IMAGE) -f Dockerfile.ascend -t $(IMAGE_PREFIX)/train-ascend-smoke:$(TAG) .

compose-data: ## the data chain in containers on one volume (docker-compose.yml), then its status table
	KILN_TAG=latest $(COMPOSE) up --no-build --remove-orphans
	@for service in $(COMPOSE_CHAIN); do \
		code=$$(KILN_TAG=latest $(COMPOSE) ps -q $$service | xargs -r $(DOCKER) inspect -f '{{.State.ExitCode}}'); \
		[ "$$code" = 0 ] || { echo "compose-data: $$service exited $${code:-without running}"; exit 1; }; \
	done; echo "compose-data: every service of the chain exited 0"
	KILN_TAG=latest $(COMPOSE) run --rm --entrypoint python tokenize -m kiln status /data

##@ k8s
k8s-render: ## print the objects of k8s/overlays/K8S_OVERLAY (default data) as kubectl apply gets them
	@$(KUBECTL) kustomize k8s/overlays/$(K8S_OVERLAY)

k8s-images: ## print the kustomize images: block that points an overlay at IMAGE_PREFIX/<name>:TAG (CI pushes ghcr.io/<owner>/kiln/<name>:<commit>)
	@echo "images:"
	@for name in $(DEPLOY_IMAGES); do echo "  - {name: kiln/$$name, newName: $(IMAGE_PREFIX)/$$name, newTag: \"$(TAG)\"}"; done

k8s-data: ## run the data pipeline on the current kubectl context (KubeRay): one RayJob per stage, in order
	KUBECTL=$(KUBECTL) k8s/run-data.sh

k8s-train: ## apply the training overlay K8S_TRAIN (train-ascend-2x16, train-ascend-1x8, train-cpu, train-volcano, train-ascendjob)
	$(KUBECTL) apply -k k8s/overlays/$(K8S_TRAIN)
