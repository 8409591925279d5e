#!/usr/bin/env bash
# Source me with `peer` (a name) and `packages` (pip requirements) set: the peer gets a virtual
# environment of its own under $PEERS_HOME (default ~/.cache/nmt-peers) with the same pinned CPU
# torch as nmt, once; then the shell moves into the peer's work folder with the data prepared
# (prepare_data.sh), and `venv`, `work` and `here` name the folders.
home=${PEERS_HOME:-$HOME/.cache/nmt-peers}
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
venv=$home/$peer-venv
work=$home/$peer-bench
if [ ! -f "$venv/.ok" ]; then
  python3 -m venv "$venv"
  "$venv/bin/pip" install -q torch==2.13.0
  # shellcheck disable=SC2086  # a list of requirements
  "$venv/bin/pip" install -q $packages
  touch "$venv/.ok"
fi
mkdir -p "$work" && cd "$work"
PY=$venv/bin/python source "$here/prepare_data.sh"
