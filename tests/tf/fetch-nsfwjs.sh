#!/bin/sh
# fetch-nsfwjs.sh [CACHE] — fetches nsfwjs 4.4.0 (MIT) with `npm pack`
# into CACHE (npm-fetch.sh: default $PCC_CACHE, else $XDG_CACHE_HOME/pcc,
# else ~/.cache/pcc), checks the tarball against the pinned SHA-256 and
# unpacks its MobileNetV2 graph model (dist/models/mobilenet_v2_mid: a
# TF.js graph model whose model.json and weight shards the package ships
# as browserify bundles) into a plain model.json + shards with node.
# Prints the model directory.  Nothing of it is committed.
NAME=fetch-nsfwjs
PKG=nsfwjs@4.4.0
TGZ=nsfwjs-4.4.0.tgz
SHA256=585cd178f3b994337c4d10a87b080d342fc52f8b9bf0085c4d1f345a3a1c5382
DIR=nsfwjs-4.4.0
after_unpack() {
	mkdir -p "$DIR/mobilenet_v2_mid"
	SRC="$CACHE/$DIR/package/dist/models/mobilenet_v2_mid" OUT="$CACHE/$DIR/mobilenet_v2_mid" node -e '
const fs = require("fs"), src = process.env.SRC, out = process.env.OUT;
const m = require(src + "/model.min.js");
fs.writeFileSync(out + "/model.json", JSON.stringify(m));
for (const g of m.weightsManifest)
	for (const p of g.paths)
		fs.writeFileSync(out + "/" + p,
			Buffer.from(require(src + "/" + p + ".min.js"), "base64"));
' || { echo "fetch-nsfwjs: node could not unpack the model" >&2; exit 1; }
}
. "$(dirname "$0")/npm-fetch.sh"
npm_fetch "$@"
echo "$CACHE/$DIR/mobilenet_v2_mid"
