# Two commands get a fresh Debian/Ubuntu machine running:  make demo  and  make test.
# Each installs what is missing: the system packages (with apt when root), a .venv, and
# `pip install -e '.[test,distributed]'`.

PYTHON ?= python3
VENV := .venv
PY := $(VENV)/bin/python
SYSTEM_PACKAGES := mesa-vulkan-drivers libvulkan1 spirv-tools spirv-headers vulkan-validationlayers
PYTEST_ARGS ?=

.PHONY: demo test test-distributed test-pythons bench system venv grammar shaders clean

demo: venv
	$(PY) examples/quickstart.py

# The whole suite on the default device (the host backend where no GPU is found, or what
# PYKERN_DEVICE names), then the same kernel, op and tensor tests on a Vulkan device
# (PYKERN_DEVICE=vulkan: lavapipe where no GPU is found), so that both CPU paths run them:
#   - the tensor library's tests (the random-kernel differential test runs each kernel on the
#     host, the Vulkan device and the interpreter in the main pass already), and those of the
#     "pykern" PyTorch device (tests/torch: PyTorch programs on the Vulkan device);
#   - the kernel tests in two passes under the Vulkan validation layer, where any validation
#     error fails the test that caused it (lavapipe hides both kinds of bug): with
#     synchronisation validation (missing or wrong barriers, misuse of the API), then with
#     GPU-assisted validation (shader accesses outside a buffer).
# (tests/runtime runs under the layer with synchronisation validation in the main pass already;
# it runs once more with host-device copies on the DMA path, PYKERN_TRANSFER_QUEUE=compute,
# which GPUs with a transfer queue take and lavapipe, with none, otherwise never would.)
# VULKAN=0 skips the Vulkan passes (e.g. where no Vulkan driver is installed); VALIDATE=0 skips
# the validated ones; GPU_AV=0 only the second of them.
VULKAN ?= 1
VALIDATE ?= 1
GPU_AV ?= 1
VULKAN_TESTS := tests/tensor tests/linalg tests/fft tests/autograd tests/nn tests/optim tests/io tests/ops tests/torch
VALIDATED_TESTS := tests/kernels --deselect tests/kernels/test_random_kernels.py
SYNC_VALIDATION := VK_VALIDATION_FEATURE_ENABLE_SYNCHRONIZATION_VALIDATION_EXT
GPU_ASSISTED := VK_VALIDATION_FEATURE_ENABLE_GPU_ASSISTED_EXT

# One more pass on the Vulkan device, as shell commands: $(call vulkan_pass,LABEL,ENV,TESTS).
# It exits the recipe when its pytest fails, and with 1 when it collected no tests (exit 5).
vulkan_pass = echo "make test: $(1)"; \
	PYKERN_DEVICE=vulkan $(2) $(PY) -m pytest -q $(3); rc=$$?; \
	if [ $$rc -eq 5 ]; then echo "make test: the pass ($(1)) collected no tests"; exit 1; fi; \
	if [ $$rc -ne 0 ]; then exit $$rc; fi

# The main pass and the chain of Vulkan passes each keep one core busy (nearly all of the
# suite's time is single-threaded Python: compiling and checking), so on a machine with two or
# more cores they run side by side; the Vulkan chain's output is kept and shown after the main
# pass's. JOBS=1 runs them one after the other.
JOBS ?= $(shell nproc 2>/dev/null || echo 1)

vulkan_chain = $(call vulkan_pass,tensor tests again on the Vulkan device,,$(VULKAN_TESTS)); \
	$(call vulkan_pass,runtime tests again with copies on the DMA path,PYKERN_TRANSFER_QUEUE=compute,tests/runtime tests/test_graph.py); \
	if [ "$(VALIDATE)" != 1 ]; then exit 0; fi; \
	$(call vulkan_pass,kernel tests again under synchronisation validation,PYKERN_VALIDATE=1 VK_LAYER_ENABLES=$(SYNC_VALIDATION),$(VALIDATED_TESTS)); \
	if [ "$(GPU_AV)" != 1 ]; then exit 0; fi; \
	$(call vulkan_pass,kernel tests again under GPU-assisted validation,PYKERN_VALIDATE=1 VK_LAYER_ENABLES=$(GPU_ASSISTED),$(VALIDATED_TESTS))

# The distributed tests (tests/distributed/spmd) run as MPI jobs, every rank running every test
# (alone, outside mpiexec, they skip): with 2 and 3 ranks on the host device, then 2 on the
# Vulkan device (lavapipe where no GPU is found), twice: the second time with host-device
# copies on the DMA path (as a GPU's transfer queue takes them, while MPI moves other pieces
# of the tensor), through the mpiexec of the MPICH wheel that
# the 'distributed' extra installs into the venv. The ranks share one compile cache. These
# passes run after the others: each job keeps every core busy. DISTRIBUTED=0 skips them.
# -disable-auto-cleanup: the suite's last test breaks a group on purpose, after which a rank
# ends without MPI_Finalize (pykern.distributed.mpi), which MPICH's launcher would otherwise
# take for a crash and answer by killing the ranks still exiting.
DISTRIBUTED ?= 1
MPIEXEC := $(VENV)/bin/mpiexec -disable-auto-cleanup
DISTRIBUTED_TESTS := tests/distributed/spmd
distributed_pass = echo "make test: $(1)"; \
	$(2) PYKERN_TIMEOUT=120 PYKERN_CACHE_DIR=$$cache $(MPIEXEC) -n $(3) \
	  $(PY) -m pytest -q -p no:cacheprovider $(DISTRIBUTED_TESTS); rc=$$?; \
	if [ $$rc -eq 5 ]; then echo "make test: the pass ($(1)) collected no tests"; exit 1; fi; \
	if [ $$rc -ne 0 ]; then exit $$rc; fi
distributed_chain = if [ "$(DISTRIBUTED)" != 1 ]; then exit 0; fi; \
	cache=$$(mktemp -d); trap 'rm -rf $$cache' EXIT; \
	$(call distributed_pass,distributed tests: 2 ranks on the host device,,2); \
	$(call distributed_pass,distributed tests: 3 ranks on the host device,,3); \
	if [ "$(VULKAN)" != 1 ]; then exit 0; fi; \
	$(call distributed_pass,distributed tests: 2 ranks on the Vulkan device,PYKERN_DEVICE=vulkan,2); \
	$(call distributed_pass,distributed tests: 2 ranks on the Vulkan device with copies on the DMA path,PYKERN_DEVICE=vulkan PYKERN_TRANSFER_QUEUE=compute,2)

test: venv
	@main_pass() { $(PY) -m pytest -q $(PYTEST_ARGS); rc=$$?; \
	  if [ $$rc -eq 5 ]; then echo "make test: pytest collected no tests (exit 5): treating as failure"; return 1; fi; \
	  return $$rc; }; \
	if [ "$(VULKAN)" != 1 ]; then main_pass || exit $$?; ( $(distributed_chain) ); exit $$?; fi; \
	if [ "$(JOBS)" -le 1 ]; then main_pass || exit $$?; ( $(vulkan_chain) ) || exit $$?; \
	  ( $(distributed_chain) ); exit $$?; fi; \
	log=$$(mktemp); ( $(vulkan_chain) ) > $$log 2>&1 & chain=$$!; \
	main_pass; rc=$$?; wait $$chain; vrc=$$?; \
	echo "make test: the Vulkan passes (run alongside the main pass):"; cat $$log; rm -f $$log; \
	if [ $$rc -ne 0 ]; then exit $$rc; fi; if [ $$vrc -ne 0 ]; then exit $$vrc; fi; \
	( $(distributed_chain) ); exit $$?

# The distributed passes of `make test` alone.
test-distributed: venv
	@( $(distributed_chain) )

# A smoke subset of the suite on every Python this machine has that pyproject.toml supports
# (pyenv's 3.x, or PYTHONS="..." by hand), each in its own venv under .venvs/ (kept between
# runs, so only the first run installs). Not part of `make test`: it takes a few minutes.
PYTHONS ?= $(wildcard $(HOME)/.pyenv/versions/3.*/bin/python3)
SMOKE_TESTS ?= tests/kernels/test_language.py tests/tensor/test_tensor.py tests/test_packaging.py

test-pythons: system
	@failed=""; ran=""; \
	for py in $(PYTHONS); do \
	  ver=$$($$py -c 'import sys; print("%d.%d" % sys.version_info[:2])'); \
	  if ! $$py -c 'import sys; sys.exit(sys.version_info < (3, 10))'; then \
	    echo "test-pythons: $$py is $$ver, older than requires-python: skipped"; continue; fi; \
	  venv=.venvs/$$ver; \
	  if [ ! -f $$venv/.installed ] || [ pyproject.toml -nt $$venv/.installed ]; then \
	    $$py -m venv $$venv && $$venv/bin/python -m pip install -q -e '.[test]' \
	      && touch $$venv/.installed || { failed="$$failed $$ver(install)"; continue; }; fi; \
	  echo "test-pythons: Python $$ver"; ran="$$ran $$ver"; \
	  $$venv/bin/python -m pytest -q -p no:cacheprovider $(SMOKE_TESTS) || failed="$$failed $$ver"; \
	done; \
	echo "test-pythons: ran on$$ran"; \
	if [ -z "$$ran" ]; then echo "test-pythons: no supported Python found"; exit 1; fi; \
	if [ -n "$$failed" ]; then echo "test-pythons: failed on$$failed"; exit 1; fi

bench: venv
	$(PY) -m benchmarks $(BENCH_ARGS)

# System packages: installed with apt when running as root, otherwise the exact command is printed.
system:
	@missing=""; \
	for p in $(SYSTEM_PACKAGES); do \
	  dpkg-query -W -f='$${Status}' $$p 2>/dev/null | grep -q "ok installed" || missing="$$missing $$p"; \
	done; \
	$(PYTHON) -c "import ensurepip, venv" 2>/dev/null || missing="$$missing python3-venv"; \
	if [ -n "$$missing" ]; then \
	  if ! command -v apt-get >/dev/null; then \
	    echo "missing system packages:$$missing (install their equivalents, then re-run)"; exit 1; \
	  elif [ "$$(id -u)" = 0 ]; then \
	    echo "installing:$$missing"; \
	    apt-get update -q && DEBIAN_FRONTEND=noninteractive apt-get install -y -q $$missing; \
	  else \
	    echo "missing system packages; run:"; \
	    echo "  sudo apt-get update && sudo apt-get install -y$$missing"; exit 1; \
	  fi; \
	fi

venv: system $(VENV)/.installed

$(VENV)/.installed: pyproject.toml
	test -x $(PY) || $(PYTHON) -m venv $(VENV)
	@# this project was once installed under the name pykern, which is another project's: the
	@# old entry would shadow the new one (both provide `import pykern`)
	$(PY) -m pip uninstall -q -y pykern 2>/dev/null || true
	$(PY) -m pip install -q -e '.[test,distributed]'
	touch $@

# Regenerate the SPIR-V enum module from the Khronos grammar (Debian spirv-headers).
grammar: venv
	$(PY) -m pykern.spirv.encoding.generate_grammar

clean:
	rm -rf $(VENV) .venvs build dist *.egg-info .pytest_cache
