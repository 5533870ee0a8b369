#!/usr/bin/env bash
# Adds the wheel cl_kernels (gen.py's spec: cl_gemm.cu's product written with the gptq
# accessor and `launch ... cluster(CK)`) to .gpu/wheels, for time_cl.py (SASS and PTX for
# sm_90a, as every explorer wheel).
set -euo pipefail
cd "$(dirname "$0")/../../.."
bench/explore/generated-wheel.sh cl
