#!/usr/bin/env bash
# Assembles the dashboard site (www/ plus the built package) in target/demo-site.
set -euo pipefail
cd "$(dirname "$0")/.."
site=target/demo-site
rm -rf "$site" && mkdir -p "$site"
cp -R www/. "$site/"
cp -R pkg "$site/pkg"
