# Sourced by .ci/run (and usable by hand: `source tools/ensure-node.sh`): when the machine's Node is
# older than the Node 24 LTS this project needs, fetches Node 24 and npm 11 from the npm registry
# (the `node-linux-<arch>` and `npm` packages, checked against the digests below) into the cache
# and puts them first on PATH. A machine with Node 24 already keeps its own.
NODE_VERSION=24.21.0
NPM_VERSION=11.19.1
declare -A NODE_INTEGRITY=(
  [x64]=sha512-3nULszZ5X0fciYpG0t6TrdApJzAn8+FlINP6OiMX7V8HrvpATPN936U1LlReOJriLRa4e8yEqQBYCnLyPNAs7Q==
  [arm64]=sha512-FpJRPEz2OvvTLfjIOlNGFY9JLPMKgl5m+d4oGYBLg24kJ1mmvN1Zl/HPJgF4HDaJ51ISev1l1cRZ/DM+keXW5g==
)
NPM_INTEGRITY=sha512-ztsxKxt/kkIaAs+2i0GU6I+DRmUdrNasxTZKJe9TCdSjKxlhah/4r/hl5ygMD6XAg1qZ9c2TNomR4qgOydp10g==

if ! node -e 'process.exit(Number(process.versions.node.split(".")[0]) >= 24 ? 0 : 1)' 2>/dev/null; then
  node_dir="${XDG_CACHE_HOME:-$HOME/.cache}/tripwire-service/node-$NODE_VERSION"
  if [ ! -x "$node_dir/bin/node" ]; then
    case "$(uname -m)" in
      x86_64) node_arch=x64 ;;
      aarch64 | arm64) node_arch=arm64 ;;
      *) echo "no Node $NODE_VERSION package for $(uname -m): install Node 24 LTS yourself" >&2; exit 1 ;;
    esac
    echo "[setup] Node $(node --version 2>/dev/null || echo missing) is older than 24: fetching Node $NODE_VERSION and npm $NPM_VERSION from the npm registry…"
    node_tmp=$(mktemp -d)
    (cd "$node_tmp" && npm pack --json "node-linux-$node_arch@$NODE_VERSION" "npm@$NPM_VERSION" >packed.json)
    # npm pack checks each download against the registry's digest; these pins refuse a changed one.
    node -e '
      const [file, ...want] = process.argv.slice(1);
      const got = require(file).map((p) => p.integrity);
      if (want.some((w, i) => w !== got[i])) { console.error("digest mismatch:", got); process.exit(1); }
    ' "$node_tmp/packed.json" "${NODE_INTEGRITY[$node_arch]}" "$NPM_INTEGRITY"
    mkdir -p "$node_tmp/node/lib/node_modules/npm"
    tar -xzf "$node_tmp"/node-linux-*.tgz -C "$node_tmp/node" --strip-components=1
    tar -xzf "$node_tmp"/npm-*.tgz -C "$node_tmp/node/lib/node_modules/npm" --strip-components=1
    ln -s ../lib/node_modules/npm/bin/npm-cli.js "$node_tmp/node/bin/npm"
    ln -s ../lib/node_modules/npm/bin/npx-cli.js "$node_tmp/node/bin/npx"
    mkdir -p "$(dirname "$node_dir")"
    rm -rf "$node_dir"
    mv "$node_tmp/node" "$node_dir"
    rm -rf "$node_tmp"
  fi
  export PATH="$node_dir/bin:$PATH"
fi
echo "[setup] Node $(node --version), npm $(npm --version)"
