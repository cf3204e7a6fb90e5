# shellcheck shell=bash
# Source on the GPU machine, from the repository root, after scripts/pack_for_gpu.sh
# packed .carry/ here:  source scripts/on_gpu_env.sh
# Makes the packed libsluice and its Debian libraries findable, and puts the packed
# CLI on PATH.
_sl_root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
export LD_LIBRARY_PATH="$_sl_root/.carry/lib${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"
[[ -d $_sl_root/.carry/build-gpu/cli ]] && export PATH="$_sl_root/.carry/build-gpu/cli:$PATH"
unset _sl_root
