#!/usr/bin/env bash
# Install the course site's JavaScript assets, MathJax and Mermaid, from their npm packages into
# docs/assets/vendor/ (ignored by git), so that the built site loads them from itself and renders
# formulas and diagrams on a machine without internet. Idempotent: a second run with the same pins
# does nothing. Called by scripts/setup.sh; run it alone after changing a pin.
#
# Each package is fetched once with `npm pack` (the tarball only, no dependencies: both files used
# here are self-contained bundles), checked against the sha512 pinned below (the integrity npm
# records in a lockfile), and only the files the site loads are kept, with the package's licence:
#   mathjax  es5/tex-svg-full.js   TeX input with every extension built in, SVG output (so no
#                                  font files to serve and nothing loaded on demand)
#   mermaid  dist/mermaid.min.js   the browser bundle; Material for MkDocs uses a global `mermaid`
#                                  when one is defined, instead of fetching its own from a CDN
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
dest="$root/docs/assets/vendor"

# name version sha512-integrity file-in-package file-in-site
pins=(
  "mathjax 3.2.2 sha512-Bt+SSVU8eBG27zChVewOicYs7Xsdt40qm4+UpHyX7k0/O9NliPc+x77k1/FEsPsjKPZGJvtRZM1vO+geW0OhGw== es5/tex-svg-full.js mathjax/tex-svg-full.js"
  "mermaid 11.17.2 sha512-V6K3C8EBdEsPFZXSKMJe6ppQOENxuHARr9GvHX4hh47lAbhMRD9qf4oEK7LoaRQxULMa80/qt5gHO73aCleBBg== dist/mermaid.min.js mermaid/mermaid.min.js"
)
stamp="$dest/VERSIONS"
want=$(printf '%s\n' "${pins[@]}" | awk '{print $1 "@" $2 " " $5}')

if [ -f "$stamp" ] && [ "$(cat "$stamp")" = "$want" ] \
   && awk '{print $2}' "$stamp" | (cd "$dest" && xargs -r ls >/dev/null 2>&1); then
  exit 0
fi
if ! command -v npm >/dev/null 2>&1; then
  echo "site_assets.sh: npm not found; the site's MathJax and Mermaid cannot be installed" \
       "(Debian: apt-get install npm), so mkdocs build will refuse to run" >&2
  exit 1
fi

tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
for pin in "${pins[@]}"; do
  read -r name version integrity inner outer <<<"$pin"
  tarball=$(cd "$tmp" && npm pack --silent "$name@$version")
  got="sha512-$(openssl dgst -sha512 -binary "$tmp/$tarball" | base64 -w0)"
  if [ "$got" != "$integrity" ]; then
    echo "site_assets.sh: $name@$version has integrity $got, pinned $integrity" >&2
    exit 1
  fi
  mkdir -p "$dest/$(dirname "$outer")"
  tar -xzf "$tmp/$tarball" -C "$tmp" "package/$inner" package/LICENSE
  mv "$tmp/package/$inner" "$dest/$outer"
  mv "$tmp/package/LICENSE" "$dest/$(dirname "$outer")/LICENSE"
  rm -rf "$tmp/package"
done
echo "$want" >"$stamp"
echo "site assets: $(echo "$want" | awk '{print $1}' | tr '\n' ' ')in docs/assets/vendor/" >&2
