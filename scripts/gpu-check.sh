#!/usr/bin/env bash
# The whole CUDA check on a GPU machine, in one call (the project's shared notes, GPU.md, say what is there):
#   1. install scipy-openblas32, nlohmann-json and nvidia-cudnn-frontend (Attention's fused path) from
#      .whl/ if the machine lacks them (nothing can be downloaded)
#   2. build dnnx with its CUDA backend: pip install --no-build-isolation --no-deps . (DNNX_CUDA=ON)
#   3. the support matrix's CUDA columns (scripts/gen_operators.py; docs/operators.md into $OUT), then
#      pytest tests/cuda and the CPU-side CUDA checks, then the whole suite (GPU_CHECK_SUITE=0
#      skips the whole suite)
#   4. LeNet's CUDA plans, and its per-layer GPU times (dnnx profile) at batch 1 and 1024
#   5. the benchmarks GPU_CHECK_BENCHES names (default "cuda planner lstm"; "none" for none):
#      cuda: bench_cuda.py, LeNet, dnnx vs PyTorch (separate process); planner: bench_cuda_planner.py,
#      heuristic vs exhaustive; lstm: bench_cuda_lstm.py, 4-layer LSTM vs PyTorch; finetune:
#      bench_cuda_finetune.py, fine-tune steps vs PyTorch; finetune_lstm: bench_cuda_finetune_lstm.py;
#      finetune_resnet: bench_cuda_finetune_resnet.py, ResNet-18's whole-model step vs PyTorch (../shared carried);
#      resnet: bench_resnet_cuda.py, ResNet-50 vs torchvision; load: bench_load.py --device cuda,
#      import + load + first run in a new process vs onnxruntime-gpu (where PYTHONPATH has it) and
#      the bare CUDA floor (ORT_GPU_PATH: where the carried onnxruntime-gpu lies, for the benches only);
#      precision: bench_cuda_precision.py, LeNet at fp32/tf32/fp16/bf16, dnnx vs PyTorch and
#      onnxruntime-gpu (ORT_GPU_PATH as for load);
#      ray: bench_ray.py, images/s through dnnx.ray.predict (1 and 2 CPU actors, 1 GPU actor) vs a
#      direct run (Ray carried in parts, GPU.md, and put on PYTHONPATH for the whole script);
#      background: bench_load.py --cold, ResNet-50 from an empty plan cache to the steady speed per
#      algo_search, beside onnxruntime-gpu's exhaustive search (ORT_GPU_PATH as for load);
#      speed: sweep_cuda_speed.py, the speed sweep of issue #38: every float model of ../shared/external
#      at fp32/tf32/fp16/bf16, batch 1 and 64, dnnx vs onnxruntime-gpu (ORT_GPU_PATH as for load; carry
#      ../shared as for the crash sweep below), each engine in child processes of its own; its own
#      --budget (default 500 s: pass e.g. GPU_CHECK_BENCH_ARGS="--budget 480" in a call of its own, or
#      SPEED_END=560: whatever is left of the script's first 560 s when the sweep starts);
#      int8: bench_cuda_int8.py, ResNet-50 quantized by dnnx.quantize on int8 tensor cores beside dnnx fp16
#      and onnxruntime-gpu on the same QDQ file (issue #37; ORT_GPU_PATH as for load)
#   6. the crash checks GPU_CHECK_CRASH names (issue #34; default none: with the build they fill a
#      device call of their own, docs/testing.md): sweep: bench/sweep.py, every model of
#      ../shared/external on CUDA at fp32, tf32, fp16 and bf16, batches 1, 3 and 0, against
#      onnxruntime (carry ../shared as GPU.md says: without it the stage says "no .onnx file");
#      its report: $OUT/sweep-report.md (in logs.tgz), its failures printed below the summary;
#      fuzz: bench/fuzz.py --device cuda at each of GPU_CHECK_FUZZ_PRECISIONS (default "fp16 bf16"),
#      FUZZ_COUNT (2000) models each; SWEEP_BUDGET and FUZZ_BUDGET (seconds; cases not started by
#      then are reported as not run), SWEEP_JOBS and FUZZ_JOBS (child processes, default 8)
#   7. GPU_CHECK_EXTRA, a command of your own, run from the checkout (e.g. a probe:
#      'python3 bench/probes/probe_cuda_floor.py'; its output: extra.log, whose tail is printed)
#   8. compute-sanitizer memcheck over the glue-kernel tests (last: it may run out of time;
#      MEMCHECK_TIMEOUT=0 skips it)
# Full logs go to $OUT (default ./gpu-check-out); a short summary is printed last.
set -uo pipefail
cd "$(dirname "$0")/.."
OUT=${OUT:-$PWD/gpu-check-out}
mkdir -p "$OUT"
export PYTHONUNBUFFERED=1 CMAKE_BUILD_PARALLEL_LEVEL=${CMAKE_BUILD_PARALLEL_LEVEL:-$(nproc)}
command -v nvcc >/dev/null || export PATH=$PATH:/usr/local/cuda/bin
summary=()
step() {  # step NAME LOG COMMAND...: runs, logs, records pass/fail and the log's last line
  local name=$1 log=$OUT/$2
  shift 2
  local start=$SECONDS
  "$@" >"$log" 2>&1
  local rc=$?
  summary+=("$(printf '%-10s rc=%-3s %4ss  %s' "$name" "$rc" "$((SECONDS - start))" "$(grep -v '^\s*$' "$log" | tail -1)")")
  return $rc
}

{
  date -u
  nvidia-smi --query-gpu=name,driver_version,memory.total --format=csv,noheader
  nvcc --version | tail -2
  python3 -c "import sys, torch, numpy, onnx, onnxruntime; print(sys.version.split()[0], 'torch', torch.__version__, 'numpy', numpy.__version__, 'onnx', onnx.__version__, 'onnxruntime', onnxruntime.__version__)"
  python3 -c "import nvidia.cudnn, nvidia.cu13; print('wheels:', nvidia.cudnn.__path__, nvidia.cu13.__path__)"
} >"$OUT/machine.txt" 2>&1

# The build requirements the GPU image lacks (scipy-openblas32, nlohmann-json), from .whl/
# (carried: `pip download --no-deps -d .whl scipy-openblas32 nlohmann-json` here first).
for pkg in scipy_openblas32 nlohmann_json; do
  if ! python3 -c "import $pkg" 2>/dev/null; then
    step "$pkg" "$pkg.log" python3 -m pip install --no-index --no-deps --no-compile --no-cache-dir .whl/$pkg-*.whl
  fi
done
# cudnn-frontend's headers (a build requirement with DNNX_CUDA=ON), from its wheel for the GPU
# machine's Python 3.12 (carried: `pip download --no-deps --only-binary=:all: --python-version 3.12
# --platform manylinux_2_28_x86_64 -d .whl "nvidia-cudnn-frontend==1.18.*"` here first). Asked of the
# installed metadata, not by import: its Python module needs packages that CMake does not.
if ! python3 -c "import importlib.metadata as m; m.version('nvidia-cudnn-frontend')" 2>/dev/null; then
  step cudnn_frontend cudnn_frontend.log python3 -m pip install --no-index --no-deps --no-compile --no-cache-dir \
    .whl/nvidia_cudnn_frontend-*.whl
fi
# The package metadata names README.md; a checkout without one gets a stub so that pip builds.
[ -f README.md ] || echo "# dnnx" >README.md

if step build build.log env DNNX_CUDA=ON python3 -m pip install -v --no-build-isolation --no-deps .; then
  cd /tmp  # import the installed package, not the source folder
  step status status.log python3 -c "import dnnx; print(dnnx.cuda_status())"
  # The support matrix's CUDA columns, from the CUDA registrations (docs/operators.md, copied to
  # $OUT: commit it when it changed; tests/cuda/test_cuda_support_matrix.py checks it below).
  step matrix matrix.log python3 "$OLDPWD/scripts/gen_operators.py" && cp "$OLDPWD/docs/operators.md" "$OUT/operators.md"
  # GPU_CHECK_PYTEST_ARGS: more pytest arguments (e.g. --deselect ...)
  # GPU_CHECK_TESTS: the test paths (relative to the checkout) to run instead of all of tests/cuda
  # ("none": no CUDA tests, for a call that runs only the crash checks)
  tests=()
  for t in ${GPU_CHECK_TESTS:-tests/cuda tests/test_cuda_status.py}; do [ "$t" != none ] && tests+=("$OLDPWD/$t"); done
  # CUDA_TESTS_END: the script's second by which the CUDA tests must end (default: no limit), so that a
  # device call that must stop at 600 s still ends with its logs and summary
  # A test that kills the process (a segfault) does not end the run: tests/cuda/conftest.py records
  # each test as it goes (progress.txt: starts, outcomes, failure reports), and pytest runs again
  # on the tests not started yet, up to 8 times; the one that crashed reads "crashed" there.
  cuda_tests() {
    local rc=0 attempt
    rm -f "$OUT/progress.txt"
    for attempt in 1 2 3 4 5 6 7 8; do
      local limit=0
      [ -n "${CUDA_TESTS_END:-}" ] && limit=$((CUDA_TESTS_END - SECONDS > 1 ? CUDA_TESTS_END - SECONDS : 1))
      DNNX_TEST_PROGRESS="$OUT/progress.txt" DNNX_TEST_RESUME=$([ $attempt -gt 1 ] && echo 1) timeout "$limit" \
        python3 -m pytest -q -rfEs --tb=short -p no:cacheprovider ${GPU_CHECK_PYTEST_ARGS:-} "${tests[@]}"
      rc=$?
      [ $rc -eq 134 ] || [ $rc -eq 139 ] || break
      echo "== pytest died (rc $rc) in: $(grep -E '^start ' "$OUT/progress.txt" | tail -1); going on after it"
    done
    return $rc
  }
  [ ${#tests[@]} -gt 0 ] && step cuda-tests pytest-cuda.log cuda_tests
  [ "${GPU_CHECK_SUITE:-1}" != 0 ] && step all-tests pytest-all.log python3 -m pytest -q -p no:cacheprovider "$OLDPWD/tests"
  step plan plan.txt python3 -c "import dnnx; from dnnx.examples import build
for search in ('heuristic', 'exhaustive'):
    print('LeNet batch 256, algo_search=' + search)
    print(dnnx.load(build('lenet'), device='cuda', algo_search=search).plan(batch_size=256))"
  lenet=$(mktemp -d)/lenet.onnx  # not in $OUT: only a few files come back from there
  python3 -m dnnx.cli models lenet --out "$lenet" >/dev/null
  step profile profile.txt sh -c "for b in 1 1024; do echo \"LeNet batch \$b\"; \
    python3 -m dnnx.cli profile '$lenet' --device cuda --batch \$b --repeat 50 || exit; done"
  benches=" ${GPU_CHECK_BENCHES:-cuda planner lstm} "
  # name -> script; each writes $OUT/RESULTS_<NAME>.md (the section to paste into bench/RESULTS*.md)
  for name in cuda planner lstm finetune finetune_lstm finetune_resnet resnet load precision ray background speed int8; do
    [[ $benches == *" $name "* ]] || continue
    args=()
    case $name in
      cuda) script=bench_cuda.py ;;
      resnet) script=bench_resnet_cuda.py ;;
      load) script=bench_load.py; args=(--device cuda) ;;
      ray) script=bench_ray.py ;;
      background) script=bench_load.py; args=(--cold --device cuda) ;;
      speed) script=sweep_cuda_speed.py  # SPEED_END: the script's second by which the sweep must end
        [ -n "${SPEED_END:-}" ] && args=(--budget $((SPEED_END - SECONDS > 30 ? SPEED_END - SECONDS : 30))) ;;
      int8) script=bench_cuda_int8.py ;;
      *) script=bench_cuda_$name.py ;;
    esac
    # GPU_CHECK_BENCH_ARGS: more arguments for the benchmarks (one bench per call, say)
    # ORT_GPU_PATH: a folder holding onnxruntime-gpu (carried, GPU.md), put on PYTHONPATH for the
    # benchmarks alone: the tests compare against the machine's CPU onnxruntime in dnnx's process.
    step "$name" "bench-$name.log" env PYTHONPATH="${ORT_GPU_PATH:-${PYTHONPATH:-}}" \
      python3 "$OLDPWD/bench/$script" "${args[@]}" ${GPU_CHECK_BENCH_ARGS:-} --out "$OUT/RESULTS_${name^^}.md"
  done
  # The crash checks (issue #34): each prints its summary line last, which the summary shows.
  crash=" ${GPU_CHECK_CRASH:-} "
  if [[ $crash == *" sweep "* ]]; then
    step sweep sweep.log python3 "$OLDPWD/bench/sweep.py" --device cuda --precision fp32,tf32,fp16,bf16 \
      --batches 1,3,0 --jobs "${SWEEP_JOBS:-8}" --timeout "${SWEEP_TIMEOUT:-300}" --budget "${SWEEP_BUDGET:-360}" \
      --report "$OUT/sweep-report.md"
  fi
  if [[ $crash == *" fuzz "* ]]; then
    for precision in ${GPU_CHECK_FUZZ_PRECISIONS:-fp16 bf16}; do
      step "fuzz-$precision" "fuzz-$precision.log" python3 "$OLDPWD/bench/fuzz.py" --device cuda \
        --precision "$precision" --count "${FUZZ_COUNT:-2000}" --jobs "${FUZZ_JOBS:-8}" --budget "${FUZZ_BUDGET:-240}"
    done
  fi
  # GPU_CHECK_EXTRA: one more command (a probe), run from the checkout, its output in extra.log
  [ -n "${GPU_CHECK_EXTRA:-}" ] && step extra extra.log sh -c "cd '$OLDPWD' && $GPU_CHECK_EXTRA"
  [ "${MEMCHECK_TIMEOUT:-150}" -gt 0 ] && step memcheck memcheck.log timeout "${MEMCHECK_TIMEOUT:-150}" \
    compute-sanitizer --tool memcheck --error-exitcode 9 python3 -m pytest -q -x -p no:cacheprovider \
    "$OLDPWD/tests/cuda/test_cuda_ops.py" "$OLDPWD/tests/cuda/test_cuda_lstm.py" "$OLDPWD/tests/cuda/test_cuda_graphs.py" \
    -k "binary or transpose or concat or max_pool or asymmetric or zero_length or layouts or replay or recaptures"
  cd "$OLDPWD"
fi

echo
echo "== logs in $OUT"
cat "$OUT/machine.txt"
grep -E "dnnx: CUDA|DNNX_CUDA" "$OUT/build.log" | head -3
printf '%s\n' "${summary[@]}"
[ -f "$OUT/plan.txt" ] && cat "$OUT/plan.txt"
[ -f "$OUT/profile.txt" ] && cat "$OUT/profile.txt"
for results in "$OUT"/RESULTS_*.md; do
  [ -f "$results" ] && grep -E "^\||^- targets?|^Target" "$results"
done
[ -f "$OUT/extra.log" ] && tail -n "${GPU_CHECK_EXTRA_TAIL:-40}" "$OUT/extra.log"
# the crash sweep's failures (its table) and the fuzz's findings, shortened
[ -f "$OUT/sweep.log" ] && sed -n '/^outcome /,/^report:/p' "$OUT/sweep.log" | head -n "${SWEEP_TAIL:-40}"
for log in "$OUT"/fuzz-*.log; do [ -f "$log" ] && grep -E "^  (crash|hang|unclean error|slow refusal):" "$log" | head -10; done
grep -E "^crashed " "$OUT/progress.txt" 2>/dev/null
# each failure with its last E line (progress.txt keeps them even where pytest died)
awk '/^failed /{if (f) print f" :: "e; f=$2; e=""} /^    E /{e=$0} END{if (f) print f" :: "e}' "$OUT/progress.txt" 2>/dev/null |
  sed 's/  */ /g' | cut -c1-300 | head -${FAILED_TAIL:-40}
grep -E "^(FAILED|ERROR)" "$OUT/pytest-cuda.log" 2>/dev/null | head -${FAILED_TAIL:-15}
# the tracebacks of failures, shortened, so that the reply's tail shows why
sed -n '/^=* FAILURES =*$/,/short test summary/p' "$OUT/pytest-cuda.log" 2>/dev/null | grep -E "^(___|E |tests/|[^ ].*:[0-9]+: )" | head -60
grep -E "^=* ?[0-9]+ (passed|failed)|^=+ .*(passed|failed|error)" "$OUT/pytest-cuda.log" 2>/dev/null | tail -1
# Only a few files come back from the device tool's $OUT: the logs travel as one archive beside
# the RESULTS_*.md sections.
(cd "$OUT" && ls | grep -v -e '^RESULTS_.*\.md$' -e '^logs\.tgz$' | tar czf logs.tgz --remove-files -T -) 2>/dev/null
