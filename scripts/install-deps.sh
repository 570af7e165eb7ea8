#!/usr/bin/env bash
# Installs what genbench needs from the distribution's packages, when they are missing and
# we are root with apt-get. Elsewhere it only reports what is missing: CMake then says what
# it could not find. Header-only CLI11 can also come from .deps/ (scripts/stage-deps.sh).
set -uo pipefail
packages=(build-essential cmake ninja-build pkg-config git clang
          libopenmpi-dev openmpi-bin libhdf5-dev libyaml-cpp-dev libgtest-dev libcli11-dev nlohmann-json3-dev
          python3 python3-yaml python3-h5py python3-numpy python3-pandas python3-matplotlib python3-pytest
          python3-nbclient python3-nbformat python3-ipykernel
          slurmctld slurmd slurm-client munge iproute2 util-linux)  # tests/slurm, tests/multinode
# clang's sanitizer and libFuzzer runtimes (their own package on Debian 12) for the ASan stage
apt-cache show libclang-rt-14-dev >/dev/null 2>&1 && packages+=(libclang-rt-14-dev)
missing=()
for p in "${packages[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
if [ ${#missing[@]} -eq 0 ]; then
  echo "install-deps: all packages present"
  exit 0
fi
echo "install-deps: missing ${missing[*]}"
if [ "$(id -u)" -eq 0 ] && command -v apt-get >/dev/null; then
  export DEBIAN_FRONTEND=noninteractive
  if apt-get update -qq && apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null; then
    echo "install-deps: installed ${missing[*]}"
    exit 0
  fi
  # No package registry (e.g. an air-gapped GPU node): carry on with what is there.
  echo "install-deps: apt-get could not install them; continuing with what is installed" >&2
else
  echo "install-deps: not root or no apt-get; install them yourself if the build fails" >&2
fi
exit 0
