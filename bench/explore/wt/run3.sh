set -uo pipefail
site=$(mktemp -d)
python3 -m pip install -q --no-index --no-deps --target "$site" .gpu/wheels/*.whl && export PYTHONPATH=$site
cd bench/explore/wt
timeout 300 python3 -u time_wt.py 2>&1
